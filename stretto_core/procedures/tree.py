"""ID3 over binary features, with the depth chosen by cross-validation over tasks.

Decision mining learns a process's branches from its logs: at one site, the examples are the
training steps taken there (the state's features, and the action the demonstrator took next).
A split is the feature of greatest information gain; a node stops at the chosen depth, when it is
pure, or when no feature gains. Depth is chosen by grouped k-fold cross-validation, the groups
being tasks, so a depth that only memorizes tasks is not rewarded: a held-out task's steps must
be predicted by trees grown on other tasks.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from stretto_core.procedures.ir import Leaf, Node, Option, Split

MAX_DEPTH = 10
"""The deepest tree cross-validation may choose."""

FOLDS = 5
"""Folds of the cross-validation over tasks (fewer when there are fewer tasks)."""

MIN_GAIN = 1e-9


@dataclass(frozen=True)
class Example:
    """One training step at a site: the state's features, the action taken, the task it is from."""

    features: frozenset[str]
    label: str
    group: str


def _entropy(counts: Counter[str] | dict[str, int], total: int) -> float:
    if total <= 0:
        return 0.0
    return -sum((c / total) * math.log2(c / total) for c in counts.values() if c)


def _leaf(examples: list[Example]) -> Leaf:
    counts = Counter(e.label for e in examples)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return Leaf(options=[Option(action=a, count=c) for a, c in ranked])


def best_split(examples: list[Example]) -> tuple[str, float] | None:
    """The feature of greatest information gain (ties to the smaller name), or None."""
    total = len(examples)
    labels = Counter(e.label for e in examples)
    base = _entropy(labels, total)
    having: dict[str, Counter[str]] = defaultdict(Counter)
    for e in examples:
        for f in e.features:
            having[f][e.label] += 1
    best: tuple[str, float] | None = None
    for feature in sorted(having):
        yes = having[feature]
        n_yes = sum(yes.values())
        if n_yes == total:
            continue
        no = {label: labels[label] - yes.get(label, 0) for label in labels}
        n_no = total - n_yes
        gain = base - (n_yes / total) * _entropy(yes, n_yes) - (n_no / total) * _entropy(no, n_no)
        if gain > MIN_GAIN and (best is None or gain > best[1] + MIN_GAIN):
            best = (feature, gain)
    return best


def grow(examples: list[Example], depth: int) -> Node:
    """A tree of at most `depth` splits from root to leaf."""
    if depth <= 0 or len({e.label for e in examples}) <= 1:
        return _leaf(examples)
    split = best_split(examples)
    if split is None:
        return _leaf(examples)
    feature = split[0]
    yes = [e for e in examples if feature in e.features]
    no = [e for e in examples if feature not in e.features]
    return Split(feature=feature, yes=grow(yes, depth - 1), no=grow(no, depth - 1))


def predict(node: Node, features: set[str] | frozenset[str]) -> list[Option]:
    """The options of the leaf the features reach, in the order to try them."""
    while isinstance(node, Split):
        node = node.yes if node.feature in features else node.no
    return list(node.options)


def depth_of(node: Node) -> int:
    if isinstance(node, Split):
        return 1 + max(depth_of(node.yes), depth_of(node.no))
    return 0


@dataclass
class _Grown:
    """A tree grown once to full depth, with each node's first option: the tree of every
    smaller depth is its prefix (ID3's splits do not depend on the depth limit)."""

    first: str
    feature: str | None = None
    yes: "_Grown | None" = None
    no: "_Grown | None" = None


def _first(examples: list[Example]) -> str:
    counts = Counter(e.label for e in examples)
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def _grow_once(examples: list[Example], depth: int) -> _Grown:
    node = _Grown(_first(examples))
    if depth <= 0 or len({e.label for e in examples}) <= 1:
        return node
    split = best_split(examples)
    if split is None:
        return node
    node.feature = split[0]
    node.yes = _grow_once([e for e in examples if node.feature in e.features], depth - 1)
    node.no = _grow_once([e for e in examples if node.feature not in e.features], depth - 1)
    return node


def _predictions(node: _Grown, features: frozenset[str], max_depth: int) -> list[str]:
    """The first option of the tree of each depth 0..max_depth for these features."""
    out = []
    for _ in range(max_depth + 1):
        out.append(node.first)
        if node.feature is not None:
            node = node.yes if node.feature in features else node.no  # type: ignore[assignment]
    return out


def choose_depth(examples: list[Example], max_depth: int = MAX_DEPTH,
                 folds: int = FOLDS) -> tuple[int, float | None]:
    """The smallest depth with the best held-out accuracy over tasks, and that accuracy.

    Each fold's tree is grown once to `max_depth`; the tree of a smaller depth is its prefix.
    With fewer than two tasks there is nothing to hold out: the full depth, and no accuracy.
    """
    groups = sorted({e.group for e in examples})
    if len(groups) < 2:
        return max_depth, None
    k = min(folds, len(groups))
    fold_of = {g: i % k for i, g in enumerate(groups)}
    right = [0] * (max_depth + 1)
    for fold in range(k):
        train = [e for e in examples if fold_of[e.group] != fold]
        held = [e for e in examples if fold_of[e.group] == fold]
        if not train or not held:
            continue
        root = _grow_once(train, max_depth)
        for e in held:
            for depth, label in enumerate(_predictions(root, e.features, max_depth)):
                right[depth] += label == e.label
    best = max(range(max_depth + 1), key=lambda d: (right[d], -d))
    return best, right[best] / len(examples)
