"""AgentDojo benign runs into sessions: one run file, `runs/<pipeline>/<suite>/<task>.json`, is one session.

A run lists the pipeline's messages: the system prompt (not the user's words, so skipped), the
user's task, assistant messages with `tool_calls` (`function`, `args`, often no `id`) and tool
messages. The model saw `error or content` of a tool message, so an error's text stands for the
result. Content is a string in older runs and a list of `{type, content}` blocks in newer ones.
Runs cut off at the iteration limit end with a call that was never executed: it is kept, unanswered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stretto_core.errors import InputError
from stretto_core.sessions.ingest.common import (EpisodeBuilder, FileResult, ManifestSource, SkippedRecord, message_calls,
                                        attach_manifest, content_text, file_tag, make_session_id, read_json)
from stretto_core.sessions.model import Session, SessionHeader

BENCHMARK = "agentdojo"
HARNESS = "agentdojo"
MAX_LABEL = 200


def convert(path: Path, manifests: ManifestSource) -> FileResult:
    """The one run of an AgentDojo run file; a malformed run is skipped and reported."""
    out = FileResult(path=str(path))
    data = read_json(path)
    try:
        session = _run(data, path, out)
    except InputError as exc:
        out.skipped.append(SkippedRecord.from_error(exc, "malformed run"))
        return out
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        out.skipped.append(SkippedRecord(str(path), f"{type(exc).__name__}: {exc}", kind="malformed run"))
        return out
    out.sessions.append(session)
    suite = session.header.app.split("/", 1)[1] if session.header.app else ""
    attach_manifest(out.sessions, manifests.get(BENCHMARK, suite))
    return out


def _run(data: Any, path: Path, out: FileResult) -> Session:
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise InputError(str(path), "not an AgentDojo run: no `messages` list")
    suite = _text(data.get("suite_name")) or path.parent.name
    task = _text(data.get("user_task_id")) or path.stem
    pipeline = _text(data.get("pipeline_name"))
    agent = _pipeline_dir(path, suite) or pipeline
    builder = EpisodeBuilder()
    for j, message in enumerate(data["messages"]):
        _message(builder, message, path, f"message {j}")
    out.notes.update(builder.notes)
    if builder.unanswered():
        out.notes["calls never executed (kept, no result)"] += len(builder.unanswered())
    labels = {"source_file": "/".join(path.parts[-3:])}
    if pipeline:
        labels["pipeline_name"] = pipeline
    for key in ("benchmark_version", "injection_task_id", "attack_type"):
        if _text(data.get(key)):
            labels[key] = _text(data[key])
    if _text(data.get("error")):
        labels["run_error"] = _text(data["error"])[:MAX_LABEL]
        out.notes["runs the pipeline marked with an error"] += 1
    utility = data.get("utility")
    header = SessionHeader(
        session_id=make_session_id(BENCHMARK, suite, agent or "agent", HARNESS, file_tag(path), task),
        harness=HARNESS, agent_model=agent, app=f"{BENCHMARK}/{suite}", task_id=task,
        reward=(1.0 if utility else 0.0) if isinstance(utility, bool) else None,
        source=f"{path}#0", labels=labels)
    return Session(header=header, events=builder.events)


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and str(value) else None


def _pipeline_dir(path: Path, suite: str) -> str | None:
    """The pipeline's folder in the runs layout (`<pipeline>/<suite>/<task>.json`), when so laid out.

    The folder names the agent even where `pipeline_name` says only `local` (Meta-SecAlign runs).
    """
    if path.parent.name == suite and path.parent.parent.name:
        return path.parent.parent.name
    return None


def _message(builder: EpisodeBuilder, message: Any, path: Path, where: str) -> None:
    if not isinstance(message, dict):
        raise InputError(str(path), f"{where}: not a JSON object")
    role = message.get("role")
    if role == "system":
        builder.notes["system messages skipped"] += 1
        return
    text = content_text(message.get("content"))
    if role == "user":
        builder.user(text)
    elif role == "assistant":
        builder.turn(text, message_calls(builder, message, path, where, "function", "args"))
    elif role == "tool":
        _result(builder, message, text)
    else:
        raise InputError(str(path), f"{where}: unknown role {role!r}")


def _result(builder: EpisodeBuilder, message: dict[str, Any], text: str) -> None:
    error = message.get("error")
    if error:
        if text.strip():
            builder.notes["errors with content too (the model saw the error)"] += 1
        text = str(error)
    recorded = message.get("tool_call") if isinstance(message.get("tool_call"), dict) else {}
    tool = recorded.get("function") if isinstance(recorded.get("function"), str) else None
    builder.result(message.get("tool_call_id"), text, error=bool(error), tool=tool)
