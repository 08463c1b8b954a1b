"""`stretto ingest`: published trajectories of a benchmark into session files, with a count to check."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._values import output_folder
from stretto_core.errors import StrettoError, snippet
from stretto_core.sessions.jsonfile import output_path, write_text_file
from stretto_core.sessions.ingest import CONVERTERS, IngestReport, ingest_files
from stretto_core.sessions.ingest.report import Counts

Source = Enum("Source", {name: name for name in CONVERTERS}, type=str)  # type: ignore[misc]

MAX_LISTED = 20
"""Skipped records are listed one by one up to this many; past it, grouped by kind."""


def ingest(
    source: Source = typer.Argument(..., help="Which format the files are in."),
    paths: List[Path] = typer.Argument(..., help="Files, or folders searched for *.json (*.csv for workbench)."),
    out: Path = typer.Option(..., "--out", help="Folder to write one <session id>.jsonl per episode into."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the summary as JSON here."),
    manifest: Optional[Path] = typer.Option(None, "--manifest",
                                            help="The manifest of the harness that recorded the runs: it replaces the shipped one."),
    by_file: bool = typer.Option(False, "--by-file", help="Print the counts of every file."),
) -> None:
    """Convert recorded episodes into stretto sessions, one file each; print what was read and skipped."""
    if out.exists() and not out.is_dir():
        raise StrettoError(f"{out}: is a file; --out is the folder the sessions are written into")
    output_folder(out, "--out")
    if json_out is not None:
        output_path(json_out, "summary")
    report = ingest_files(source.value, paths, out, manifest=manifest)
    _print(report, by_file)
    if json_out is not None:
        write_text_file(json_out, _summary_json(report), "summary")
        typer.echo(f"summary written to {json_out}")
    if report.totals.episodes == 0:
        first = report.skipped[0].message if report.skipped else "no episodes in " + ", ".join(map(str, paths))
        more = f" (and {len(report.skipped) - 1} more, above)" if len(report.skipped) > 1 else ""
        raise StrettoError(f"nothing could be read: {snippet(' '.join(first.split()), 300)}{more}")


def _line(counts: Counts) -> str:
    user = f" (+{counts.user_calls} by the user)" if counts.user_calls else ""
    open_calls = f", {counts.unanswered_calls} without a result" if counts.unanswered_calls else ""
    return (f"{counts.episodes} episodes, {counts.llm_turns} LLM turns, {counts.tool_calls} tool calls{user}, "
            f"{counts.tool_results} results{open_calls}")


def _print(report: IngestReport, by_file: bool) -> None:
    total = report.totals
    readable = sum(1 for f in report.files if not f.unreadable)
    typer.echo(f"{report.source}: {readable} of {len(report.files)} files read, {_line(total)} "
               f"-> {report.sessions_written} sessions in {report.out_dir} ({report.seconds:.1f} s)")
    if by_file:
        for counts in report.files:
            state = "UNREADABLE" if counts.unreadable else _line(counts)
            skipped = f", {counts.skipped} skipped" if counts.skipped and not counts.unreadable else ""
            typer.echo(f"  {counts.path}: {state}{skipped}")
    for key, n in sorted(report.notes.items()):
        typer.echo(f"  note: {n} × {key}")
    for problem in report.manifest_problems:
        typer.echo(f"  manifest: {problem}")
    if not report.skipped:
        typer.echo("skipped: none")
        return
    typer.echo(f"skipped: {len(report.skipped)} record(s)")
    if len(report.skipped) <= MAX_LISTED:
        for record in report.skipped:
            typer.echo(f"  [{record.kind}] {record.message}")
        return
    for kind, records in sorted(report.skipped_by_kind().items(), key=lambda kv: -len(kv[1])):
        reasons: dict[str, int] = {}
        for record in records:
            reasons[record.reason] = reasons.get(record.reason, 0) + 1
        typer.echo(f"  {len(records)} × {kind}")
        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:5]:
            typer.echo(f"    {n} × {reason}   e.g. {_example(records, reason)}")
        if len(reasons) > 5:
            typer.echo(f"    ... and {len(reasons) - 5} more reasons (see --json)")


def _example(records, reason: str) -> str:
    first = next(r for r in records if r.reason == reason)
    return f"{first.path}:{first.line}" if first.line is not None else first.path


def _summary_json(report: IngestReport) -> str:
    data = report.model_dump(mode="json")
    data["totals"] = report.totals.model_dump(mode="json")
    data["skipped"] = [dict(r.model_dump(mode="json"), message=r.message) for r in report.skipped]
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
