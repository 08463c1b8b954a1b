"""Which of the host's tool calls were one LLM turn: an estimate from timing alone.

A proxy sees no model turns, only `tools/call` requests. A model turn that makes several calls
makes them together: the host sends them before the first result comes back. So the proxy
counts one inferred turn per run of calls that overlap in time, where a run closes as soon as
the first of its results is recorded (the turn must be written before that result). A host
that runs one turn's calls one after another, waiting for each result, is counted as one turn
per call; a call sent while an earlier call of its turn is still in its lookups starts a new
turn. Every inferred turn is recorded with `inferred: true`, an estimate, not a count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stretto_core import ToolCall


@dataclass
class _Run:
    calls: list[ToolCall] = field(default_factory=list)
    in_flight: set[str] = field(default_factory=set)
    recorded: bool = False


class TurnInference:
    """Groups overlapping calls into runs; `take_turn` hands out each run's calls once."""

    def __init__(self) -> None:
        self._open: _Run | None = None
        self._run_of: dict[str, _Run] = {}

    def arrived(self, call: ToolCall) -> None:
        """A call came from the host: it joins the open run while that run has calls out."""
        run = self._open
        if run is None or run.recorded or not run.in_flight:
            run = _Run()
            self._open = run
        run.calls.append(call)
        run.in_flight.add(call.call_id)
        self._run_of[call.call_id] = run

    def take_turn(self, call_id: str) -> list[ToolCall] | None:
        """The calls of the turn to record before this call's result, or None if already recorded."""
        run = self._run_of.get(call_id)
        if run is None or run.recorded:
            return None
        run.recorded = True
        return list(run.calls)

    def finished(self, call_id: str) -> None:
        """The host has this call's answer (or gave up on it)."""
        run = self._run_of.pop(call_id, None)
        if run is not None:
            run.in_flight.discard(call_id)
