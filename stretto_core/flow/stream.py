"""Learning from session files without holding them: two passes, one session at a time.

    pass 1   every file's header (its first line): the split and the app filter choose the
             files, and their manifests are joined (`ToolManifest.union`) into the flow's
    pass 2   each chosen file is read, counted (`SessionCounter`) and dropped

so the peak memory is one session and the counts, whatever the number of sessions. The result is
byte for byte `flow.ir.learn` on the same sessions loaded at once.

Counts are a commutative monoid (every count a sum over sessions, `flow.ir.merge` adds them), so
pass 2 can be split: shards of files are counted apart and their partial flows added, in any
order, to the same bytes. `distributed.py` runs the shards on Dask (or Ray).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from stretto_core.errors import StrettoError
from stretto_core.flow.ir import Flow, SessionCounter, _add, _add_into
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, BindingOptions
from stretto_core.learn.served import DEFAULT_RULE, taught_views
from stretto_core.learn.result_fields import FeatureMap
from stretto_core.progress import track
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import Session
from stretto_core.sessions.shared import headers_at, read_into, session_locations
from stretto_core.sessions.splits import SplitFile, in_split, unlabelled
from stretto_core.sessions.state import clear_result_indexes
from stretto_core.sessions.store import LoadReport


@dataclass
class Chosen:
    """The session files one learn counts: its data and its prior, and the manifest of both."""

    files: list[str]
    prior: list[str] = field(default_factory=list)
    manifest: ToolManifest | None = None
    report: LoadReport = field(default_factory=LoadReport)
    unlabelled: int = 0
    """With split `auto`: the data sessions chosen that name no task (all of them are learned)."""
    labelled: int = 0
    """With split `auto`: the data sessions chosen that name a task (its train side only)."""

    def split_said(self) -> str:
        """What split `auto` did, in one line (empty for another split)."""
        if not self.unlabelled and not self.labelled:
            return ""
        parts = []
        if self.unlabelled:
            parts.append(f"{self.unlabelled} sessions with no task label, all learned from")
        if self.labelled:
            parts.append(f"{self.labelled} with a task label, on the train side of the split")
        return "split auto: " + "; ".join(parts) + " (--split all|train|test|none chooses otherwise)"


def choose(paths: Sequence[str], split: str = "all", split_file: SplitFile | None = None,
           apps: Sequence[str] = (), prior: Sequence[str] = (), manifest: ToolManifest | None = None) -> Chosen:
    """Pass 1: the files on the given side of the split (of the given apps), read by header only."""
    if split not in ("auto", "all", "train", "test", "none"):
        raise StrettoError(f"unknown split {split!r}: use auto, train, test, none or all")
    report = LoadReport()
    counted = {True: 0, False: 0}  # data sessions chosen with no task label, and with one

    def pick(locations: Sequence[str], data: bool = True) -> tuple[list[str], ToolManifest | None]:
        chosen: list[str] = []
        joined: ToolManifest | None = None
        for location, header in headers_at(session_locations(locations), report):  # one at a time
            if not in_split(header, split, split_file):
                continue
            if split == "auto" and data:
                counted[unlabelled(header)] += 1
            if apps and header.app not in apps:
                continue
            chosen.append(location)
            if header.manifest is not None:
                joined = header.manifest if joined is None else joined.union(header.manifest)
        return chosen, joined

    files, data_manifest = pick(paths)
    prior_files, prior_manifest = pick(prior, data=False) if prior else ([], None)
    if manifest is None:
        found = [m for m in (data_manifest, prior_manifest) if m is not None]
        if not found:
            if not files and not prior_files:
                manifest = None
            else:
                raise StrettoError("no tool manifest: the sessions carry none; pass --manifest FILE")
        else:
            manifest = found[0] if len(found) == 1 else found[0].union(found[1])
    return Chosen(files, prior_files, manifest, report, unlabelled=counted[True], labelled=counted[False])


def sessions_of(files: Sequence[str], report: LoadReport | None = None) -> Iterator[Session]:
    """The sessions of `files`, read one at a time (problems noted in `report`)."""
    report = report if report is not None else LoadReport()
    for location in files:
        session = read_into(report, location)
        if session is not None:
            yield session


def count_files(files: Sequence[str], manifest: ToolManifest, *, features: FeatureMap | None = None,
                constants: bool = False, role: str = "data",
                binding_options: BindingOptions = DEFAULT_OPTIONS, report: LoadReport | None = None,
                progress: bool = True, rule: str = DEFAULT_RULE) -> Flow:
    """Pass 2 over `files`: their sessions counted one at a time into an underived flow, a
    served one as the served-session `rule` teaches it (`learn/served.py`; a recorded session
    is counted as it is)."""
    counter = SessionCounter(manifest, features=features, constants=constants, role=role,  # type: ignore[arg-type]
                             binding_options=binding_options)
    sessions = sessions_of(files, report)
    with fewer_collections():
        for view, fingerprint in taught_views(track(sessions, "learn", total=len(files), unit="session")
                                              if progress else sessions, rule):
            counter.add(view, fingerprint)
    return counter.flow()


YOUNG_COLLECTION_AFTER = 200_000
"""While counting, the cyclic garbage collector runs after this many new containers (Python's
default: 700). What survives a young collection is mostly the shared result indexes (about 160
lists each), so each collection walks about as much whatever the pace: at 50,000 a τ² learn of
314 sessions spent 29-54 ms in it, at 200,000 5-6 ms; the cycles it is there for are a few a
session (3,278 objects over AgentDojo's 1,667 train sessions, 356 over τ²'s 314, none in WorkBench)."""


@dataclass
class _Pace:
    """Counts running in this process (threads of a Dask worker, say), and the pace before the first."""

    running: int = 0
    before: tuple[int, ...] = ()
    lock: threading.Lock = field(default_factory=threading.Lock)


_pace = _Pace()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Counting allocates millions of short-lived containers and makes almost no reference cycles
    (a session's state is freed by reference counting as soon as it is dropped; τ² sessions leave
    none, a result parsed by `ast.literal_eval` a few closures), so the collector's default pace
    spends a fifth of the time walking the heap for little. Its pace is slowed while counting,
    never stopped (what cycles there are are still freed), and restored when the last count
    running in the process ends. Then the result indexes the counts shared are dropped first:
    they are most of what the counting left alive (40,000 lists for τ² retail's 71 sessions), and
    the young collection the restored pace sets off would walk them all, for nothing."""
    with _pace.lock:
        if _pace.running == 0:
            _pace.before = gc.get_threshold()
            gc.set_threshold(max(_pace.before[0], YOUNG_COLLECTION_AFTER), *_pace.before[1:])
        _pace.running += 1
    try:
        yield
    finally:
        with _pace.lock:
            _pace.running -= 1
            if _pace.running == 0:
                clear_result_indexes()
                gc.set_threshold(*_pace.before)


Counter = Callable[[Sequence[str], str], Flow]
"""Counts files into an underived flow, given the files and their role (`data` or `prior`)."""


def learn_chosen(chosen: Chosen, *, prior_weight: float | None = None, features: FeatureMap | bool | None = None,
                 constants: bool = False, binding_options: BindingOptions = DEFAULT_OPTIONS,
                 counter: Counter | None = None, rule: str = DEFAULT_RULE, derive: bool = True) -> Flow:
    """`flow.ir.learn` over chosen files, counted by `counter` (default: here, one at a time;
    served sessions as `rule` teaches them, `learn/served.py`); `derive=False`: the counts
    alone, for a caller that adds them to others and derives the sum."""
    if not chosen.files and not chosen.prior:
        raise StrettoError("no sessions to learn from")
    assert chosen.manifest is not None
    man = chosen.manifest
    fmap: FeatureMap | None
    if features is True:
        from stretto_core.learn.features import learn_feature_map

        fmap = learn_feature_map(sessions_of(list(chosen.files) + list(chosen.prior)))
    else:
        fmap = features or None

    def here(files: Sequence[str], role: str) -> Flow:
        return count_files(files, man, features=fmap, constants=constants, role=role, rule=rule,
                           binding_options=binding_options, report=chosen.report)

    count = counter or here
    flow = count(chosen.files, "data")
    if chosen.prior:
        prior = count(chosen.prior, "prior")
        weight = 1.0 if prior_weight is None else prior_weight / prior.provenance.sources[0].sessions
        flow = _add(flow, prior, weight)
    return flow.derive() if derive else flow


def shards(files: Sequence[str], n: int) -> list[list[str]]:
    """`files` cut into at most `n` runs of consecutive files, of sizes as equal as can be."""
    n = max(1, min(n, len(files)))
    size, extra = divmod(len(files), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(files[start:end]))
        start = end
    return out


def add_all(parts: Sequence[Flow]) -> Flow:
    """The partial flows added (in the order given: any order gives the same bytes); the first sum
    is a new flow, the rest are added into it in place (`_add_into`: no copy of the total per part)."""
    if len(parts) == 1:
        return parts[0]
    total = _add(parts[0], parts[1])
    for part in parts[2:]:
        _add_into(total, part)
    return total
