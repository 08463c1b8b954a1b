"""Actions: every training call explained by the provenance of its arguments, then named.

For each (tool, argument), every occurrence lists the provenances that reproduce its value in
its own state, where "reproduce" means what the run will do: the first value the provenance
offers that the guard does not forbid is the value passed. Each provenance is scored by how many
occurrences it reproduces, weighted by how well it carries to a customer no trace saw (a result
path with a selector over a bare one, either over the ticket's shape, all over a constant).
Each occurrence takes its best-scoring provenance; a call's action is its tool with those.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from stretto_core.procedures.bindings import bind, candidates, describe, same
from stretto_core.procedures.episodes import Episode
from stretto_core.procedures.ir import Action, Binding
from stretto_core.procedures.state import RunState

KIND_WEIGHT = {"result-ticket": 1.0, "result-word": 0.995, "result": 0.99, "ticket": 0.9,
               "result-id": 0.6, "const": 0.5}
"""How much a provenance's coverage counts, by how well it carries to unseen customers: a record
picked by a value of the ticket, or by a word (`status="Overdue"`), over the newest record, over
the ticket's shape; a record picked by an identifier constant (`plan_id="P1002"`) carries no
better than a constant."""


def _weight(binding: Binding) -> float:
    if binding.kind != "result":
        return KIND_WEIGHT.get(binding.kind, 0.5)
    if not binding.where:
        return KIND_WEIGHT["result"]
    kinds = {"result-ticket" if sel.kind == "ticket" else
             "result-id" if any(c.isdigit() for c in str(sel.value)) else "result-word"
             for sel in binding.where.values()}
    return min(KIND_WEIGHT[k] for k in kinds)


@dataclass
class _Occurrence:
    episode: int
    step: int
    value: Any
    options: list[Binding]


def _reproduces(binding: Binding, state: RunState, tool: str, arguments: dict[str, Any], arg: str,
                kind: str) -> bool:
    for value in bind(binding, state):
        if state.forbidden(tool, {**arguments, arg: value}, kind):
            continue
        return same(value, arguments[arg]) and (type(value) is type(arguments[arg]) or
                                                 not isinstance(arguments[arg], (int, float)))
    return False


def action_key(action: Action) -> str:
    """The name of an action: its tool and each argument's provenance, in argument order."""
    args = ", ".join(f"{name}={describe(b)}" for name, b in sorted(action.arguments.items()))
    return f"{action.tool}{{{args}}}"


def assign_actions(episodes: list[Episode], constants_only: bool = False) -> tuple[dict[str, Action], list[list[str]]]:
    """The actions of the training calls, and each episode's steps named by their action keys.

    `constants_only` binds every argument to the value the demonstration passed (an ablation:
    what a procedure without provenance would do for a customer no trace saw)."""
    states = [RunState(e.ticket, e.steps) for e in episodes]
    occurrences: dict[tuple[str, str], list[_Occurrence]] = defaultdict(list)
    for i, episode in enumerate(episodes):
        for t, step in enumerate(episode.steps):
            prefix = states[i].prefix(t)
            for arg, value in step.arguments.items():
                found = [Binding(kind="const", value=value)] if constants_only else candidates(value, prefix)
                options = [b for b in found if _reproduces(b, prefix, step.tool, step.arguments, arg, step.kind)]
                occurrences[(step.tool, arg)].append(_Occurrence(i, t, value, options))
    chosen: dict[tuple[int, int, str], Binding] = {}
    for (tool, arg), occs in occurrences.items():
        coverage: Counter[str] = Counter()
        by_key: dict[str, Binding] = {}
        for occ in occs:
            for b in occ.options:
                key = b.model_dump_json()
                coverage[key] += 1
                by_key[key] = b
        for occ in occs:
            if not occ.options:
                chosen[(occ.episode, occ.step, arg)] = Binding(kind="const", value=occ.value)
                continue
            best = max(occ.options, key=lambda b: (coverage[b.model_dump_json()] * _weight(b),
                                                   -len(b.model_dump_json())))
            chosen[(occ.episode, occ.step, arg)] = best
        _collapse_free_text(tool, arg, occs, chosen)
    actions: dict[str, Action] = {}
    named: list[list[str]] = []
    for i, episode in enumerate(episodes):
        keys = []
        for t, step in enumerate(episode.steps):
            action = Action(tool=step.tool, arguments={a: chosen[(i, t, a)] for a in step.arguments})
            key = action_key(action)
            if key not in actions:
                actions[key] = action
            actions[key].count += 1
            step.action = key
            keys.append(key)
        named.append(keys)
    return actions, named


FREE_TEXT_MIN_CHARS = 12
"""A constant argument this long, with spaces, that varies between calls is composed free text."""


def _collapse_free_text(tool: str, arg: str, occs: list[_Occurrence],
                        chosen: dict[tuple[int, int, str], Binding]) -> None:
    consts = [chosen[(o.episode, o.step, arg)] for o in occs]
    texts = [b.value for b in consts if b.kind == "const" and isinstance(b.value, str)
             and " " in b.value and len(b.value) >= FREE_TEXT_MIN_CHARS]
    if len(set(texts)) < 2:
        return
    common = Counter(texts).most_common(1)[0][0]
    for o in occs:
        b = chosen[(o.episode, o.step, arg)]
        if b.kind == "const" and b.value in texts:
            chosen[(o.episode, o.step, arg)] = Binding(kind="text", value=common)
