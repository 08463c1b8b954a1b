"""What the replay and cost commands read: session folders (one side of a split), flows, replays.

Errors name the file and what is wrong; a malformed event line is skipped and counted, as
everywhere sessions are read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence, TextIO

from pydantic import ValidationError

from stretto_core.errors import InputError, StrettoError
from stretto_core.manifest import ToolManifest
from stretto_core.measure.ceiling import manifest_for_app
from stretto_core.replay_episode import PreparedEpisode, prepare_session
from stretto_core.replay_rows import ReplayResult
from stretto_core.speculator import FlowModel
from stretto_core.splits import SPLITS, SplitFile, split_of
from stretto_core.store import ReadReport, iter_session_files, read_session


def load_episodes(paths: Sequence[str | Path], split: str = "all", split_file: SplitFile | None = None,
                  manifests: Sequence[ToolManifest] = (), warn: TextIO | None = sys.stderr) -> list[PreparedEpisode]:
    """Every session under the paths on the chosen side of the split, indexed for replay.

    A manifest given for a session's app wins over its header's; a session with neither is an
    InputError naming its file.
    """
    if split not in ("all", *SPLITS):
        raise StrettoError(f"unknown split {split!r}: use train, test, none or all")
    out: list[PreparedEpisode] = []
    skipped_lines = skipped_files = 0
    for path in iter_session_files(list(paths)):
        report = ReadReport(str(path))
        session = read_session(path, report)
        if report.skipped:
            skipped_lines += len(report.skipped)
            skipped_files += 1
        if split != "all" and split_of(session.header, split_file) != split:
            continue
        manifest = manifest_for_app(manifests, session.header.app) or session.header.manifest
        if manifest is None:
            raise InputError(str(path), f"session {session.session_id} has no manifest in its header "
                                        f"(app {session.header.app or 'unnamed'}); pass --manifest FILE")
        out.append(prepare_session(session, manifest))
    if skipped_lines and warn is not None:
        print(f"stretto: skipped {skipped_lines} malformed event line(s) in {skipped_files} file(s)", file=warn)
    return out


def load_flow_model(path: str | Path) -> FlowModel:
    """A flow file, ready to serve."""
    from stretto_core.flow import load_flow
    from stretto_core.flow_runtime import FlowRuntime

    return FlowRuntime(load_flow(path))


def load_replay(path: str | Path) -> ReplayResult:
    """A replay's JSON, as `stretto replay --json` writes it."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(p), f"cannot read: {exc.strerror or exc}") from exc
    try:
        return ReplayResult.model_validate_json(text)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ()))
        raise InputError(str(p), f"not a stretto replay: {where + ': ' if where else ''}{err.get('msg')}") from exc


def save_replay(result: ReplayResult, path: str | Path) -> Path:
    """Write a replay as JSON (totals first, then the rows)."""
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(result.model_dump_json(indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise StrettoError(f"{p}: cannot write the replay: {exc.strerror or exc}") from exc
    return p
