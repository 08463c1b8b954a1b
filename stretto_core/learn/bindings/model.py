"""What bindings store: additive counts (learned) and the table compiled from them (served).

Learning is counting. `BindingCounts` holds only sums over sessions, each session's share
multiplied by its weight, so

    counts(A ∪ B) = counts(A) + counts(B)      (merged, term by term)

and every derived quantity (which arguments are required, the order sources are tried in, ρ)
is a function of the merged counts alone, computed by `compile()` into a `BindingTable`.

Exactness of the merge: each count is a float sum. With integer weights (the default 1.0) every
sum is an integer below 2^53 and float addition is exact, so learning from two halves and
merging equals learning at once bit for bit. With fractional weights the two can differ in the
last bit, as any float sum taken in another order can.

The few non-count fields merge by rules that are associative and commutative as well: a
constant's single value (kept while every call passed the same value, else `varied`), and the
flags `user_wrote` and `constants` (logical or).

Serialization is deterministic: `to_json()` writes sorted keys on one line, so two learns of the
same sessions are byte-identical. Every map here has string keys: a source is written
`"<tool> <path>"` (e.g. `get_user_details $.orders[*]`), the same text a `Binding` reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from stretto_core.sessions.state import LOOK_BACK

BINDINGS_FORMAT_VERSION: Literal[3] = 3
"""Readers refuse any other version of the counts or the table; version 1 (before `named` and
`class_lift`) reads as it is, with every class lift 1; version 2 (before `NamedCounts.other` and
the `other` bucket) reads with the two buckets it was derived with. Version 4
(`DERIVED_FORMAT_VERSION`) is written only when derived counts or arguments are present."""

START_SITE = "start"
"""The site of a call made before any tool result."""

FAILED_SUFFIX = " (failed)"
"""Appended to a tool's name to name the site after a failed result of it."""

PLAIN = "plain"
"""A pick of a value the user neither named nor described."""
MENTIONED = "mentioned"
"""A pick the user named: the value, or a word of its record (`bindings_pick`), is in their words."""
NAMED_OTHER = "named_other"
"""The user named another record of the source's list, not the pick."""
DESCRIBED_READ = "described_read"
"""The record the user described was already read: another value of the list was looked up and
that result held a value the user gave (written, or typed by the agent before any result held it)
that the listing itself does not hold."""
CLASSES: tuple[str, ...] = (PLAIN, MENTIONED, NAMED_OTHER, DESCRIBED_READ)
"""Mention classes, each with its own ρ. A list pick is always `plain`."""

FREE = "free"
"""Evidence for picks made on their own: the first value the tool was not yet passed."""
ALIGNED = "aligned"
"""Evidence for picks aligned to the record of the call's other arguments."""


def site_name(tool: str, failed: bool = False) -> str:
    """The site after a result of `tool`: its name, with `FAILED_SUFFIX` when it failed."""
    return tool + FAILED_SUFFIX if failed else tool


def source_key(tool: str, path: str) -> str:
    """A source as one string: `<tool> <path>`."""
    return f"{tool} {path}"


def split_source(key: str) -> tuple[str, str]:
    """The (tool, path) of a source key; paths start with `$`, tool names hold no ` $`."""
    tool, _, path = key.partition(" $")
    return tool, "$" + path


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _add_map(mine: dict[str, float], theirs: dict[str, float], w: float) -> None:
    for k, v in theirs.items():
        mine[k] = mine.get(k, 0.0) + w * v


def _add_nested(mine: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]], w: float) -> None:
    for k, sub in theirs.items():
        target = mine.get(k)
        if target is None:
            target = mine[k] = {}
        _add_map(target, sub, w)


def _add_evidence(mine: dict[str, dict[str, list[float]]], theirs: dict[str, dict[str, list[float]]],
                  w: float) -> None:
    for cls, per_source in theirs.items():
        target = mine.get(cls)
        if target is None:
            target = mine[cls] = {}
        for src, (has, eq) in per_source.items():
            cur = target.get(src)
            if cur is None:  # a fresh cell, [0.0, 0.0], plus these
                target[src] = [0.0 + w * has, 0.0 + w * eq]
            else:
                cur[0] += w * has
                cur[1] += w * eq


DERIVED_FORMAT_VERSION: Literal[4] = 4
"""The version written when some argument has derived counts or a derived table (`bindings_derived`):
files without them stay version 3, byte for byte."""


class DerivedCounts(_Model):
    """Counts for templates that compose an argument's value (`bindings_derived`), summed over sessions."""

    templates: dict[str, list[float]] = Field(default_factory=dict)
    """Template key -> [found, n_has, n_eq, calls, sessions]: values it composed; of the calls of
    the sessions that composed it, those where it had a pick, and those where the pick was the
    agent's value; those calls; and those sessions."""

    def add_template(self, key: str, found: float, has: float, eq: float, calls: float, sessions: float = 1.0,
                     w: float = 1.0) -> None:
        cell = self.templates.get(key)
        if cell is None:
            cell = self.templates[key] = [0.0, 0.0, 0.0, 0.0, 0.0]
        cell[0] += w * found
        cell[1] += w * has
        cell[2] += w * eq
        cell[3] += w * calls
        cell[4] += w * sessions

    def add(self, other: "DerivedCounts", w: float) -> None:
        for key, (found, has, eq, calls, sessions) in other.templates.items():
            self.add_template(key, found, has, eq, calls, sessions, w)


class ArgCounts(_Model):
    """Counts for one argument of one read tool, over the agent's calls of that tool."""

    calls: float = 0.0
    """Calls that passed this argument (a value other than null)."""
    list_calls: float = 0.0
    """Of those, calls that passed a list."""
    values: float = 0.0
    """String and number values looked for in earlier results."""
    found: dict[str, float] = Field(default_factory=dict)
    """Source -> values traced to it: the newest result holding the value, its first path."""
    site_found: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Site -> source -> values traced to it at that site."""
    lists: float = 0.0
    """List values looked for."""
    list_found: dict[str, float] = Field(default_factory=dict)
    """Source -> lists whose every element sat at that path of one earlier result."""
    list_site_found: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Site -> source -> lists traced to it at that site."""
    evaluated: dict[str, float] = Field(default_factory=dict)
    """Rule (`free`, `aligned`) -> calls at which every candidate source's pick was evaluated."""
    evidence: dict[str, dict[str, dict[str, list[float]]]] = Field(default_factory=dict)
    """Rule -> class -> source -> [n_has, n_eq]: the source had a pick of that class, and the
    pick equalled the agent's value."""
    list_evaluated: float = 0.0
    """Calls at which every candidate source's list pick was evaluated."""
    list_evidence: dict[str, list[float]] = Field(default_factory=dict)
    """Source -> [n_has, n_eq] for list picks (equal as sets)."""
    constant: str | None = None
    """The canonical JSON of the one value every call passed, while there is one."""
    varied: bool = False
    """Calls passed more than one value."""
    found_in_result: float = 0.0
    """Calls whose value (any element of it) an earlier result held."""
    user_wrote: bool = False
    """A value was a string with a digit or an `@` that the user wrote."""
    derived: DerivedCounts | None = None
    """Templates composing values no result held whole (version 4; None: none seen)."""

    def add(self, other: "ArgCounts", w: float) -> None:
        self.calls += w * other.calls
        self.list_calls += w * other.list_calls
        self.values += w * other.values
        _add_map(self.found, other.found, w)
        _add_nested(self.site_found, other.site_found, w)
        self.lists += w * other.lists
        _add_map(self.list_found, other.list_found, w)
        _add_nested(self.list_site_found, other.list_site_found, w)
        _add_map(self.evaluated, other.evaluated, w)
        for rule, per_class in other.evidence.items():
            _add_evidence(self.evidence.setdefault(rule, {}), per_class, w)
        self.list_evaluated += w * other.list_evaluated
        _add_evidence({"": self.list_evidence}, {"": other.list_evidence}, w)
        self.found_in_result += w * other.found_in_result
        self.user_wrote = self.user_wrote or other.user_wrote
        self.see_constant(other.constant, other.varied)
        if other.derived is not None:
            if self.derived is None:
                self.derived = DerivedCounts()
            self.derived.add(other.derived, w)

    def see_constant(self, canonical: str | None, varied: bool = False) -> None:
        """Fold one more observed value (or another count's summary) into the constant."""
        if self.varied:
            return
        if varied or (canonical is not None and self.constant is not None and canonical != self.constant):
            self.varied, self.constant = True, None
        elif canonical is not None and self.constant is None:  # (else it is this value already)
            self.constant = canonical


class LookupCounts(_Model):
    """Counts for one read tool: its calls, those with no argument, and each argument's."""

    calls: float = 0.0
    bare_calls: float = 0.0
    args: dict[str, ArgCounts] = Field(default_factory=dict)

    def arg(self, name: str) -> ArgCounts:
        found = self.args.get(name)
        if found is None:
            found = self.args[name] = ArgCounts()
        return found

    def add(self, other: "LookupCounts", w: float) -> None:
        self.calls += w * other.calls
        self.bare_calls += w * other.bare_calls
        for name, counts in other.args.items():
            self.arg(name).add(counts, w)


@dataclass(frozen=True)
class BindingOptions:
    """Which parts of the binding rule are on, for learning and serving alike (the ablation's switches).

    `look_back`: how many of a source tool's newest results a source draws on (8; 1 is the paper's
    newest-result rule), in learning and serving. `align`: when serving, non-lead arguments take
    their value from the lead argument's record where they can.
    """

    look_back: int = LOOK_BACK
    align: bool = True
    user_words: str | None = None
    """Bind from the user's words too: `pattern` or `spans` (`sessions/user_words.py`); None: not."""
    class_lift: str = "full"
    """At which decisions the class lift is counted (`lift_decisions.CLASS_LIFT_MODES`): full, thin, visited or off."""


DEFAULT_OPTIONS = BindingOptions()


class NamedCounts(_Model):
    """Decisions by whether the user had named a record of a list source (`bindings_named`).

    Counted at every result of the agent's own calls (a decision), per list source whose pool
    had a candidate: `decisions` and `named` (of those, the user had named one of its candidates,
    its fresh pick `mentioned`), per read tool `named_passed`, and per read tool the agent called
    before its next write, `called` and `called_named`."""

    decisions: dict[str, float] = Field(default_factory=dict)
    """Source -> decisions at which it had a candidate."""
    named: dict[str, float] = Field(default_factory=dict)
    """Source -> of those, decisions at which the user had named one of its candidates."""
    named_passed: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Read tool -> source -> of the `named` decisions, those at which the named pick had already
    been passed to the tool (for an argument): for that tool they count by its own open pick."""
    passed_named: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Read tool -> source -> of the `named_passed` decisions, those at which the tool's own open
    pick there (`free_pick`) was named as well: for that tool they count as named."""
    called: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Read tool -> source -> decisions after which the agent called the tool before its next write."""
    called_named: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Read tool -> source -> of those, the decisions at which the tool's pick there was named (its
    fresh pick, or where that was passed to it, its own open pick)."""
    other: dict[str, dict[str, float]] | None = Field(default_factory=dict)
    """Read tool -> source -> of the `named_passed` decisions, those at which the tool's own open
    pick there was not named and the named pick was named by id (`bindings_named.by_id`): the
    `other` bucket (version 3; None in counts of version 2 or added to them, which derive none)."""
    called_other: dict[str, dict[str, float]] | None = Field(default_factory=dict)
    """Read tool -> source -> of the `other` decisions, those after which the agent called the tool
    before its next write (version 3, as `other`)."""

    def add(self, other: "NamedCounts", w: float) -> None:
        _add_map(self.decisions, other.decisions, w)
        _add_map(self.named, other.named, w)
        _add_nested(self.named_passed, other.named_passed, w)
        _add_nested(self.passed_named, other.passed_named, w)
        _add_nested(self.called, other.called, w)
        _add_nested(self.called_named, other.called_named, w)
        if None in (other.other, other.called_other, self.other, self.called_other):
            self.other = self.called_other = None  # counted without them on one side: derived as version 2
        else:
            _add_nested(self.other, other.other, w)  # type: ignore[arg-type]
            _add_nested(self.called_other, other.called_other, w)  # type: ignore[arg-type]


class BindingCounts(_Model):
    """Everything bindings learn from sessions: additive counts per read tool."""

    stretto_binding_counts: Literal[1, 2, 3, 4] = BINDINGS_FORMAT_VERSION
    """Version 2 added `named`; a version-1 file reads with none (every class lift 1). Version 3
    added `NamedCounts.other` and `called_other`; a version-2 file reads without them (no `other`
    bucket)."""
    constants: bool = False
    """Learn constants at compile (opt-in, paper App. D). The evidence is counted either way."""
    user_words: str | None = None
    """The user's words were a source when counting (`BindingOptions.user_words`); serve so too."""
    sessions: float = 0.0
    lookups: dict[str, LookupCounts] = Field(default_factory=dict)
    named: NamedCounts = Field(default_factory=NamedCounts)
    """Decisions by whether the user had named a candidate of a list source, and the reads after them."""

    @model_validator(mode="after")
    def _older_named_counts(self) -> "BindingCounts":
        if self.stretto_binding_counts < 3:  # counted before `other`: none, not none called
            self.named.other = self.named.called_other = None
        return self

    def lookup(self, tool: str) -> LookupCounts:
        found = self.lookups.get(tool)
        if found is None:
            found = self.lookups[tool] = LookupCounts()
        return found

    def add(self, other: "BindingCounts", weight: float = 1.0) -> None:
        """Add `weight` times `other`, in place."""
        if weight == 0:
            return
        self.sessions += weight * other.sessions
        self.constants = self.constants or other.constants
        self.user_words = self.user_words or other.user_words
        for tool, counts in other.lookups.items():
            self.lookup(tool).add(counts, weight)
        self.named.add(other.named, weight)
        self.mark_derived()

    def merged(self, other: "BindingCounts", weight: float = 1.0) -> "BindingCounts":
        """These counts plus `weight` times `other` (a power prior when weight < 1); a new object."""
        out = self.model_copy(deep=True)
        out.add(other, weight)
        return out

    def to_json(self) -> str:
        data = self.model_dump()
        if data.get("user_words") is None:
            data.pop("user_words", None)  # counted without the user's words: the bytes as before the option
        if _drop_none_derived(data) and data["stretto_binding_counts"] == BINDINGS_FORMAT_VERSION:
            data["stretto_binding_counts"] = DERIVED_FORMAT_VERSION
        return _dumps(data)

    def has_derived(self) -> bool:
        return any(a.derived is not None for lk in self.lookups.values() for a in lk.args.values())

    def mark_derived(self) -> None:
        """Version 4 once derived counts are present (counts of version 3 only: older ones keep
        the meaning their version gives their other fields)."""
        if self.stretto_binding_counts == BINDINGS_FORMAT_VERSION and self.has_derived():
            self.stretto_binding_counts = DERIVED_FORMAT_VERSION

    @classmethod
    def from_json(cls, text: str) -> "BindingCounts":
        return cls.model_validate_json(text)


class ArgTable(_Model):
    """How one argument of a lookup is bound, and how often such a pick was the agent's own."""

    mode: Literal["value", "list", "constant", "derived"] = "value"
    constant: Any = None
    """The value passed, for a constant."""
    sources: list[str] = Field(default_factory=list)
    """Usable sources in the lookup's own order (most values first)."""
    site_orders: dict[str, list[str]] = Field(default_factory=dict)
    """Site -> its own order, for sites with enough traced values."""
    site_factor: dict[str, float] = Field(default_factory=dict)
    """Site -> the factor on ρ there: its share of values traced to the order over the overall
    share, shrunk (`bindings_compile`); sites not listed have 1."""
    found: dict[str, float] = Field(default_factory=dict)
    """Source -> values (or lists) traced to it, for every source seen (for `describe`)."""
    values: float = 0.0
    """Values (or lists) looked for."""
    rho: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Order (`*` or a site with its own order) -> class -> ρ, picks made on their own."""
    rho_aligned: dict[str, dict[str, float]] = Field(default_factory=dict)
    """The same for picks aligned to the lead argument's record (non-lead arguments)."""
    support: dict[str, list[float]] = Field(default_factory=dict)
    """Class -> [k, n] behind `rho['*']`: effective agreements and picks (for `describe`)."""
    support_aligned: dict[str, list[float]] = Field(default_factory=dict)
    """The same behind `rho_aligned['*']`."""
    pooled: float = 1.0
    """ρ̄ of the lookup's own order, pooled over classes: (K + 1) / (N + 2)."""
    pooled_aligned: float = 1.0
    """The same for aligned picks."""
    class_lift: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Source -> bucket (`named`, `unnamed`) -> the lift of the lookup's chance of being made at
    all when the user had (or had not) named a candidate there (`bindings_named`); the lead only."""
    template: str | None = None
    """For a `derived` argument: the template its value is composed by (`bindings_derived`)."""


class LookupTable(_Model):
    """One read tool as a lookup: bare, bound (with its arguments), or not bindable, and why."""

    kind: Literal["bound", "bare", "unbound"]
    calls: float = 0.0
    bare_calls: float = 0.0
    required: list[str] = Field(default_factory=list)
    lead: str | None = None
    """The argument picked first, on its own; the others align to its record where they can."""
    args: dict[str, ArgTable] = Field(default_factory=dict)
    bare_rho: float | None = None
    reason: str = ""


class BindingTable(_Model):
    """The compiled bindings: per read tool, where each argument comes from and its ρ."""

    stretto_bindings: Literal[1, 2, 3, 4] = BINDINGS_FORMAT_VERSION
    """Version 2 added `ArgTable.class_lift`; a version-1 table reads with none. Version 3 added
    its bucket `other`; a version-2 table has none (its `named_other` picks take the `unnamed` lift)."""
    lookups: dict[str, LookupTable] = Field(default_factory=dict)
    _plans: dict[str, Any] = PrivateAttr(default_factory=dict)

    def to_json(self) -> str:
        data = self.model_dump()
        for lookup in data["lookups"].values():
            for arg in lookup["args"].values():
                if arg.get("template") is None:
                    arg.pop("template", None)
        return _dumps(data)

    @classmethod
    def from_json(cls, text: str) -> "BindingTable":
        return cls.model_validate_json(text)


@dataclass(frozen=True)
class Binding:
    """A lookup's bound arguments, the chance ρ they are the agent's own, and where they came from."""

    arguments: dict[str, Any]
    rho: float
    sources: list[str] = field(default_factory=list)
    """One `<tool> <path>` per bound argument (constants say `constant`), in argument order."""
    mention: str = PLAIN
    """The mention class of the lead argument's pick."""
    tool: str = ""


def _drop_none_derived(data: dict[str, Any]) -> bool:
    """Drop `derived: None` from every argument's dump; whether any argument had derived counts."""
    any_derived = False
    for lookup in data.get("lookups", {}).values():
        for arg in lookup.get("args", {}).values():
            if arg.get("derived") is None:
                arg.pop("derived", None)
            else:
                any_derived = True
    return any_derived


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
