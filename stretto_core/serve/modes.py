"""Serving a flow in a mode it learned too few sessions of: the reach shrunk towards the habit (off by default).

`flow/modes.py` says why, when and how much: where the flow learned sessions of the other mode
and n_m < 30 of the served one (user present or solo), the reach a candidate is scored by is

    r'(t | h) = w · r(t | h) + (1 − w) · p(t | h),    w = n_m / 30.

`ModeShrunk` wraps any `FlowModel` (the runtime, or an ablation's variant of it) and changes
only `reach`; the next-step rule, bindings, thresholds and guards are the wrapped model's. The
engine gives each session the model of its mode (`Engine.model_for`), in replay and live alike.
"""

from __future__ import annotations

from typing import Any, Sequence

from stretto_core.flow.checks import MAX_ORDER
from stretto_core.flow.modes import SHRINK_BY_MODE, served_weight


class ModeShrunk:
    """A `FlowModel` whose reach is w·r + (1 − w)·p, everything else the wrapped model's."""

    def __init__(self, model: Any, weight: float) -> None:
        self.model = model
        self.weight = weight
        self.manifest = model.manifest
        self._habit_of: tuple[tuple[str, ...], dict[str, float]] | None = None

    def reach(self, history: Sequence[str], tool: str) -> float:
        return self._shrunk(history, tool, self.model.reach(history, tool))

    def reach_given(self, history: Sequence[str], tool: str, state: Any, site: str) -> float:
        """The wrapped model's reach given what the user said (its intent rules), then shrunk: without
        this the speculator would find the wrapped model's `reach_given` and skip the shrinking."""
        given = getattr(self.model, "reach_given", None)
        r = self.model.reach(history, tool) if given is None else given(history, tool, state, site)
        return self._shrunk(history, tool, r)

    def _shrunk(self, history: Sequence[str], tool: str, r: float) -> float:
        if self.weight >= 1.0:
            return r
        key = tuple(history[-MAX_ORDER:])  # no flow's contexts read further back
        cached = self._habit_of  # one read: the engine shares this model between sessions (and threads)
        if cached is None or cached[0] != key:
            cached = self._habit_of = (key, self.model.next_step(history))
        return self.weight * r + (1.0 - self.weight) * cached[1].get(tool, 0.0)

    def __getattr__(self, name: str) -> Any:  # read_tools, next_step, bind, threshold, symbols, flow
        return getattr(self.model, name)


def model_for_mode(model: Any, solo: bool, shrink: bool = SHRINK_BY_MODE) -> Any:
    """The model a session of this mode is served by: `model` itself, or it with its reach shrunk
    (only with `shrink`: off by default, `flow/modes.py` says why)."""
    flow = getattr(model, "flow", None)
    if flow is None:
        return model
    weight = served_weight(flow, solo, shrink)
    return model if weight >= 1.0 else ModeShrunk(model, weight)
