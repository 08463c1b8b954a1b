"""A result walked for a focused index: leaves that may be in focus with their paths, the rest bare.

A served result is indexed on its focus paths only (`focus.index_focused`); of every other value
it keeps just the key-like ones. `values.leaves_addressed` gives every leaf its path and address
first, which is most of indexing a long result whose focus is a small part of it (a τ² user's
details beside their orders). Here a subtree whose path no focus path can lie under is walked for
its values alone: no path, no address, no tuple per leaf.

The leaves that may be in focus come out exactly as `leaves_addressed` gives them, in the same
order. Where that walk would stop early or read a node its own way (near `MAX_LEAVES`,
`MAX_CONTAINERS` or `MAX_DEPTH`, or text read as lines) this walk gives up (`split_leaves`
returns None) and the caller takes `leaves_addressed`: what is indexed never differs.
"""

from __future__ import annotations

from typing import Any, Callable

from stretto_core.sessions.limits import MAX_DEPTH
from stretto_core.sessions.values import MAX_CONTAINERS, MAX_LEAVES, TextResult

_SCALARS = (str, int, float)
_LISTS = (list, tuple, set, frozenset)

Leaf = tuple[str, tuple[int, ...], Any]

NAMES = "*~"
"""How a path of an object's field names ends (`focus.KEY_NAMES`)."""


class _GiveUp(Exception):
    """The result is one `leaves_addressed` walks its own way (bounds, text): take its walk."""


class _Walk:
    """One walk's outputs and counts (a class, so the recursion passes one argument, not five)."""

    __slots__ = ("may_hold", "covers", "placed", "loose", "containers")

    def __init__(self, may_hold: Callable[[str], bool], covers: Callable[[str], bool]) -> None:
        self.may_hold = may_hold
        self.covers = covers
        self.placed: list[Leaf] = []
        self.loose: list[Any] = []
        self.containers = 0

    def enter(self, node: Any, depth: int) -> None:
        """Count a container; give up well before any bound of `leaves_addressed` could bite."""
        self.containers += 1
        if (depth >= MAX_DEPTH - 1 or self.containers >= MAX_CONTAINERS - 1
                or len(self.placed) + len(self.loose) + 2 * len(node) >= MAX_LEAVES - 1):
            raise _GiveUp

    def placed_node(self, node: Any, path: str, address: tuple[int, ...], depth: int,
                    inside: bool = False) -> None:
        """`values._collect` for a node whose path a focus path may lie under. `inside`: the path
        lies under a focus prefix (`covers`), so every path below it is held but field names'
        (which `may_hold` is asked about alone)."""
        if type(node) in _SCALARS:
            self.placed.append((path, address, node))
        elif isinstance(node, dict):
            self.enter(node, depth)
            inside = inside or self.covers(path)
            names = path + ".*~"
            out = self.placed if self.may_hold(names) else None
            for key in node:
                if isinstance(key, _SCALARS) and not isinstance(key, bool):
                    if out is not None:
                        out.append((names, address, key))
                    else:
                        self.loose.append(key)
            for key, child in node.items():
                child_path = f"{path}.{key}"
                if inside and not child_path.endswith(NAMES):
                    self.placed_node(child, child_path, address, depth + 1, True)
                else:
                    self.child(child, child_path, address, depth + 1)
        elif isinstance(node, _LISTS):
            self.enter(node, depth)
            child_path = path + "[*]"
            if not inside and not self.may_hold(child_path):
                for child in node:
                    self.loose_node(child, depth + 1)
                return
            for i, child in enumerate(node):
                if type(child) in _SCALARS:
                    self.placed.append((child_path, address + (i,), child))
                else:
                    self.placed_node(child, child_path, address + (i,), depth + 1, inside)
        else:
            self.leaf(node, path, address)

    def child(self, node: Any, path: str, address: tuple[int, ...], depth: int) -> None:
        """An object's field: with its path when a focus path may lie under it, else bare."""
        if self.may_hold(path):
            self.placed_node(node, path, address, depth)
        else:
            self.loose_node(node, depth)

    def loose_node(self, node: Any, depth: int) -> None:
        """Every leaf under `node`, as a value alone (no focus path lies under it)."""
        if type(node) in _SCALARS:
            self.loose.append(node)
        elif isinstance(node, dict):
            self.enter(node, depth)
            loose = self.loose
            for key in node:
                if isinstance(key, _SCALARS) and not isinstance(key, bool):
                    loose.append(key)
            for child in node.values():
                if type(child) in _SCALARS:
                    loose.append(child)
                else:
                    self.loose_node(child, depth + 1)
        elif isinstance(node, _LISTS):
            self.enter(node, depth)
            loose = self.loose
            for child in node:
                if type(child) in _SCALARS:
                    loose.append(child)
                else:
                    self.loose_node(child, depth + 1)
        elif isinstance(node, TextResult):
            raise _GiveUp
        elif node is not None:
            self.loose.append(_leaf(node))

    def leaf(self, node: Any, path: str, address: tuple[int, ...]) -> None:
        """A node that is neither a scalar nor a container, as `values._collect` reads it."""
        if isinstance(node, TextResult):
            raise _GiveUp
        if node is not None:
            self.placed.append((path, address, _leaf(node)))


def _leaf(value: Any) -> Any:
    """`values._leaf`: JSON's kinds as they are, anything else as its text."""
    return value if isinstance(value, _SCALARS) else str(value)


def _covers_none(path: str) -> bool:
    return False


def split_leaves(structure: Any, may_hold: Callable[[str], bool],
                 covers: Callable[[str], bool] = _covers_none) -> tuple[list[Leaf], list[Any]] | None:
    """(the leaves at paths a focus path may lie under, as `leaves_addressed` gives them and in its
    order; the value of every other leaf), or None where `leaves_addressed` must walk instead.

    `may_hold(path)`: some focus path is `path` or lies under it, or `path` lies under a focus
    prefix (`ToolFocus.may_hold`); a leaf whose path it denies is surely out of focus.
    `covers(path)`: `path` lies under a focus prefix (`ToolFocus.covers`), so `may_hold` would say
    yes to every path below it but field names': it is not asked there (the same leaves, fewer calls).
    """
    walk = _Walk(may_hold, covers)
    try:
        walk.child(structure, "$", (), 0)
    except _GiveUp:
        return None
    except RecursionError:  # never within MAX_DEPTH; the general walk decides what to do
        return None
    return walk.placed, walk.loose
