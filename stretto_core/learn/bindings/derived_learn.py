"""Learning derived bindings (`derived.py`) from one session, by counting.

Walking the session, at each of the agent's read calls, for each string argument:

    snapshot    (tool, argument, results so far, values passed so far, the value): every call
    discover    a value no result held whole and the user did not write: the templates that compose it (at most
                `MAX_TEMPLATES_PER_VALUE`, those with an `arg` prefix or none first, then the
                longest piece): found[template] += 1

At the session's end, every template discovered for (tool, argument) is evaluated at every
snapshot of that (tool, argument) in the session: the pick it would have made then (`derived_pick`),
n_has += 1 when it had one, n_eq += 1 when that was the agent's value; and `calls` += the
snapshots, and `sessions` += 1. So per template, summed over sessions (additive, like every count):

    [found, n_has, n_eq, calls, sessions]

Calls of sessions that never composed the template are not evaluated; compiling counts each of
them as a pick that missed (`compile_derived`): ρ is never higher than the evaluated picks say.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stretto_core.learn.bindings.derived import (MAX_LITERAL, MAX_SEPARATOR, MAX_VALUE, Pools, Slot, Template,
                                                 derived_pick, text_candidates)
from stretto_core.learn.bindings.model import DerivedCounts, LookupCounts
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.values import normalize

MAX_TEMPLATES_PER_VALUE = 4
"""A value counts for at most this many templates."""

MAX_BREAKS = 24
"""A value is cut into pieces at its first this many separators."""

MAX_ARG_SLOTS = 32
"""At most this many of the agent's earlier arguments are tried as a prefix."""

_SEPARATORS = frozenset("/\\:@ .=?&#_-|,+")


@dataclass
class DerivedLearner:
    """One session's snapshots and discoveries (see the module docstring)."""

    snapshots: list[tuple[str, str, int, frozenset[str], str]] = field(default_factory=list)
    found: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    templates: dict[str, Template] = field(default_factory=dict)

    def see(self, state: ToolState, tool: str, arg: str, value: str, traced: bool) -> None:
        """One string argument of one of the agent's reads, before the call is observed."""
        if not value.strip() or len(value) > MAX_VALUE:
            return
        key = normalize(value)
        if key is None:
            return
        upto = len(state.results)
        self.snapshots.append((tool, arg, upto, frozenset(state.passed_values(tool, arg)), key))
        if traced or state.mentioned(value):
            return  # a result held it whole, or the user wrote it whole: nothing was composed
        found = self.found.setdefault((tool, arg), {})
        for template in discover(state, tool, arg, value):
            k = template.key
            self.templates.setdefault(k, template)
            found[k] = found.get(k, 0) + 1

    def finish(self, state: ToolState, lookups: dict[str, LookupCounts]) -> None:
        """Evaluate every discovered template at every snapshot of its (tool, argument)."""
        if not self.found:
            return
        for (tool, arg), found in self.found.items():
            if not found:
                continue
            shots = [s for s in self.snapshots if s[0] == tool and s[1] == arg]
            counts = lookups[tool].arg(arg)
            if counts.derived is None:
                counts.derived = DerivedCounts()
            for k, n in found.items():
                template = self.templates[k]
                has = eq = 0
                for _tool, _arg, upto, passed, value in shots:
                    pick = derived_pick(template, Pools(state, upto), passed)
                    if pick is not None:
                        has += 1
                        eq += normalize(pick) == value
                counts.derived.add_template(k, n, has, eq, len(shots))


def discover(state: ToolState, tool: str, arg: str, value: str) -> list[Template]:
    """The templates that compose `value` from the state (module docstring of `derived.py`)."""
    pools = Pools(state)
    slots = _arg_slots(state, tool, arg)
    found: list[tuple[tuple[int, int, int], Template]] = []
    folded = value.casefold()
    for slot, passed in slots:  # the whole value, another call's argument
        if passed.casefold() == folded:
            found.append(((0, 0, 0), Template((slot,))))
    breaks = _breaks(value)
    sources = [t for t in state.ok_results if t]
    seen, in_text = state.seen_values, _text_keys(state)
    for i in breaks:
        for j in breaks:
            if j <= i:
                continue
            piece = value[i:j]
            key = normalize(piece)
            if key is None or piece != piece.strip():
                continue
            whole = i == 0 and j == len(value)
            if key not in in_text and (whole or key not in seen):
                continue  # no result holds this piece: skip the search
            for source in sources:
                for age, entry in enumerate(pools(source)):
                    slots_here = _piece_slots(entry, key, whole)
                    if not slots_here:
                        continue
                    prefix = _prefix(state, value[:i], slots)
                    suffix = value[j:]
                    if prefix is None or (suffix and not _literal_ok(state, suffix)):
                        break
                    rank = (1 if prefix and isinstance(prefix[0], str) else 0, -(j - i), age)
                    for piece_slot in slots_here:
                        parts = tuple(p for p in (*prefix, piece_slot, suffix) if p != "")
                        found.append((rank, Template(parts)))
                    break
    found.sort(key=lambda rt: (rt[0], rt[1].key))
    out: list[Template] = []
    for _rank, template in found:
        if template not in out:
            out.append(template)
        if len(out) >= MAX_TEMPLATES_PER_VALUE:
            break
    return out


def _text_keys(state: ToolState) -> set[str]:
    """Every piece the visible results' text offers (kept up to date as results arrive)."""
    got = state.views.get("derived_text_keys")
    if got is None:
        got = state.views["derived_text_keys"] = [0, set()]
    results = state.results
    for entry in results[got[0]:]:
        if entry.ok and entry.visible:
            table = _text_table(entry)
            if table:
                got[1].update(table)
    got[0] = len(results)
    return got[1]


def _breaks(value: str) -> list[int]:
    """Where a piece may start or end: the ends, and either side of each separator."""
    out = {0, len(value)}
    seen = 0
    for i, c in enumerate(value):
        if c in _SEPARATORS:
            out.update((i, i + 1))
            seen += 1
            if seen >= MAX_BREAKS:
                break
    return sorted(out)


def _piece_slots(entry: ResultEntry, key: str, whole: bool) -> list[Slot]:
    """The slots of this result whose value is `key`: text anchors, and (for part of a value) paths."""
    table = _text_table(entry)
    out = [Slot(kind, entry.tool, anchor) for kind, anchor in dict.fromkeys(table.get(key, ()))]
    if not whole:
        from stretto_core.learn.bindings.pick import eligible_path

        out += [Slot("path", entry.tool, p) for p in entry.index.paths.get(key, ())[:2]
                if eligible_path(p) and "{" not in p and "}" not in p and " " not in p]
    return out


def _text_table(entry: ResultEntry) -> dict[str, list[tuple[str, str]]]:
    """Normalized piece -> (kind, anchor) of each text slot offering it (cached with the candidates)."""
    views = entry.index_views
    table = views.get("text_by_piece")
    if table is None:
        table = {}
        for kind, anchor, piece in text_candidates(entry):
            k = normalize(piece)
            if k is not None:
                table.setdefault(k, []).append((kind, anchor))
        if "text_candidates" in views:  # cached only where the text was read
            views["text_by_piece"] = table
    return table


def _arg_slots(state: ToolState, tool: str, arg: str) -> list[tuple[Slot, str]]:
    """The newest string each (tool, argument) of the agent's successful calls held, newest first."""
    out: dict[tuple[str, str], str] = {}
    for entry in reversed(state.results):
        if not (entry.ok and entry.by_agent and entry.visible):
            continue
        for name, passed in entry.arguments.items():
            if (entry.tool, name) == (tool, arg) or not isinstance(passed, str) or len(passed.strip()) < 2:
                continue
            out.setdefault((entry.tool, name), passed)
        if len(out) >= MAX_ARG_SLOTS:
            break
    return [(Slot("arg", t, a), v) for (t, a), v in out.items()]


def _prefix(state: ToolState, head: str, slots: list[tuple[Slot, str]]) -> tuple[object, ...] | None:
    """`head` as an `arg` slot and a short separator (the longest such argument), or a literal, or None."""
    if not head:
        return ()
    folded = head.casefold()
    best: tuple[Slot, str] | None = None
    for slot, passed in slots:
        if folded.startswith(passed.casefold()) and len(head) - len(passed) <= MAX_SEPARATOR:
            if best is None or len(passed) > len(best[1]):
                best = (slot, passed)
    if best is not None:
        separator = head[len(best[1]):]
        if "{" not in separator and "}" not in separator:
            return (best[0], separator)
    return (head,) if _literal_ok(state, head) else None


def _literal_ok(state: ToolState, literal: str) -> bool:
    """Short, no braces, and no words the user wrote (a flow never carries a user's value)."""
    return (len(literal) <= MAX_LITERAL and "{" not in literal and "}" not in literal
            and not state.mentioned(literal.strip(" /.-_:")))
