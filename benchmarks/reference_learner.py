"""A simple stdlib learner: the yardstick `stretto learn`'s throughput is held to (issue 14).

It reads the same stored session files with `json` alone and learns what a flow's core is:

- the habit: order-2 contexts of abstract steps (`tool/ok|failed/0`, `reply/answered|ended/0`)
  → the next action;
- the reach: the same contexts → every read the agent called before its next write;
- the bindings: each argument value of each read → the (tool, path) of the newest result
  holding it (JSON results walked into paths; other text as one value), or unbound.

No validation, no limits, no mention classes, no provenance: what a few dozen lines of plain
Python do, so the ratio says what stretto's models and checks cost over the bare counting.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable

START = "<start>"


def _walk(node: Any, path: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(node, dict):
        for key, child in node.items():
            _walk(child, f"{path}.{key}", out)
    elif isinstance(node, list):
        for child in node:
            _walk(child, path + "[*]", out)
    elif node is not None:
        out.append((path, node))


def _key(value: Any) -> str | None:
    if isinstance(value, (dict, list)) or value is None:
        return None
    text = str(value).strip().casefold()
    return text or None


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


class ReferenceCounts:
    """The habit, the reach and the bindings of the sessions read so far."""

    def __init__(self) -> None:
        self.habit: dict[tuple[str, str], Counter] = {}
        self.reach: dict[tuple[str, str], Counter] = {}
        self.bindings: Counter = Counter()
        self.sessions = 0

    def add_file(self, path: str) -> None:
        with open(path, encoding="utf-8") as fh:
            header = json.loads(fh.readline())
            events = [json.loads(line) for line in fh if line.strip()]
        tools = (header.get("manifest") or {}).get("tools", {})
        kind = {name: spec.get("kind") for name, spec in tools.items()}
        self._count_steps(events, kind)
        self._count_bindings(events, kind)
        self.sessions += 1

    def _count_steps(self, events: list[dict], kind: dict[str, str]) -> None:
        errors: dict[str, bool] = {}
        for e in events:
            if e["kind"] == "tool_result":
                errors.setdefault(e["call_id"], bool(e.get("error")))
        symbols: list[str] = []
        actions: list[str] = []
        for i, e in enumerate(events):
            if e["kind"] != "llm_turn":
                continue
            if not e.get("calls"):
                answered = False
                for later in events[i + 1:]:
                    if later["kind"] in ("user", "llm_turn"):
                        answered = later["kind"] == "user"
                        break
                symbols.append(f"reply/{'answered' if answered else 'ended'}/0")
                actions.append("reply")
                continue
            for call in e["calls"]:
                error = errors.get(call["call_id"], True)
                symbols.append(f"{call['tool']}/{'failed' if error else 'ok'}/0")
                actions.append(call["tool"])
        padded = [START, START] + symbols
        window: set[str] = set()
        for t in range(len(actions) - 1, -1, -1):
            ctx = (padded[t], padded[t + 1])
            self.habit.setdefault(ctx, Counter())[actions[t]] += 1
            if kind.get(actions[t], "write") not in ("read", "pure") and actions[t] != "reply":
                window.clear()
                continue
            window.add(actions[t])
            self.reach.setdefault(ctx, Counter()).update(window)

    def _count_bindings(self, events: list[dict], kind: dict[str, str]) -> None:
        newest: dict[str, tuple[str, str]] = {}  # normalized value -> (tool, path) of the newest result
        for e in events:
            if e["kind"] == "tool_result" and not e.get("error"):
                content = e.get("content") or ""
                parsed = e.get("parsed")
                if parsed is None and content[:1] in "[{":
                    try:
                        parsed = json.loads(content)
                    except ValueError:
                        parsed = None
                leaves: list[tuple[str, Any]] = []
                _walk(parsed if parsed is not None else content, "$", leaves)
                seen: set[str] = set()
                for path, value in leaves:
                    key = _key(value)
                    if key is not None and key not in seen:
                        seen.add(key)
                        newest[key] = (e["tool"], path)
            elif e["kind"] == "llm_turn":
                for call in e.get("calls") or ():
                    if kind.get(call["tool"]) != "read":
                        continue
                    for name, value in (call.get("arguments") or {}).items():
                        for leaf in _leaves(value):
                            key = _key(leaf)
                            source = newest.get(key) if key is not None else None
                            self.bindings[(call["tool"], name) + (source or ("<unbound>", ""))] += 1


def reference_learn(files: Iterable[str]) -> ReferenceCounts:
    """The counts of every session file given, read one at a time."""
    counts = ReferenceCounts()
    for path in files:
        counts.add_file(path)
    return counts
