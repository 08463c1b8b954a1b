"""Sessions as the measuring verbs read them: one side of a split, each with the manifest it is read under.

`ceiling`, `replay`, `costs`, `calibrate` and `sweep` all read session folders the same way: keep
the chosen side of the task split (judged from the header alone, before the rest is read), take a
manifest given for the session's app over the one in its header, and sum up the malformed lines
the reader skipped. A session with no manifest at all is an InputError naming its file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator, Sequence, TextIO

from stretto_core.errors import InputError, StrettoError
from stretto_core.sessions.manifest import ManifestError, ToolManifest, load_manifest
from stretto_core.sessions.model import Session
from stretto_core.sessions.order import SeenIds
from stretto_core.sessions.splits import SPLITS, SplitFile, split_of
from stretto_core.sessions.store import ReadReport, iter_session_files, read_header, read_session


def manifest_for_app(manifests: Sequence[ToolManifest], app: str | None) -> ToolManifest | None:
    """The manifest given for an app: the only one given, or the one whose `app` names it."""
    if len(manifests) == 1:
        return manifests[0]
    for manifest in manifests:
        if manifest.app and app and (manifest.app == app or manifest.app.rsplit("/", 1)[-1] == app.rsplit("/", 1)[-1]):
            return manifest
    return None


def load_manifests(paths: Sequence[str | Path]) -> list[ToolManifest]:
    """Read manifest files, turning a bad one into a StrettoError that names it."""
    try:
        return [load_manifest(p) for p in paths]
    except ManifestError as exc:
        raise StrettoError(str(exc)) from exc


def sessions_with_manifests(paths: Sequence[str | Path], split: str = "all", split_file: SplitFile | None = None,
                            manifests: Sequence[ToolManifest] = (),
                            warn: TextIO | None = sys.stderr) -> Iterator[tuple[Session, ToolManifest]]:
    """Every session under the paths on the chosen side of the split, with the manifest to read it under."""
    if split not in ("all", *SPLITS):
        raise StrettoError(f"unknown split {split!r}: use train, test, none or all")
    skipped_lines = skipped_files = 0
    seen = SeenIds()
    for path in iter_session_files(list(paths)):
        if split != "all" and split_of(read_header(path), split_file) != split:
            continue
        report = ReadReport(str(path))
        session = read_session(path, report)
        if report.skipped:
            skipped_lines += len(report.skipped)
            skipped_files += 1
        seen.check(session.session_id, str(path))
        manifest = manifest_for_app(manifests, session.header.app) or session.header.manifest
        if manifest is None:
            raise InputError(str(path), f"session {session.session_id} has no manifest in its header "
                                        f"(app {session.header.app or 'unnamed'}); pass --manifest FILE")
        yield session, manifest
    if skipped_lines and warn is not None:
        print(f"stretto: skipped {skipped_lines} malformed event line(s) in {skipped_files} file(s)", file=warn)
