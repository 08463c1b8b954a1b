"""Published trajectories into stretto sessions: one converter per source, one way to run them.

Each converter reads one file of its source into sessions (`common.FileResult`); `ingest_files`
finds the files, runs the converter, writes one `.jsonl` per episode and counts what it read and
skipped, so that every call of the source can be accounted for. A file or record that cannot be
read is skipped and reported with its file and line; it never stops the rest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from stretto_core.errors import InputError
from stretto_core.sessions.ingest import agentdojo, otel, tau2, workbench
from stretto_core.sessions.ingest.common import FileResult, ManifestSource, SkippedRecord, load_override
from stretto_core.sessions.ingest.report import Counts, IngestReport
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.store import write_session
from stretto_core.progress import track


@dataclass(frozen=True)
class Converter:
    """A source: its name, the files it reads, and the function that reads one."""

    name: str
    suffix: str
    convert: Callable[[Path, ManifestSource], FileResult]
    description: str


CONVERTERS: dict[str, Converter] = {
    "tau2": Converter("tau2", ".json", tau2.convert, "τ²-bench results JSON (and harnesses in its format)"),
    "agentdojo": Converter("agentdojo", ".json", agentdojo.convert, "AgentDojo run JSON, one run per file"),
    "workbench": Converter("workbench", ".csv", workbench.convert, "WorkBench results CSV (LangChain reprs)"),
    "otel": Converter("otel", ".json", otel.convert, "OpenTelemetry GenAI spans, OTLP/JSON (one request per file or line)"),
}


def converter(source: str) -> Converter:
    try:
        return CONVERTERS[source]
    except KeyError:
        raise InputError(source, f"unknown source; one of {', '.join(CONVERTERS)}") from None


def input_files(paths: Iterable[str | Path], suffix: str, report: IngestReport) -> list[Path]:
    """The files to read: files as given, folders searched for `*<suffix>`; each file once."""
    found: list[Path] = []
    seen: set[Path] = set()
    for entry in paths:
        p = Path(entry)
        if p.is_dir():
            candidates = sorted(q for q in p.rglob(f"*{suffix}") if q.is_file())
        elif p.is_file():
            candidates = [p]
        else:
            report.skipped.append(SkippedRecord(str(p), "no such file or directory", kind="missing input"))
            continue
        for q in candidates:
            key = q.resolve()
            if key not in seen:
                seen.add(key)
                found.append(q)
    return found


def ingest_files(source: str, paths: Iterable[str | Path], out_dir: str | Path,
                 manifest: ToolManifest | str | Path | None = None) -> IngestReport:
    """Convert every episode in `paths` into a session file under `out_dir`, and report the counts.

    `manifest` replaces the shipped manifests: every session is ingested under it alone.
    """
    conv = converter(source)
    manifests = ManifestSource(load_override(manifest))
    report = IngestReport(source=source, out_dir=str(out_dir))
    started = time.perf_counter()
    written: dict[str, str] = {}
    for path in track(input_files(paths, conv.suffix, report), f"ingest {source}", unit="file"):
        counts = Counts(path=str(path))
        try:
            result = conv.convert(path, manifests)
        except InputError as exc:
            counts.unreadable = True
            counts.skipped = 1
            report.skipped.append(SkippedRecord.from_error(exc, "unreadable file"))
            report.files.append(counts)
            continue
        for session in result.sessions:
            sid = session.header.session_id
            if sid in written:
                result.skipped.append(SkippedRecord(str(path), f"session id {sid} was already written from "
                                                    f"{written[sid]}", kind="duplicate episode",
                                                    where=session.header.source))
                continue
            try:
                write_session(session, out_dir)
            except InputError as exc:
                result.skipped.append(SkippedRecord.from_error(exc, "unwritable episode", where=session.header.source))
                continue
            written[sid] = session.header.source or str(path)
            counts.add_session(session)
        counts.skipped = len(result.skipped)
        report.skipped.extend(result.skipped)
        report.add_notes(result.notes)
        report.files.append(counts)
    report.sessions_written = len(written)
    report.manifest_problems = list(manifests.problems)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


__all__ = ["CONVERTERS", "Converter", "IngestReport", "Counts", "SkippedRecord", "converter", "ingest_files"]
