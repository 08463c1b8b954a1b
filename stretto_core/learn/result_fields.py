"""Result features as served: which fields of a tool's results name a step, and their values.

The model half of result features (see `features` for how fields are chosen): a `FeatureMap`
maps a result to a small feature id, with no numerical libraries, so serving stays light.
"""


from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from stretto_core.learn.steps import NO_FEATURE
from stretto_core.sessions.values import TextResult

MAX_VALUES = 8
"""A candidate field may take at most this many distinct values (more: an id or free text)."""

MIN_VALUES = 2
"""A candidate field must take at least this many distinct values."""

MAX_SHARE = 0.98
"""No value of a candidate may be in more than this share of the tool's results."""

FOLDS = 5
"""Cross-validation folds, grouped by task."""

SELECTION_ALPHA = 1.0
"""The habit's α while selecting fields (fixed, for speed; the served α is learned after)."""

MIN_GAIN = 0.01
"""A field must raise the held-out log-likelihood by at least this many nats per step (1 per 100)."""

MAX_FIELDS_PER_TOOL = 3
"""At most this many fields are read from one tool's results."""

MAX_FIELDS = 8
"""At most this many fields in all."""

MAX_FEATURE_ID = 63
"""Feature ids run 1..63; 0 is no feature."""

MAX_SELECTION_STEPS = 200_000
"""Above this many steps, selection runs on a deterministic subsample of the sessions."""

MISSING = "null"
"""The value of a path a result does not have (or holds null)."""

LEN_BUCKETS = ("0", "1", "2+")
"""A list's length, bucketed."""

_COMPACT_ABOVE = 1 << 31
"""Combined value codes are relabelled above this, so symbol codes stay within int64."""

FieldKey = tuple[str, tuple[str, ...]]


class ResultField(BaseModel):
    """A field of a result: the scalar at `path`, or the bucketed length of the list there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["scalar", "len"]
    path: tuple[str, ...]

    @property
    def key(self) -> FieldKey:
        return (self.kind, self.path)

    @property
    def name(self) -> str:
        where = ".".join(self.path) or "$"
        return f"len({where})" if self.kind == "len" else where

    def value(self, parsed: Any) -> str:
        """This field's value in a parsed result, as the string the ids are keyed by."""
        node = parsed
        for part in self.path:
            if not isinstance(node, dict) or part not in node:
                return MISSING
            node = node[part]
        if self.kind == "len":
            return _len_bucket(node) if isinstance(node, list) else MISSING
        return _scalar_value(node)


class FeatureMap(BaseModel):
    """The learned features: each tool's chosen fields, and the ids of their value combinations.

    `ids[tool]` lists [[value, …], id] sorted by values; the values are training values verbatim.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    fields: dict[str, list[ResultField]] = {}
    ids: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    _lookup: dict[str, dict[tuple[str, ...], int]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        self._lookup = {tool: {tuple(values): i for values, i in pairs} for tool, pairs in self.ids.items()}

    def has_fields(self, tool: str) -> bool:
        return bool(self.fields.get(tool))

    def values_of(self, tool: str, parsed: Any) -> tuple[str, ...]:
        """The values of a tool's chosen fields in a parsed result."""
        return tuple(f.value(parsed) for f in self.fields.get(tool, ()))

    def feature_of(self, tool: str, parsed: Any) -> int:
        """The feature id of a tool's parsed result: 0 when the tool has no fields or the
        combination of values was never seen in training."""
        fields = self.fields.get(tool)
        if not fields or isinstance(parsed, TextResult):
            return NO_FEATURE
        return self._lookup.get(tool, {}).get(tuple(f.value(parsed) for f in fields), NO_FEATURE)

    def describe(self, tool: str, feature: int) -> str:
        """A feature id in words, e.g. `status=pending, len(items)=2+`."""
        if feature == NO_FEATURE:
            return "no feature"
        for values, i in self.ids.get(tool, ()):
            if i == feature:
                return ", ".join(f"{f.name}={v}" for f, v in zip(self.fields[tool], values))
        return f"unknown feature {feature}"


def _scalar_value(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "{…}"
    if isinstance(value, (list, tuple)):
        return "[…]"
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def _len_bucket(items: list) -> str:
    return LEN_BUCKETS[min(len(items), 2)]


def candidate_values(parsed: Any) -> dict[FieldKey, str]:
    """Every candidate field of one parsed result, with its value (see the module docstring)."""
    out: dict[FieldKey, str] = {}
    if isinstance(parsed, dict):
        for k, v in parsed.items():
            k = str(k)
            if isinstance(v, dict):
                for k2, v2 in v.items():
                    if isinstance(v2, list):
                        out[("len", (k, str(k2)))] = _len_bucket(v2)
                    elif not isinstance(v2, dict):
                        out[("scalar", (k, str(k2)))] = _scalar_value(v2)
            elif isinstance(v, list):
                out[("len", (k,))] = _len_bucket(v)
            else:
                out[("scalar", (k,))] = _scalar_value(v)
    elif isinstance(parsed, list):
        out[("len", ())] = _len_bucket(parsed)
    elif parsed is not None and not isinstance(parsed, TextResult):
        out[("scalar", ())] = _scalar_value(parsed)
    return out


def candidate_fields(outputs: Sequence[dict[FieldKey, str]], max_values: int = MAX_VALUES,
                     max_share: float = MAX_SHARE) -> list[ResultField]:
    """The candidates of one tool that pass the filter, given each result's `candidate_values`."""
    n = len(outputs)
    if n == 0:
        return []
    seen: dict[FieldKey, Counter[str]] = {}
    dead: set[FieldKey] = set()
    for values in outputs:
        for key, value in values.items():
            if key in dead:
                continue
            counter = seen.setdefault(key, Counter())
            counter[value] += 1
            if len(counter) > max_values:
                dead.add(key)
    kept: list[ResultField] = []
    partitions: set[tuple[int, ...]] = set()
    for key in sorted(k for k in seen if k not in dead):
        counter = seen[key]
        missing = n - sum(counter.values())
        if missing:
            counter[MISSING] += missing
        if not MIN_VALUES <= len(counter) <= max_values:
            continue
        if max(counter.values()) > max_share * n:
            continue
        partition = _partition([o.get(key, MISSING) for o in outputs])
        if partition in partitions:
            continue
        partitions.add(partition)
        kept.append(ResultField(kind=key[0], path=key[1]))
    return kept


def _partition(values: list[str]) -> tuple[int, ...]:
    """The values relabelled by first appearance: two fields that split alike look alike."""
    labels: dict[str, int] = {}
    return tuple(labels.setdefault(v, len(labels)) for v in values)
