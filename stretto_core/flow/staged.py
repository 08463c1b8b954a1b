"""A flow that takes new sessions one at a time: what `flow stage` runs on every session.

`merge_flows(flow, learn([session]))` adds one session correctly but re-adds the whole flow's
counts, re-validates every number of the sum and derives all of it again: tens of milliseconds
for a session whose own counting costs a few. `StagedFlow` converts the flow's counts into live,
mutable counters once; `add(session)` then counts the session straight into them (the very
counting a batch learn does, `SessionCounter.add`), and `flow()` writes the derived flow when one
is asked for, deriving again only what the sessions since the last refresh changed.

    staged = StagedFlow(load_flow("flow.json"))
    staged.add(session)                 # a few milliseconds: counting only
    save_flow(staged.flow(), "flow.json")

The flow it writes is byte-identical to a batch `learn` of the same sessions (the flow's and the
added ones) when the added sessions' tool manifests agree with the flow's: sessions of one app,
the usual case. A session whose manifest differs is counted under the union of both (as a batch
learn would count it), but the sessions counted before it are not counted again.
"""

from __future__ import annotations

from typing import Any

from stretto_core.flow.ir import (FLOW_FORMAT_VERSION, ContractCounts, Flow, FlowSource, Provenance, _merge_sources,
                                  _pin_contracts)
from stretto_core.learn.alpha import alpha_posterior
from stretto_core.learn.bindings import add_session, compile_table
from stretto_core.learn.counts import Counts, vocabulary
from stretto_core.learn.intent import IntentRule, IntentTable, common_words, count_session as count_intent, site_rules
from stretto_core.learn.reach_alpha import reach_alpha_posterior
from stretto_core.learn.steps import session_symbols
from stretto_core.sessions.fingerprint import session_fingerprint
from stretto_core.sessions.model import Session

NEW_SESSIONS = ("data", 1.0)
"""The body of sessions a staged session joins: data sessions, each weighing one."""


class StagedFlow:
    """A flow's counts kept live: `add` counts a session in, `flow` writes the flow out."""

    def __init__(self, flow: Flow) -> None:
        self.manifest = flow.manifest
        self.features = flow.features
        self.counts: Counts = Counts.from_model(flow.counts)
        self.bindings = flow.bindings.model_copy(deep=True)
        self.contracts: ContractCounts = flow.contracts.model_copy(deep=True)
        self.intent = flow.intent.model_copy(deep=True)
        self.sources: list[FlowSource] = [s.model_copy(deep=True) for s in flow.provenance.sources]
        self.learned: set[str] | None = None if flow.provenance.learned is None else set(flow.provenance.learned)
        """The fingerprints of the sessions counted (None: a flow that recorded none, and nothing added)."""
        self.kept: dict[str, Any] = {"thresholds": dict(flow.thresholds), "promotion": flow.promotion,
                                     "site_calibration": flow.site_calibration}
        self.added = 0
        """Sessions counted in since the flow was staged."""
        self._derived: Flow | None = flow if flow.table is not None else None
        """The last flow written (derived), while no session came since."""
        self._derived_is_own = False
        """That flow holds counts of its own (not the staged ones)."""
        self._intent_rules: dict[str, dict[str, IntentRule]] | None = None
        """Each site's intent rules as last derived, and the common words they were derived with."""
        self._intent_common: set[str] = set()
        self._intent_touched: set[str] = set()
        """The sites whose intent counts a session changed since."""

    def add(self, session: Session, fingerprint: str | None = None) -> None:
        """Count one session in (a batch learn's counting, at weight one, as data); `fingerprint`:
        the recorded session's, where `session` is a view of it (as `SessionCounter.add`)."""
        header = session.header
        if header.manifest is not None and header.manifest != self.manifest:
            union = self.manifest.union(header.manifest)
            if union != self.manifest:
                self.manifest = union
        manifest = self.manifest
        symbols, actions = session_symbols(session, self.features)
        self.counts.add(symbols, actions, manifest.is_write, 1.0)
        add_session(self.bindings, session, manifest, 1.0, self.bindings.constants)
        for call in session.agent_calls():
            self.contracts.add_call(call.tool, call.arguments, 1.0)
        decided = dict(self.intent.decisions)
        count_intent(self.intent, session, manifest, 1.0)
        self._intent_touched.update(site for site, n in self.intent.decisions.items() if decided.get(site) != n)
        source = self._source()
        source.sessions += 1
        if source.solo_sessions is not None:
            source.solo_sessions += int(header.solo)
        _add_name(source.agents, header.agent_model or "unknown")
        _add_name(source.harnesses, header.harness)
        _add_name(source.apps, header.app or "unknown")
        if self.learned is None:
            self.learned = set()
        self.learned.add(fingerprint or session_fingerprint(session))
        self.added += 1
        self._derived = None

    def _source(self) -> FlowSource:
        """The body of data sessions of weight one (made the first time a session joins a flow
        that has none, as a merge would)."""
        for source in self.sources:
            if (source.role, source.weight) == NEW_SESSIONS:
                return source
        source = FlowSource(role="data", sessions=0, solo_sessions=0, weight=1.0)
        self.sources = _merge_sources(self.sources + [source])
        return next(s for s in self.sources if (s.role, s.weight) == NEW_SESSIONS)

    def flow(self, *, shared: bool = False) -> Flow:
        """The flow of every session counted, derived: a new `Flow` the staged counts never change
        (`shared=True`: one that shares the staged counts, valid until the next `add`, with no
        copy made: for a caller that writes it out at once, as `flow stage` does). α's and the
        reach's posteriors are evaluated near their peaks only (`learn/alpha_window.py`), so a
        refresh pays a third of a full grid's α: most of the rest is derived only where a session
        touched it."""
        if self._derived is not None and (shared or self._derived_is_own):
            return self._derived
        def own(model: Any) -> Any:
            return model if shared else model.model_copy(deep=True)
        flow = Flow.model_construct(
            stretto_flow=FLOW_FORMAT_VERSION,
            provenance=Provenance(sources=[s.model_copy(deep=True) for s in self.sources],
                                  learned=None if self.learned is None else sorted(self.learned)),
            manifest=self.manifest, features=self.features, counts=self.counts.to_model(),
            bindings=own(self.bindings), contracts=own(self.contracts), intent=own(self.intent),
            thresholds=dict(self.kept["thresholds"]), site_calibration=self.kept["site_calibration"],
            promotion=self.kept["promotion"], pinned={})
        flow.vocab = vocabulary(self.counts, self.manifest.tools)
        flow.alpha = alpha_posterior(self.counts, len(flow.vocab))
        flow.reach_alpha = reach_alpha_posterior(self.counts, len(flow.vocab))
        flow.table = compile_table(flow.bindings)
        flow.intent_table = own(self._intent_table())
        flow.pinned = _pin_contracts(self.manifest, flow.contracts)
        self._derived, self._derived_is_own = flow, not shared
        return flow


    def _intent_table(self) -> IntentTable:
        """The intent table, each site's rules derived again only when a session touched the site
        or a word the site's users said joined or left the common words: `derive_table`'s result
        (a site's rules read its own counts and, of the common words, those said there)."""
        common = common_words(self.intent)
        if self._intent_rules is None:
            self._intent_rules, touched = {}, set(self.intent.decisions)
        else:
            touched = self._intent_touched
            moved = common ^ self._intent_common
            if moved:
                touched = touched | {site for site, said in self.intent.said.items()
                                     if site in self.intent.decisions and not moved.isdisjoint(said.keys())}
        for site in touched:
            self._intent_rules[site] = site_rules(self.intent, site, common)
        self._intent_common, self._intent_touched = common, set()
        return IntentTable(rules={site: self._intent_rules[site] for site in sorted(self._intent_rules)
                                  if self._intent_rules[site]})


def _add_name(names: list[str], name: str) -> None:
    """`name` into a sorted list of names, once."""
    if name not in names:
        names.append(name)
        names.sort()


def stage_session(flow: Flow, session: Session) -> Flow:
    """`flow` with one more session counted in (one-off; keep a `StagedFlow` to add many)."""
    staged = StagedFlow(flow)
    staged.add(session)
    return staged.flow()
