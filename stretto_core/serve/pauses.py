"""Garbage collection off the request path: a served process that never pauses an agent's call.

CPython's collector runs whenever enough containers were made, in whichever call made them: a
young collection costs what was made lately, but a full one scans every container alive, and a
server with thousands of sessions open holds a million of them (a full pass then costs most of a
second, inside some agent's tool call). Served sessions hold no reference cycle (`ToolState`
keeps none, so a dropped session is freed by its reference counts alone), so a serving process
needs full collections only for its host's own garbage, and can choose when to run them:

- `settle()` after a flow is loaded: one collection, then `gc.freeze()`: the imports, the flow
  and its tables move where no collection scans them again;
- `Collector`, for a process that serves requests (the MCP proxy, a long-lived server): automatic
  collection off; `between_requests()` after each reply is written runs the young collections
  that are due (their cost bounded by what the last requests made) and, instead of a full
  collection, freezes what survived them (so the population a collection scans stays small);
  `when_idle()` runs a full collection when no request is in flight (a timer's job).

    from stretto_core.serve.pauses import Collector, settle
    settle()                       # after Stretto(flow=...) loaded the flow
    collector = Collector().start()
    ...                            # after each response is sent:
    collector.between_requests()
"""

from __future__ import annotations

import gc
import time

YOUNG = 700
"""Containers made between two young collections (CPython's own first threshold)."""

MIDDLE = 10
"""Young collections between two collections of the middle generation (CPython's own)."""

TENURE_AFTER = 10
"""Middle collections after which what survived them is frozen (where a full collection would run)."""


def settle() -> None:
    """Collect once, then freeze everything alive: what was loaded (a flow, its tables, the
    imports) is never scanned by a collection again. Call it after loading a flow."""
    gc.collect()
    gc.freeze()


class Collector:
    """The collector's schedule, run between requests instead of inside them."""

    def __init__(self, young: int = YOUNG, middle: int = MIDDLE, tenure_after: int = TENURE_AFTER) -> None:
        self.young, self.middle, self.tenure_after = young, middle, tenure_after
        self._was_enabled: bool | None = None
        self._youngs = 0
        self._middles = 0
        self.collections = 0
        """Collections run by this schedule (young, middle and full)."""
        self.frozen = 0
        """Times what survived was frozen instead of a full collection."""
        self.seconds = 0.0
        """CPU seconds this schedule spent (all of it between requests)."""

    def start(self) -> "Collector":
        """Turn automatic collection off (for as long as this schedule runs)."""
        if self._was_enabled is None:
            self._was_enabled = gc.isenabled()
            gc.disable()
        return self

    def stop(self) -> None:
        """Automatic collection as it was before `start`."""
        if self._was_enabled:
            gc.enable()
        self._was_enabled = None

    def between_requests(self) -> None:
        """Run the collection that is due, if any: call it after a reply is written."""
        if gc.get_count()[0] < self.young:
            return
        started = time.process_time()
        self._youngs += 1
        if self._youngs < self.middle:
            gc.collect(0)
        else:  # a middle collection; after `tenure_after` of them, freeze what survived them (it is
            self._youngs = 0  # long-lived now) instead of a full collection over every session open
            gc.collect(1)
            self._middles += 1
            if self._middles >= self.tenure_after:
                self._middles = 0
                gc.freeze()
                self.frozen += 1
        self.collections += 1
        self.seconds += time.process_time() - started

    def when_idle(self) -> None:
        """A full collection of everything, frozen or not (garbage cycles a host made are freed
        here): for when no request is in flight."""
        started = time.process_time()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.collections += 1
        self.seconds += time.process_time() - started


_active: Collector | None = None
"""The schedule a process that serves requests started (`serve_without_pauses`); None: CPython's own."""


def serve_without_pauses() -> Collector:
    """For a process stretto owns (the proxy): the flow loaded is settled, and collections run
    between requests from now on (`after_reply`, `when_idle`). Returns the schedule."""
    global _active
    settle()
    if _active is None:
        _active = Collector().start()
    return _active


def stop_schedule() -> None:
    """CPython's own schedule again (the process stops serving)."""
    global _active
    if _active is not None:
        _active.stop()
        _active = None


def after_reply() -> None:
    """A reply was written: the collection that is due, if a schedule runs (else nothing)."""
    if _active is not None:
        _active.between_requests()


def when_idle() -> None:
    """No request in flight for a while: a full collection, if a schedule runs (else nothing)."""
    if _active is not None:
        _active.when_idle()
