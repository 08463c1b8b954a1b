"""τ²-bench results files into sessions: one session per simulation.

τ²-bench's runner, and the harnesses that reuse its format (ToolOrchestra, IronShell,
adaptive-agent, Whissle), write a `Results` JSON: `info`, `tasks` and `simulations`, each
simulation a list of messages. Some harnesses drop `info`, `tasks`, `usage` or even the wrapper
(a bare list of simulations), reuse call ids, or flag no errors; this reads all of them the same way.
The harness and agent come from the file name `<agent>__<harness>__<file>.json`.
"""

from __future__ import annotations

import json
import math

import re
from pathlib import Path
from typing import Any, Callable

from stretto_core.errors import InputError
from stretto_core.sessions.ingest.common import (EpisodeBuilder, FileResult, ManifestSource, SkippedRecord, message_calls,
                                        attach_manifest, content_text, file_tag, make_session_id,
                                        parse_time, read_json, slug, usage_of)
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.paths import manifest_path
from stretto_core.sessions.model import Session, SessionHeader
from stretto_core.sessions.splits import official_split

BENCHMARK = "tau2"

RUNNER_NAMES = frozenset({"results", "simulations", "test_run_1", "ollama_chat"})
"""Harness parts of file names that are τ²-bench's own runner."""

HARNESS_PREFIXES = (("toolorchestra", "toolorchestra"), ("ironshell", "ironshell"),
                    ("adaptive-agent", "adaptive-agent"), ("whissle", "whissle"))

SOLO_MARK = "no-user"

_MODEL_IN_NAME = re.compile(r"(?:^|_)((?:claude|gpt|gemini|grok|deepseek|qwen|llama|glm|o\d)[\w.-]*?)"
                            r"(?:_\d+trials?|_|$)")
"""A model's name inside the rest of a file name, for files whose agent part says `unknown`."""


def harness_of(raw: str | None) -> str:
    """The short harness name of a file name's harness part."""
    if not raw or raw in RUNNER_NAMES:
        return "tau2"
    for prefix, name in HARNESS_PREFIXES:
        if raw.startswith(prefix):
            return name
    return slug(raw.split("_")[0]) or "tau2"


def name_parts(path: Path) -> tuple[str | None, str | None, str]:
    """(agent, harness part, rest) of `<agent>__<harness>__<file>.json`; Nones when not so named."""
    parts = path.stem.split("__")
    if len(parts) >= 3:
        return parts[0], parts[1], "__".join(parts[2:])
    return None, None, path.stem


def convert(path: Path, manifests: ManifestSource) -> FileResult:
    """Every simulation of one τ²-bench results file; a bad simulation is skipped, the rest kept."""
    data = read_json(path)
    sims, info, top = _unwrap(data, path)
    out = FileResult(path=str(path))
    agent_part, harness_part, rest = name_parts(path)
    domain = _domain(info, top, path)
    agent = _agent_model(info, top, agent_part, rest)
    harness = harness_of(harness_part)
    file_labels = {"source_file": path.name}
    user_llm = _dig(info, "user_info", "llm")
    if isinstance(user_llm, str):
        file_labels["user_simulator"] = user_llm
    split = _split_lookup(domain, out)
    tag = file_tag(path)
    for index, sim in enumerate(sims):
        try:
            session = _episode(sim, index, path, domain=domain, agent=agent, harness=harness, tag=tag,
                               solo_file=SOLO_MARK in path.name, labels=file_labels, split=split, out=out)
        except InputError as exc:
            out.skipped.append(SkippedRecord.from_error(exc, "malformed simulation"))
            continue
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            out.skipped.append(SkippedRecord(str(path), f"{type(exc).__name__}: {exc}",
                                             where=f"simulation {index}"))
            continue
        out.sessions.append(session)
    manifest = manifests.get(BENCHMARK, domain)
    if manifest is not None and SOLO_MARK not in path.name and not manifests.overridden:
        manifest = _agent_side(manifest, domain)  # a given manifest lists the agent's tools itself
    attach_manifest(out.sessions, manifest)
    return out


def _agent_side(manifest: ToolManifest, domain: str) -> ToolManifest:
    """With a user present, the agent has only its own toolkit: the user's device tools (telecom's
    phone) are the user's to call, so the agent's manifest leaves them out and no lookup makes them."""
    try:
        raw = json.loads(manifest_path(BENCHMARK, domain).read_text())
    except (OSError, ValueError):
        return manifest
    agent_tools = (raw.get("notes") or {}).get("agent_tools") if isinstance(raw, dict) else None
    if not isinstance(agent_tools, dict):
        return manifest
    return manifest.model_copy(update={"tools": {n: t for n, t in manifest.tools.items() if n in agent_tools}})


def _unwrap(data: Any, path: Path) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    if isinstance(data, list):
        if data and not all(isinstance(s, dict) and "messages" in s for s in data):
            raise InputError(str(path), "a JSON list, but not of τ²-bench simulations (no `messages`)")
        return data, {}, {}
    if not isinstance(data, dict) or not isinstance(data.get("simulations"), list):
        raise InputError(str(path), "not a τ²-bench results file: no `simulations` list")
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    return data["simulations"], info, data


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _domain(info: dict[str, Any], top: dict[str, Any], path: Path) -> str:
    for value in (_dig(info, "environment_info", "domain_name"), top.get("domain"), path.parent.name):
        if isinstance(value, str) and value:
            return value
    raise InputError(str(path), "cannot tell the τ²-bench domain (no info.environment_info.domain_name)")


def _agent_model(info: dict[str, Any], top: dict[str, Any], agent_part: str | None, rest: str) -> str | None:
    for value in (_dig(info, "agent_info", "llm"), top.get("model")):
        if isinstance(value, str) and value:
            return value
    if agent_part and agent_part != "unknown":
        return agent_part
    match = _MODEL_IN_NAME.search(rest)
    return match.group(1) if match else agent_part


def _split_lookup(domain: str, out: FileResult) -> Callable[[str], str]:
    try:
        split = official_split(BENCHMARK, domain)
    except InputError as exc:
        out.notes[f"no official split for {domain} (split=none): {exc.detail[:80]}"] += 1
        return lambda task: "none"
    return split.side


def _episode(sim: Any, index: int, path: Path, *, domain: str, agent: str | None, harness: str, tag: str,
             solo_file: bool, labels: dict[str, str], split: Callable[[str], str], out: FileResult) -> Session:
    where = f"simulation {index}"
    if not isinstance(sim, dict):
        raise InputError(str(path), f"{where}: not a JSON object")
    messages = sim.get("messages")
    if not isinstance(messages, list):
        raise InputError(str(path), f"{where}: no `messages` list")
    if sim.get("task_id") in (None, ""):
        raise InputError(str(path), f"{where}: no task_id")
    task_id = str(sim["task_id"])
    builder = EpisodeBuilder()
    speaks = False
    for j, message in enumerate(messages):
        if j == 0 and _canned_greeting(message):
            builder.notes["canned greetings (the orchestrator's, not an LLM turn) left out"] += 1
            continue
        speaks |= _message(builder, message, path, f"{where}: message {j}")
    out.notes.update(builder.notes)
    if not speaks and not solo_file:
        out.notes["episodes where no user speaks, in a file not named no-user"] += 1
    if builder.unanswered():
        out.notes["calls without a result"] += len(builder.unanswered())
    trial = sim.get("trial") if isinstance(sim.get("trial"), int) else None
    reward = _dig(sim, "reward_info", "reward")
    if isinstance(reward, float) and not math.isfinite(reward):
        raise InputError(str(path), f"{where}: its reward {reward!r} is not a finite number")
    header_labels = dict(labels, split=split(task_id))
    for key in ("task_id_as_recorded", "termination_reason"):
        if isinstance(sim.get(key), (str, int)):
            header_labels[key] = str(sim[key])
    header = SessionHeader(
        session_id=make_session_id(BENCHMARK, domain, agent or "agent", harness, tag, task_id,
                                   f"t{trial if trial is not None else 0}", index),
        harness=harness, agent_model=agent, app=f"{BENCHMARK}/{domain}", task_id=task_id, trial=trial,
        reward=float(reward) if isinstance(reward, (int, float)) and not isinstance(reward, bool) else None,
        solo=solo_file, started_at=parse_time(sim.get("start_time")),
        source=f"{path}#{index}", labels=header_labels)
    return Session(header=header, events=builder.events)


GREETING = "Hi! How can I help you today?"
"""τ²-bench's orchestrator opens every episode with this message; no model produced it."""


def _canned_greeting(message: Any) -> bool:
    """The fixed first assistant message: no calls, no token usage, the orchestrator's text."""
    return (isinstance(message, dict) and message.get("role") == "assistant"
            and not message.get("tool_calls") and content_text(message.get("content")).strip() == GREETING
            and not (message.get("usage") or {}).get("completion_tokens"))


def _message(builder: EpisodeBuilder, message: Any, path: Path, where: str) -> bool:
    """Add one message's events; True when it is the user speaking."""
    if not isinstance(message, dict):
        raise InputError(str(path), f"{where}: not a JSON object")
    role = message.get("role")
    at = parse_time(message.get("timestamp"))
    text = content_text(message.get("content"))
    if role == "assistant":
        calls = message_calls(builder, message, path, where, "name", "arguments")
        builder.turn(text, calls, usage_of(message.get("usage"), message.get("cost")), at)
        return False
    if role == "user":
        calls = message_calls(builder, message, path, where, "name", "arguments")
        builder.user(text, calls, at)
        return bool(text.strip())
    if role == "tool":
        flagged = message.get("error")
        error = bool(flagged) or (flagged is None and text.lstrip().startswith("Error:"))
        if error and not flagged:
            builder.notes["errors told by an `Error:` text (error flag unset)"] += 1
        builder.result(message.get("id"), text, error=error, at=at)
        return False
    builder.notes[f"{role} messages skipped"] += 1
    return False

