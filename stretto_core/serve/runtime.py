"""A flow ready to serve: the estimators of the flow file, behind the speculator's `FlowModel`.

Loading derives the back-off model (habit and reach at the flow's α) and the binding table once;
each decision then only looks up cached tables, so deciding stays well under a millisecond.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from stretto_core.learn.bindings.derived import path_sources, text_tools
from stretto_core.serve.bind import bind
from stretto_core.learn.bindings.pick import rename_held
from stretto_core.serve.stale import forget_stale
from stretto_core.serve.intent import IntentLifts
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, BindingOptions, BindingTable, split_source
from stretto_core.flow.ir import Flow
from stretto_core.flow.site_calibration import SiteKey, site_key
from stretto_core.flow.use_evidence import evidence_key
from stretto_core.sessions.focus import Focus
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.state import ToolState
from stretto_core.learn.steps import reply_step, step_of_result


class FlowRuntime:
    """Implements `speculator.FlowModel` over a learned `Flow`."""

    def __init__(self, flow: Flow, alpha: float | None = None,
                 binding_options: BindingOptions = DEFAULT_OPTIONS, intent: bool = True,
                 recalibrate: bool = True) -> None:
        flow.derived()
        assert flow.alpha is not None and flow.table is not None
        self.flow = flow
        self.manifest: ToolManifest = flow.served_manifest()
        assert flow.reach_alpha is not None
        self.alpha = flow.alpha.alpha if alpha is None else alpha
        self.reach_alpha = flow.reach_alpha.alpha if alpha is None else alpha
        """The reach's own α (`learn/reach_alpha.py`); an α given overrides both."""
        self.model = flow.backoff(self.alpha, self.reach_alpha)
        self._reads = flow.lookup_tools()
        self.table = flow.table
        self.binding_options = binding_options
        self.look_back = binding_options.look_back
        self.user_words = binding_options.user_words or flow.bindings.user_words
        """The user's words are a source when the flow was learned with them (the engine's state adds them)."""
        self.focus = table_focus(self.table)
        """The paths of each tool's results a binding reads: what a served session indexes."""
        self.text_tools = frozenset(text_tools(_templates(self.table)))
        """The tools whose raw text a derived binding reads: a served session keeps it (bounded)."""
        self.intent = IntentLifts(flow.intent_table) if intent and flow.intent_table is not None else None
        """The reach's lift given the user's words (`learn/intent.py`); None: the reach as counted."""
        self.intent_words: frozenset[str] = self.intent.words if self.intent is not None else frozenset()
        """The words a served session's state watches the user's messages for."""
        calibration = flow.site_calibration if recalibrate else None
        self.site_factors: dict[SiteKey, float] = (
            {k: f for k, f in calibration.factors().items() if f != 1.0} if calibration is not None else {})
        """Each site's factor on ρ (`flow/site_calibration.py`); empty: every score as learned."""
        promotion = flow.promotion
        self.promoted: dict[tuple[str, str], bool] = (
            {s.key: s.state == "promoted" for s in promotion.sites} if promotion is not None else {})
        """Each judged (site, lookup)'s promotion (`flow/promotion.py`); a held one binds nothing."""
        self.unscored_promoted = promotion is None or promotion.unscored == "promoted"
        """Whether a (site, lookup) the promotion never judged serves."""
        evidence = promotion.evidence if promotion is not None else None
        self.use_factors, self.use_default = evidence.factors() if evidence is not None else ({}, 1.0)
        """Each key's f on ρ from the promotion's evidence (`flow/use_evidence.py`), and g for the rest."""
        self.held_keys = (evidence.held(promotion.theta_star) if promotion is not None and evidence is not None
                          and evidence.hold else frozenset())
        """Keys (tool, site, mention) whose mean posterior of use falls under θ*: no lookup there."""
        if evidence is not None:
            self.promoted = {}  # with evidence the keys decide: held ones switched off, the rest scaled

    def serves(self, site: str, tool: str) -> bool:
        """Whether the flow's promotion lets `tool` be looked up at `site` (no promotion: yes)."""
        return self.promoted.get((site, tool), self.unscored_promoted)

    def read_tools(self) -> Sequence[str]:
        """Reads the flow may make: marked read, and seen in training."""
        return self._reads

    def reach(self, history: Sequence[str], tool: str) -> float:
        return self.model.reach(history, tool)

    def reach_given(self, history: Sequence[str], tool: str, state: ToolState, site: str) -> float:
        """The reach of `tool`, lifted by what the user said so far (when the flow counted it)."""
        r = self.model.reach(history, tool)
        return r if self.intent is None else self.intent.lifted(r, tool, state, site)

    def next_step(self, history: Sequence[str]) -> dict[str, float]:
        return self.model.habit(history)

    def bind(self, tool: str, state: ToolState, site: str) -> Any:
        if not self.serves(site, tool):
            return None  # held back by promotion: no lookup here, whatever it scores
        got = bind(self.table, tool, state, site, self.binding_options.align)
        if got is not None and self.site_factors:
            f = self.site_factors.get(site_key(tool, site, got))
            got = got if f is None else replace(got, rho=min(1.0, got.rho * f))
        if got is not None and (self.use_factors or self.use_default != 1.0):
            key = evidence_key(tool, site, got)
            if key in self.held_keys:
                return None
            u = self.use_factors.get(key, self.use_default)
            got = got if u == 1.0 else replace(got, rho=got.rho * u)
        return got

    def name_held(self, state: ToolState) -> None:
        """The user spoke: name the held results now, not at the next decision (`pick.rename_held`)."""
        rename_held(state)

    def forget_stale(self, state: ToolState) -> None:
        """The user spoke: drop what was derived from their earlier words (`serve/stale.py`)."""
        forget_stale(state)

    def threshold(self, site: str, default: float) -> float:
        return self.flow.thresholds.get(site, default)

    def step_symbol(self, tool: str, error: bool, content: str, parsed: Any) -> str:
        return step_of_result(tool, error, content, parsed, self.flow.features).symbol

    def reply_symbol(self, answered: bool = True) -> str:
        return reply_step(answered).symbol


def table_focus(table: BindingTable) -> Focus:
    """Every source of every bound argument, in any order, as a `Focus`."""
    sources: set[tuple[str, str]] = set()
    for lookup in table.lookups.values():
        for arg in lookup.args.values():
            for order in (arg.sources, *arg.site_orders.values()):
                sources.update(split_source(s) for s in order)
    sources.update(path_sources(_templates(table)))
    return Focus.of_sources(sorted(sources))


def _templates(table: BindingTable) -> list[str]:
    """The templates of every derived argument."""
    return [arg.template for lookup in table.lookups.values() for arg in lookup.args.values()
            if arg.mode == "derived" and arg.template]
