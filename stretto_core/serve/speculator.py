"""Which read to make next, if any: Algorithm 1 of the paper, and the next-step rule it replaces.

After each of the agent's tool responses the speculator weighs every read the flow may make.
A candidate read c = (t, a) scores q_c ≈ r(t | h) · ρ(a | t, x): the probability that the agent
calls tool t before its next write (the reach), times the chance that the bound arguments are
the ones it would pass. Proposition 3 makes every read with q_c ≥ θ worth making, each on its
own, so the speculator makes the best one, conditions on its result, and asks again, until no
candidate clears θ or a budget runs out (`serve/chain_order.py`: which of them goes first).

The next-step rule (`policy="next"`) scores only the likeliest next read under the habit,
p(t | h) · ρ, as speculative-action systems do; it is kept for comparison.

Safety is decided here and nowhere else: a tool is a candidate only if the flow's manifest marks
it `read`, an independent authority (the live manifest) does too and states no other input
contract, and the operator's allowlist (when set) names it (`Guard`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Iterable, Protocol, Sequence

from stretto_core.serve.chain_order import HABIT_ORDER, KEEP_ORDER, SERVED_ORDER, habit_first, keeping_first
from stretto_core.learn.bindings.model import site_name
from stretto_core.sessions.manifest import InputContract, ToolManifest
from stretto_core.sessions.state import ToolState

from stretto_core.serve.defaults import (  # noqa: E402 - defined where an import costs nothing
    DEFAULT_THETA as DEFAULT_THETA, MAX_LOOKUPS_PER_CALL as MAX_LOOKUPS_PER_CALL,
    MAX_LOOKUPS_PER_SESSION as MAX_LOOKUPS_PER_SESSION,
)

POLICIES = ("use", "next")


class BindingLike(Protocol):
    arguments: dict[str, Any]
    rho: float
    sources: list[str]


class FlowModel(Protocol):
    """What the speculator needs of a learned flow (see `flow_runtime.FlowRuntime`)."""

    manifest: ToolManifest

    def read_tools(self) -> Sequence[str]: ...

    def reach(self, history: Sequence[str], tool: str) -> float: ...

    def next_step(self, history: Sequence[str]) -> dict[str, float]: ...

    def bind(self, tool: str, state: ToolState, site: str) -> BindingLike | None: ...

    def threshold(self, site: str, default: float) -> float: ...

    def step_symbol(self, tool: str, error: bool, content: str, parsed: Any) -> str: ...

    def reply_symbol(self, answered: bool = True) -> str: ...


@dataclass(frozen=True)
class Guard:
    """Which tools may be looked up at all: the safety rule, checked before every decision.

    A tool may be looked up only if the flow marks it read, an independent authority on tool
    kinds (`live_manifest`: the server's listing, the SDK's annotations, or a manifest the
    operator passes) marks it read too, and the allowlist (when set) names it. Without an
    authority nothing is permitted: the flow file alone never says what is a read.

    Contracts: where both the flow (its pinned contract) and the authority state a tool's input
    contract, the authority's must still take the flow's calls (`contract_still_holds`: the same
    required arguments, every pinned one still listed, with a type that admits the pinned
    one). Where either states none (reads declared in code, a manifest file of kinds only,
    a flow that never saw the tool called) there is nothing to compare, and the authority's word
    on the kind decides alone.
    """

    flow_manifest: ToolManifest
    live_manifest: ToolManifest | None = None
    allow: frozenset[str] | None = None
    _verdicts: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    def permits(self, tool: str) -> bool:
        verdict = self._verdicts.get(tool, _UNSEEN)
        if verdict is _UNSEEN:
            verdict = self._verdicts[tool] = self._refusal(tool)
        return verdict is None

    def why_not(self, tool: str) -> str:
        """Why a tool is not looked up (`permitted` when it is)."""
        return self._refusal(tool) or "permitted"

    def _refusal(self, tool: str) -> str | None:
        if not self.flow_manifest.is_read(tool):
            return f"{tool} is not a known read"
        if self.allow is not None and tool not in self.allow:
            return f"{tool} is not on the allowlist"
        if self.live_manifest is None:
            return "no authority on tool kinds (a live manifest) was given"
        if not self.live_manifest.is_read(tool):
            return f"the server no longer marks {tool} as a read"
        return contract_refusal(self.flow_manifest, self.live_manifest, tool)


_UNSEEN = "\0unseen"


def contract_refusal(flow: ToolManifest, live: ToolManifest, tool: str) -> str | None:
    """Why the live contract of a tool does not match the flow's pinned one, or None when it does."""
    now = live.tools[tool].contract if tool in live.tools else None
    if now is None:
        return None
    pinned = flow.tools[tool].contract if tool in flow.tools else None
    if pinned is None:
        return None
    if sorted(pinned.required) != sorted(now.required):
        return f"{tool}'s input contract changed: {pinned.describe()} → {now.describe()}"
    for name, was in pinned.args.items():
        if name not in now.args:
            return f"{tool}'s input contract changed: {name} is no longer listed"
        if not _types_admit(was, now.args[name]):
            return f"{tool}'s input contract changed: {name} was {was}, is {now.args[name]}"
    return None


def contract_still_holds(pinned: InputContract, now: InputContract) -> bool:
    """Whether a server's listed contract still takes the calls a flow pinned.

    A pinned contract observed from calls names only the arguments the agents passed, while a
    server lists its optional ones too; so the same required set, and every pinned argument
    still listed with a type that admits one the pinned has, is the same contract. A renamed,
    dropped or newly required argument, or a changed type, is not. Types: `integer` is a
    `number`; `any` admits anything; `null` says nothing (an observed contract writes it for an
    argument only ever passed as null), so a type of only `null` is `any`.
    """
    if sorted(pinned.required) != sorted(now.required):
        return False
    return all(name in now.args and _types_admit(kind, now.args[name]) for name, kind in pinned.args.items())


def _types_admit(pinned: str, listed: str) -> bool:
    """Whether the listing takes a JSON type the pinned argument was passed as.

    Some, not all: an observed contract joins every type any agent passed (`array|string` when
    one agent passed a name where the others passed a list), so asking for all of them would
    refuse a tool whose server never changed; a changed tool (`string` to `integer`) shares none.
    """
    a, b = _type_set(pinned), _type_set(listed)
    return "any" in a or "any" in b or bool(a & b)


def _type_set(types: str) -> set[str]:
    names = {"number" if t == "integer" else t for t in (t.strip() for t in types.split("|")) if t}
    return names - {"null"} or {"any"}


@dataclass
class Decision:
    """One lookup the speculator decided to make, and why."""

    tool: str
    arguments: dict[str, Any]
    score: float
    reach: float
    binding: float
    site: str
    policy: str
    sources: list[str] = field(default_factory=list)


@dataclass
class Weighed:
    """A candidate the speculator scored (for calibration and sweeps)."""

    tool: str
    arguments: dict[str, Any]
    score: float
    reach: float
    binding: float
    sources: list[str] = field(default_factory=list)


def weigh(model: FlowModel, guard: Guard, state: ToolState, history: Sequence[str], site: str,
          policy: str = "use", floor: float = 0.0) -> list[Weighed]:
    """Score every permitted read that binds, best first; `floor` skips reads that cannot reach it."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    out: list[Weighed] = []
    if policy == "use":
        for tool in model.read_tools():
            if not guard.permits(tool):
                continue
            r = reach_of(model, history, tool, state, site)
            if r < floor:
                continue
            b = model.bind(tool, state, site)
            if b is None:
                continue
            out.append(Weighed(tool, b.arguments, r * b.rho, r, b.rho, list(b.sources)))
    else:
        probs = model.next_step(history)
        known = set(model.read_tools())
        reads = [(p, t) for t, p in probs.items() if t in known and guard.permits(t)]
        if reads:
            p, tool = max(reads, key=lambda pt: (pt[0], _neg(pt[1])))
            if p >= floor:
                b = model.bind(tool, state, site)
                if b is not None:
                    out.append(Weighed(tool, b.arguments, p * b.rho, p, b.rho, list(b.sources)))
    out.sort(key=lambda w: (-w.score, w.tool))
    return out


def reach_of(model: FlowModel, history: Sequence[str], tool: str, state: ToolState, site: str) -> float:
    """r(t | h), given what the user said when the model knows how (`FlowRuntime.reach_given`)."""
    given = getattr(model, "reach_given", None)
    return model.reach(history, tool) if given is None else given(history, tool, state, site)


def _neg(name: str) -> tuple[int, ...]:
    """Ties go to the alphabetically first tool."""
    return tuple(-ord(ch) for ch in name)


def decide(model: FlowModel, guard: Guard, state: ToolState, history: Sequence[str], site: str,
           theta: float = DEFAULT_THETA, policy: str = "use", chained: Collection[str] = ()) -> Decision | None:
    """The one read to make now, or None to hand back: of the reads whose score clears θ, the one
    the model's `chain_order` puts first (`serve/chain_order.py`; served: `keep`, whose look-ahead
    never moves ahead a tool in `chained`, the tools this decision's chain already looked up)."""
    default_theta, theta = theta, model.threshold(site, theta)
    weighed = weigh(model, guard, state, history, site, policy, floor=theta)
    if not weighed or weighed[0].score < theta:
        return None
    best = weighed[0]
    order = getattr(model, "chain_order", SERVED_ORDER)
    if order in (HABIT_ORDER, KEEP_ORDER) and len(weighed) > 1 and weighed[1].score >= theta:
        cleared = [w for w in weighed if w.score >= theta]
        if order == HABIT_ORDER:
            best = habit_first(cleared, model.next_step(history))
        elif order == KEEP_ORDER:
            best = keeping_first(cleared, lambda first, other: _clears_after(
                model, state, history, first, other, default_theta), model.next_step(history),
                chained)
    return Decision(best.tool, best.arguments, best.score, best.reach, best.binding, site, policy,
                    best.sources)


def _clears_after(model: FlowModel, state: ToolState, history: Sequence[str], first: Weighed, other: Weighed,
                  default_theta: float) -> bool:
    """Whether `other` still clears θ scored after `first` is made (taken as succeeding), its
    binding's ρ as it is now: the one step of look-ahead the `keep` order asks."""
    after = site_name(first.tool, False)
    then = [*history, model.step_symbol(first.tool, False, "", None)]
    return reach_of(model, then, other.tool, state, after) * other.binding >= model.threshold(after, default_theta)


def permitted_reads(guard: Guard, tools: Iterable[str]) -> list[str]:
    return [t for t in tools if guard.permits(t)]


@dataclass
class Candidate:
    """A permitted read that binds, with both scores: use-before-write r·ρ and next-step p·ρ."""

    tool: str
    arguments: dict[str, Any]
    reach: float
    next_p: float
    binding: float

    @property
    def score_use(self) -> float:
        return self.reach * self.binding

    @property
    def score_next(self) -> float:
        return self.next_p * self.binding


def weigh_all(model: FlowModel, guard: Guard, state: ToolState, history: Sequence[str],
              site: str) -> list[Candidate]:
    """Every permitted read that binds now, scored both ways (for calibration and sweeps)."""
    probs = model.next_step(history)
    out: list[Candidate] = []
    for tool in model.read_tools():
        if not guard.permits(tool):
            continue
        b = model.bind(tool, state, site)
        if b is None:
            continue
        out.append(Candidate(tool, b.arguments, reach_of(model, history, tool, state, site), probs.get(tool, 0.0),
                             b.rho))
    return out
