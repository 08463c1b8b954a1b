"""Result features: the few fields of a tool's result that tell what the agent does next.

A step's feature (`steps.py`) is an id for the values its result holds at a tool's chosen
fields. The fields are learned from recorded sessions, as the reference implementation does:

Candidates. From results that parse to JSON-like structures (dicts, lists, JSON scalars; not
plain text), of calls that did not fail:
    scalar a      each top-level scalar;
    scalar a.b    each scalar one level down, under a top-level object;
    len a, a.b    the length of a list at such a path, bucketed 0 / 1 / 2+;
    len $         the length of a result that is itself a list.
A result without the path has the value `null` there.

Filter. A candidate is kept if it takes MIN_VALUES..max_values distinct values over the tool's
results and no value is in more than MAX_SHARE of them: ids and free text take too many values,
and a field that is nearly always the same tells nothing. Candidates that split a tool's results
the same way as an earlier one (in name order) are dropped as duplicates.

Selection. Greedy forward selection: start with no fields; each round add the candidate that
most raises the held-out log-likelihood of next actions under the habit (`counts.py`, with the
fixed α SELECTION_ALPHA), estimated by FOLDS-fold cross-validation grouped by task, so a field
that merely identifies a task cannot help on tasks it has not seen. Stop when the best gain is
below min_gain nats per step, or at max_fields_per_tool fields for a tool or max_fields overall.
The target is the next action only, never its feature, so likelihoods under different fields
are comparable. The cross-validation counts every fold once and predicts each held-out fold
from the total minus its own counts, vectorized with numpy: one candidate costs a few ms.
Sessions beyond MAX_SELECTION_STEPS steps are subsampled deterministically (by a hash of
their session id) for the selection only; the ids are read from all results.

Ids. Each observed combination of a tool's chosen values gets an id 1..MAX_FEATURE_ID, in
sorted order of the values (the most frequent MAX_FEATURE_ID combinations when there are more);
a combination not seen in training is NO_FEATURE (0).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stretto_core.errors import StrettoError
from stretto_core.sessions.model import Session

try:  # the selection's cross-validation is vectorized: the one place learning pays for numpy
    import numpy as np
except ImportError as exc:  # pragma: no cover - exercised by tests/test_lean_core.py in a subprocess
    raise StrettoError('learning result features (--features) needs numpy: pip install "stretto[features]"') from exc
from stretto_core.learn.steps import FAILED, session_steps
from stretto_core.sessions.values import parse_result

from stretto_core.learn.result_fields import (FOLDS, FeatureMap, FieldKey, MAX_FEATURE_ID, MAX_FIELDS,
                                              MAX_FIELDS_PER_TOOL, MAX_SELECTION_STEPS, MAX_SHARE, MAX_VALUES,
                                              MIN_GAIN, MISSING, ResultField, SELECTION_ALPHA,
                                              _COMPACT_ABOVE, candidate_fields, candidate_values)


# -- selection -----------------------------------------------------------------------------------

@dataclass
class Chosen:
    """One selected field, and the held-out log-likelihood it added (nats over all steps)."""

    tool: str
    field: ResultField
    gain: float


@dataclass
class Selection:
    """What `select_features` did: the map, the fields in the order chosen, and the scores."""

    feature_map: FeatureMap
    chosen: list[Chosen] = field(default_factory=list)
    candidates: int = 0
    steps: int = 0
    sessions: int = 0
    baseline: float = 0.0
    final: float = 0.0


@dataclass
class _Step:
    action: str
    outcome: str
    tool: str | None
    values: dict[FieldKey, str] | None


def learn_feature_map(sessions: Sequence[Session], **options: Any) -> FeatureMap:
    """The feature map learned from sessions (see `select_features` for the options)."""
    return select_features(sessions, **options).feature_map


def select_features(sessions: Sequence[Session], *, max_values: int = MAX_VALUES,
                    max_share: float = MAX_SHARE, min_gain: float = MIN_GAIN,
                    max_fields_per_tool: int = MAX_FIELDS_PER_TOOL, max_fields: int = MAX_FIELDS,
                    folds: int = FOLDS, alpha: float = SELECTION_ALPHA,
                    max_steps: int = MAX_SELECTION_STEPS) -> Selection:
    """Learn which result fields predict the agent's next action (module docstring)."""
    abstracted = [(_group_of(s), s.session_id, _abstract(s)) for s in sessions]
    outputs: dict[str, list[dict[FieldKey, str]]] = {}
    for _, _, steps in abstracted:
        for st in steps:
            if st.values is not None and st.tool is not None:
                outputs.setdefault(st.tool, []).append(st.values)
    candidates = [(tool, f) for tool in sorted(outputs)
                  for f in candidate_fields(outputs[tool], max_values, max_share)]
    used = _subsample(abstracted, max_steps)
    data = _Matrix(used, candidates, folds, alpha)
    selection = Selection(FeatureMap(), candidates=len(candidates), steps=data.n,
                          sessions=len(used))
    score = selection.baseline = selection.final = data.score([])
    chosen: list[int] = []
    per_tool: Counter[str] = Counter()
    while len(chosen) < max_fields and data.n:
        best, best_score = -1, -np.inf
        for k, (tool, _) in enumerate(candidates):
            if k in chosen or per_tool[tool] >= max_fields_per_tool:
                continue
            s = data.score(chosen + [k])
            if s > best_score:
                best, best_score = k, s
        if best < 0 or best_score - score < min_gain * data.n:
            break
        tool, f = candidates[best]
        selection.chosen.append(Chosen(tool, f, float(best_score - score)))
        chosen.append(best)
        per_tool[tool] += 1
        score = selection.final = float(best_score)
    selection.feature_map = _build_map(selection.chosen, outputs)
    return selection


def _group_of(session: Session) -> str:
    h = session.header
    return f"{h.app or ''}\x1f{h.task_id}" if h.task_id is not None else f"session\x1f{h.session_id}"


def _abstract(session: Session) -> list[_Step]:
    out: list[_Step] = []
    for record in session_steps(session):
        step, result = record.step, record.result
        values = None
        if record.call is not None and step.outcome != FAILED and result is not None:
            values = candidate_values(parse_result(result.content, result.parsed))
        out.append(_Step(step.action, step.outcome, record.call.tool if record.call else None, values))
    return out


def _subsample(abstracted: list[tuple[str, str, list[_Step]]], max_steps: int
               ) -> list[tuple[str, str, list[_Step]]]:
    total = sum(len(steps) for _, _, steps in abstracted)
    if total <= max_steps:
        return abstracted
    ranked = sorted(abstracted, key=lambda x: hashlib.sha256(x[1].encode()).hexdigest())
    out, n = [], 0
    for item in ranked:
        if n + len(item[2]) > max_steps:
            continue
        out.append(item)
        n += len(item[2])
    return out


def _build_map(chosen: list[Chosen], outputs: dict[str, list[dict[FieldKey, str]]]) -> FeatureMap:
    fields: dict[str, list[ResultField]] = {}
    for c in chosen:
        fields.setdefault(c.tool, []).append(c.field)
    ids: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    for tool in sorted(fields):
        combos = Counter(tuple(v.get(f.key, MISSING) for f in fields[tool]) for v in outputs[tool])
        kept = sorted(combos, key=lambda c: (-combos[c], c))[:MAX_FEATURE_ID]
        ids[tool] = [(c, i) for i, c in enumerate(sorted(kept), start=1)]
    return FeatureMap(fields={t: fields[t] for t in sorted(fields)}, ids=ids)


class _Matrix:
    """The steps of the selection sessions as arrays, for scoring field sets by cross-validation."""

    def __init__(self, sessions: list[tuple[str, str, list[_Step]]],
                 candidates: list[tuple[str, ResultField]], folds: int, alpha: float) -> None:
        self.alpha = alpha
        groups = sorted({g for g, _, _ in sessions}, key=lambda g: hashlib.sha256(g.encode()).hexdigest())
        fold_of = {g: i % max(folds, 1) for i, g in enumerate(groups)}
        self.folds = max(1, min(folds, len(groups)))
        actions = sorted({st.action for _, _, steps in sessions for st in steps})
        action_id = {a: i for i, a in enumerate(actions)}
        bases: dict[tuple[str, str], int] = {}
        fold, action, base, first, second = [], [], [], [], []
        where: list[list[int]] = [[] for _ in candidates]
        codes: list[list[int]] = [[] for _ in candidates]
        value_ids: list[dict[str, int]] = [{} for _ in candidates]
        by_tool: dict[str, list[int]] = {}
        for k, (tool, _) in enumerate(candidates):
            by_tool.setdefault(tool, []).append(k)
        for group, _, steps in sessions:
            for t, st in enumerate(steps):
                fold.append(fold_of[group] % self.folds)
                action.append(action_id[st.action])
                base.append(bases.setdefault((st.action, st.outcome), len(bases)))
                first.append(t >= 1)
                second.append(t >= 2)
                if st.values is None:
                    continue
                for k in by_tool.get(st.tool or "", ()):
                    value = st.values.get(candidates[k][1].key, MISSING)
                    where[k].append(len(action) - 1)
                    codes[k].append(value_ids[k].setdefault(value, len(value_ids[k]) + 1))
        self.n = len(action)
        self.vocab = max(len(actions), 1)
        self.fold = np.asarray(fold, dtype=np.int64)
        self.action = np.asarray(action, dtype=np.int64)
        self.base = np.asarray(base, dtype=np.int64)
        self.has1 = np.asarray(first, dtype=bool)
        self.has2 = np.asarray(second, dtype=bool)
        self.codes = []
        for k in range(len(candidates)):
            column = np.zeros(self.n, dtype=np.int64)
            column[np.asarray(where[k], dtype=np.int64)] = codes[k]
            self.codes.append(column)
        self.radix = [len(v) + 1 for v in value_ids]

    def score(self, chosen: list[int]) -> float:
        """The held-out log-likelihood of every step's action, with these candidates as features."""
        if self.n == 0:
            return 0.0
        feature = np.zeros(self.n, dtype=np.int64)
        mult = 1
        for k in chosen:
            feature += self.codes[k] * mult
            mult *= self.radix[k]
            if mult > _COMPACT_ABOVE:  # relabel before the mixed-radix code could overflow
                _, feature = np.unique(feature, return_inverse=True)
                mult = int(feature.max()) + 1
        _, symbol = np.unique(self.base * mult + feature, return_inverse=True)
        start = int(symbol.max()) + 1
        prev1 = np.full(self.n, start, dtype=np.int64)
        prev1[1:] = symbol[:-1]
        prev1[~self.has1] = start
        prev2 = np.full(self.n, start, dtype=np.int64)
        prev2[2:] = symbol[:-2]
        prev2[~self.has2] = start
        _, ctx2 = np.unique(prev2 * (start + 1) + prev1, return_inverse=True)
        p = np.full(self.n, 1.0 / self.vocab)
        for ctx in (np.zeros(self.n, dtype=np.int64), prev1, ctx2):
            p = self._level(ctx, p)
        return float(np.log(p).sum())

    def _level(self, ctx: np.ndarray, lower: np.ndarray) -> np.ndarray:
        """One back-off level, each step predicted from the counts of the other folds."""
        f, fold = self.folds, self.fold
        _, pair = np.unique(ctx * self.vocab + self.action, return_inverse=True)
        n_pairs, n_ctx = int(pair.max()) + 1, int(ctx.max()) + 1
        pair_total = np.bincount(pair, minlength=n_pairs)
        pair_fold = np.bincount(fold * n_pairs + pair, minlength=f * n_pairs)
        ctx_total = np.bincount(ctx, minlength=n_ctx)
        ctx_fold = np.bincount(fold * n_ctx + ctx, minlength=f * n_ctx)
        hits = pair_total[pair] - pair_fold[fold * n_pairs + pair]
        seen = ctx_total[ctx] - ctx_fold[fold * n_ctx + ctx]
        a = self.alpha
        return np.where(seen > 0, (hits + a * lower) / (seen + a), lower)
