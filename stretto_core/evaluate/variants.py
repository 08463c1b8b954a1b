"""Which part of the estimators buys what: the speculator with one part taken away at a time.

The note has to say what each part of §2.4 is worth, so each variant here removes one part of a
learned flow and keeps the rest:

    full        the flow as learned: α and the reach's α at their posterior medians, ρ per mention
                class, the reach held back by the user's words (`learn/intent.py`), served in `keep`
                order (`serve/chain_order.py`)
    alpha1      α = 1 for the habit and the reach instead of their posterior medians (the back-off's
                concentrations not learned)
    no_classes  every pick scored by its argument's pooled rate ρ̄ = (K + 1) / (N + 2) over the
                lookup's own order (`ArgTable.support`), ignoring the mention classes
                (mentioned, named_other, described_read), the per-site ρ and the class lift
                (`learn/bindings/named.py`)
    simple      alpha1 and no_classes together, no result features, no intent, Algorithm 1's order
                (best score first): the simpler speculator
    no_intent   the reach as counted over the tool state, whatever the user said
    features    learned with result features (`learn(..., features=True)`)
    newest      no look-back: a source draws on the newest result holding its tool only (the
                paper's rule), learned and served so (`BindingOptions(look_back=1)`)
    no_align    no record alignment when serving: a further argument of a call is picked on its
                own instead of from the lead's record (`BindingOptions(align=False)`; ρ as learned)
    score_order the full flow, of the reads that clear θ the best score made first (Algorithm 1's
                order) instead of the served `keep` order (`serve/chain_order.py`)
    habit_order the full flow, of the reads that clear θ the habit's next made first whatever it
                drops or feeds, measured, not served
    recalibrated the full flow with each site's ρ recalibrated on the use counted there by
                cross-fitting the same train sessions (`flow/site_calibration.py`, the paper's
                Appendix B; `stretto learn --recalibrate`)
    next        the next-step rule p·ρ (`policy="next"`), for reference

`no_classes` wraps the real `bind`: the same arguments are bound, only ρ is replaced, so the
difference to `full` is the value of scoring by class alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from stretto_core.errors import StrettoError
from stretto_core.evaluate.site_calibration import calibrate_sites
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, Binding, BindingOptions, LookupTable
from stretto_core.flow.ir import Flow, count_sessions, learn, manifest_of_sessions
from stretto_core.serve.chain_order import HABIT_ORDER, SCORE_ORDER, Ordered
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import Session
from stretto_core.sessions.state import ToolState


@dataclass(frozen=True)
class Variant:
    """One ablation: which parts of the estimators it keeps."""

    name: str
    label: str
    alpha_one: bool = False
    pooled_rho: bool = False
    features: bool = False
    lookback: bool = True
    align: bool = True
    intent: bool = True
    policy: str = "use"
    chain_order: str | None = None
    """The order of a chain (`serve/chain_order.py`); None: the served order."""
    recalibrate: bool = False
    """Each site's ρ recalibrated on the use counted by cross-fitting (`evaluate/site_calibration.py`)."""


VARIANTS: tuple[Variant, ...] = (
    Variant("full", "full (use before write)"),
    Variant("alpha1", "α = 1", alpha_one=True),
    Variant("no_classes", "no mention classes", pooled_rho=True),
    Variant("simple", "simple (α = 1, no classes, no features, no intent, best score first)", alpha_one=True,
            pooled_rho=True, intent=False, chain_order=SCORE_ORDER),
    Variant("no_intent", "no intent (reach whatever the user said)", intent=False),
    Variant("features", "with result features", features=True),
    Variant("newest", "no look-back (newest result only)", lookback=False),
    Variant("no_align", "no record alignment (serving)", align=False),
    Variant("score_order", "best score first (Algorithm 1's order)", chain_order=SCORE_ORDER),
    Variant("habit_order", "habit's next read first", chain_order=HABIT_ORDER),
    Variant("recalibrated", "sites recalibrated on the use counted (Appendix B)", recalibrate=True),
    Variant("next", "next-step rule", policy="next"),
)
BY_NAME = {v.name: v for v in VARIANTS}


def variant(name: str) -> Variant:
    if name not in BY_NAME:
        raise StrettoError(f"unknown ablation variant {name!r}; one of {', '.join(BY_NAME)}")
    return BY_NAME[name]


def laplace(support: dict[str, list[float]]) -> float:
    """ρ̄ = (K + 1) / (N + 2): agreements and picks pooled over every mention class."""
    k = sum(s[0] for s in support.values())
    n = sum(s[1] for s in support.values())
    return (k + 1.0) / (n + 2.0)


def pooled_rho(lookup: LookupTable) -> float:
    """A bound lookup's ρ with the classes ignored: the product of each argument's pooled rate.

    The lead argument's rate is over its free picks, every other value argument's over its picks
    aligned to the lead's record (as the full binding scores them); a constant keeps its factor.
    """
    if lookup.kind == "bare":
        return lookup.bare_rho if lookup.bare_rho is not None else 1.0
    rho = 1.0
    for name, arg in lookup.args.items():
        if arg.mode == "constant":
            rho *= next(iter(arg.rho.get("*", {}).values()), 1.0)
        elif arg.mode == "value" and name != lookup.lead:
            rho *= laplace(arg.support_aligned)
        else:
            rho *= laplace(arg.support)
    return rho


class PooledRho:
    """A `FlowModel` that binds as the runtime does but scores every pick by the pooled rate."""

    def __init__(self, runtime: FlowRuntime) -> None:
        self.runtime = runtime
        self.manifest = runtime.manifest
        self._rho: dict[str, float] = {}

    def rho_of(self, tool: str) -> float:
        if tool not in self._rho:
            self._rho[tool] = pooled_rho(self.runtime.table.lookups[tool])
        return self._rho[tool]

    def bind(self, tool: str, state: ToolState, site: str) -> Binding | None:
        got = self.runtime.bind(tool, state, site)
        return None if got is None else replace(got, rho=self.rho_of(tool))

    def __getattr__(self, name: str) -> Any:  # read_tools, reach, next_step, threshold, symbols
        return getattr(self.runtime, name)


def options_of(v: Variant) -> BindingOptions:
    """The binding rule's parts a variant keeps, for learning and serving alike."""
    return BindingOptions(look_back=DEFAULT_OPTIONS.look_back if v.lookback else 1, align=v.align)


def learn_for(sessions: Sequence[Session], v: Variant) -> Flow:
    """The flow a variant serves from: the default learn, with result features, or without look-back."""
    return learn(list(sessions), features=True if v.features else None, binding_options=options_of(v))


def count_for(sessions: Sequence[Session], v: Variant) -> Flow:
    """`learn_for`'s counting, underived (a variant without result features: those are learned
    from the sessions as a whole, so its flows cannot be added from parts)."""
    assert not v.features
    return count_sessions(list(sessions), manifest_of_sessions(sessions), binding_options=options_of(v))


def model_for(flow: Flow, v: Variant) -> FlowRuntime | PooledRho | Ordered:
    """The `FlowModel` of a variant over a flow learned by `learn_for`."""
    runtime = FlowRuntime(flow, alpha=1.0 if v.alpha_one else None, binding_options=options_of(v), intent=v.intent,
                          recalibrate=v.recalibrate)
    model: FlowRuntime | PooledRho = PooledRho(runtime) if v.pooled_rho else runtime
    return model if v.chain_order is None else Ordered(model, v.chain_order)


class VariantFlows:
    """Flows learned once per (sessions, features, look-back), models built per variant.

    `default`: where the flow that `full` serves comes from (the variants that learn as it does
    share it): a bench passes its own learned flows, so they are not learned twice.
    """

    def __init__(self, default: Callable[[Sequence[Session]], Flow] | None = None) -> None:
        self._flows: dict[tuple[bool, bool, tuple[str, ...]], Flow] = {}
        self._default = default

    def model(self, sessions: Sequence[Session], v: Variant) -> FlowRuntime | PooledRho | Ordered:
        return model_for(self.flow(sessions, v), v)

    def flow(self, sessions: Sequence[Session], v: Variant) -> Flow:
        """The flow a variant serves for these sessions, learned (and calibrated) once."""
        key = (v.features, v.lookback, v.recalibrate, tuple(sorted(s.session_id for s in sessions)))
        if key not in self._flows:
            if v.recalibrate:
                plain = self.flow(sessions, replace(v, recalibrate=False))
                calibration = calibrate_sites(sessions, lambda part: learn_for(part, v),
                                              model_of=lambda flow: model_for(flow, replace(v, recalibrate=False)),
                                              count_flow=None if v.features else (lambda part: count_for(part, v)))
                self._flows[key] = plain.model_copy(update={"site_calibration": calibration})
            else:
                learns_as_default = not v.features and v.lookback
                self._flows[key] = (self._default(sessions) if self._default is not None and learns_as_default
                                    else learn_for(sessions, v))
        return self._flows[key]
