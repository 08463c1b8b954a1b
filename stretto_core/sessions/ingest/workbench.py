"""WorkBench result CSVs into sessions: one row, one query run by a LangChain ReAct agent, is one session.

`results/<domain>/<model>_<toolset>_<date>.csv` has columns `query, function_calls, full_response,
error`. `full_response` is the repr of the agent's run (see `pyrepr.py`); each intermediate step
is one LLM turn that made one call, and the run's `output` is a last turn, the reply. Rows whose
run crashed hold no `full_response`: there is nothing to convert, so they are skipped and reported.
The task id is the query's row in WorkBench's own `queries_and_answers` file, so every model's run
of a query shares it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from stretto_core.errors import InputError, snippet
from stretto_core.sessions.ingest.common import (EpisodeBuilder, FileResult, ManifestSource, SkippedRecord,
                                        attach_manifest, file_tag, make_session_id)
from stretto_core.sessions.ingest.pyrepr import ReprError, jsonable, parse_agent_run
from stretto_core.paths import data_root
from stretto_core.sessions.model import Session, SessionHeader

BENCHMARK = "workbench"
HARNESS = "workbench"
COLUMNS = ("query", "full_response")
STOPPED = "Agent stopped due to iteration limit or time limit."
"""LangChain's own output when the agent ran out of steps: no LLM wrote it."""
INVALID_TOOL = "is not a valid tool, try one of"
MAX_LABEL = 200
MAX_HEADER_CHARS = 64 * 1024
"""A results CSV's first line names a few columns; a longer one is not a header."""

_NAME = re.compile(r"^(?P<model>.+)_(?P<toolset>[^_]+)_(?P<date>\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2})$")


def _raise_field_limit() -> None:
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 2


def name_parts(path: Path) -> tuple[str, str | None, str | None]:
    """(model, toolset, date) of `<model>_<toolset>_<date>.csv`; the stem as model when not so named."""
    match = _NAME.match(path.stem)
    if not match:
        return path.stem, None, None
    return match["model"], match["toolset"], match["date"]


@lru_cache(maxsize=None)
def _query_rows(root: str, domain: str) -> dict[str, int]:
    """Query text -> its row (0-based, header excluded) in WorkBench's queries_and_answers file."""
    path = Path(root) / BENCHMARK / "processed" / "queries_and_answers" / f"{domain}_queries_and_answers.csv"
    rows: dict[str, int] = {}
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            for i, row in enumerate(csv.DictReader(fh)):
                rows.setdefault((row.get("query") or "").strip(), i)
    except (OSError, csv.Error, UnicodeDecodeError):
        return {}
    return rows


def task_id_of(query: str, domain: str) -> str:
    """`<domain>-<row>` when WorkBench lists the query, else `q-` and a hash of its text."""
    row = _query_rows(str(data_root()), domain).get(query.strip())
    if row is not None:
        return f"{domain}-{row}"
    return "q-" + hashlib.sha1(query.encode("utf-8")).hexdigest()[:12]


def convert(path: Path, manifests: ManifestSource) -> FileResult:
    """Every row of one WorkBench results CSV; a bad row is skipped and reported, the rest kept."""
    _raise_field_limit()
    out = FileResult(path=str(path))
    domain = path.parent.name
    model, toolset, date = name_parts(path)
    labels = {"source_file": f"{domain}/{path.name}"}
    if toolset:
        labels["toolset"] = toolset
    if date:
        labels["run_date"] = date
    tag = file_tag(path)
    for index, line, row in _rows(path, out):
        try:
            session = _row(row, path, line, index, domain=domain, model=model, tag=tag, labels=labels, out=out)
        except InputError as exc:
            out.skipped.append(SkippedRecord.from_error(exc, "broken repr", where=f"row {index}"))
            continue
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            out.skipped.append(SkippedRecord(str(path), f"{type(exc).__name__}: {exc}", line=line,
                                             where=f"row {index}"))
            continue
        if session is not None:
            out.sessions.append(session)
    attach_manifest(out.sessions, manifests.get(BENCHMARK, domain))
    return out


def _rows(path: Path, out: FileResult) -> Iterator[tuple[int, int, dict[str, str]]]:
    """(row index, first line, row by column) of each data row; rows the reader refuses are skipped."""
    try:
        fh = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    with fh:
        header = _header(path, fh)
        reader = csv.reader(fh)
        index = -1
        while True:
            index += 1
            start = reader.line_num + 2  # the header was line 1, read before the reader
            try:
                row = next(reader)
            except StopIteration:
                return
            except UnicodeDecodeError as exc:
                raise InputError(str(path), f"not UTF-8 text ({exc.reason})", start) from exc
            except csv.Error as exc:
                out.skipped.append(SkippedRecord(str(path), f"the CSV reader refused it: {exc}",
                                                 kind="unreadable CSV row", line=start, where=f"row {index}"))
                if reader.line_num + 1 < start:
                    return
                continue
            if len(row) != len(header):
                out.skipped.append(SkippedRecord(str(path), f"{len(row)} fields where the header has "
                                                 f"{len(header)}", line=start, where=f"row {index}"))
                continue
            yield index, start, dict(zip(header, row))


def _header(path: Path, fh: Any) -> list[str]:
    """The CSV's column names, from a first line read no further than MAX_HEADER_CHARS: a file that
    is not a results CSV (a JSON file on one line, a sparse gigabyte) is refused, quoted in a snippet."""
    try:
        first = fh.readline(MAX_HEADER_CHARS + 1)
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})", 1) from exc
    if not first:
        raise InputError(str(path), "empty file")
    if "\x00" in first:
        raise InputError(str(path), "not a CSV file: binary data on the first line", 1)
    if len(first) > MAX_HEADER_CHARS:
        raise InputError(str(path), f"not a WorkBench results CSV: its first line is longer than "
                                    f"{MAX_HEADER_CHARS:,} characters (starts {snippet(repr(first[:80]), 100)})", 1)
    try:
        header = next(csv.reader([first]))
    except (csv.Error, StopIteration) as exc:
        raise InputError(str(path), f"not a CSV file: {exc}", 1) from exc
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise InputError(str(path), f"not a WorkBench results CSV: no {', '.join(missing)} column "
                                    f"(first line: {snippet(repr(first.rstrip()))})", 1)
    return header


def _row(row: dict[str, str], path: Path, line: int, index: int, *, domain: str, model: str, tag: str,
         labels: dict[str, str], out: FileResult) -> Session | None:
    query = row["query"]
    error = (row.get("error") or "").strip()
    if not row["full_response"].strip():
        reason = f"no full_response: the run crashed ({error[:120]})" if error else "no full_response"
        out.skipped.append(SkippedRecord(str(path), reason, kind="no trajectory", line=line,
                                         where=f"row {index}"))
        return None
    try:
        run = parse_agent_run(row["full_response"])
    except ReprError as exc:
        raise InputError(str(path), f"full_response: {exc}", line) from exc
    builder = EpisodeBuilder()
    builder.user(query)
    for step in run.steps:
        tool = step.action.get("tool")
        tool = tool if isinstance(tool, str) else str(tool)
        tool_input = step.action.get("tool_input")
        if isinstance(tool_input, dict):
            arguments = tool_input
        else:
            out.notes["tool_input not a dict, kept as {input: ...}"] += 1
            arguments = {"input": tool_input}
        call = builder.call(tool, arguments)
        log = step.action.get("log")
        builder.turn(log if isinstance(log, str) else "", [call])
        if step.lenient:
            out.notes["observations with non-literal values (numpy, pandas) read leniently"] += 1
        parsed = None if isinstance(step.observation, str) else jsonable(step.observation)
        failed = isinstance(step.observation, str) and INVALID_TOOL in step.observation
        builder.result(call.call_id, step.observation_text, error=failed, parsed=parsed)
    _final(builder, run.output, out)
    task_id = task_id_of(query, domain)
    header_labels = dict(labels)
    if error:
        header_labels["run_error"] = error[:MAX_LABEL]
    header = SessionHeader(
        session_id=make_session_id(BENCHMARK, domain, model, labels.get("toolset"), tag, task_id, f"r{index}"),
        harness=HARNESS, agent_model=model, app=f"{BENCHMARK}/{domain}", task_id=task_id,
        source=f"{path}#{index}", labels=header_labels)
    return Session(header=header, events=builder.events)


def _final(builder: EpisodeBuilder, output: Any, out: FileResult) -> None:
    """The agent's last turn, its reply; none when LangChain stopped the agent itself."""
    if output is None:
        out.notes["runs without an output (no final reply)"] += 1
        return
    if output == STOPPED:
        out.notes["runs stopped at the iteration limit (no final reply)"] += 1
        return
    if not isinstance(output, str):
        out.notes["outputs given as an object, kept as JSON text"] += 1
        output = json.dumps(jsonable(output), ensure_ascii=False)
    builder.turn(output)
