"""Per-site promotion: which of a flow's lookups serve, judged on the deployment's own evidence.

A flow scores a lookup by counting other sessions; whether it pays for *this* agent is a
question its own sessions answer. `stretto flow promote` replays the deployment's clean
sessions (recorded, shadowed or held out; never ones the flow learned from) with the flow
deciding, and counts, per site lookup (the site a lookup rides on and the tool it looks up):
the would-be lookups, how many the agent then made itself before its next write (used), and
in how many tasks. A bar turns that evidence into a state:

- `posterior` (the default): every candidate the flow weighs on those sessions is counted at its
  key (tool, site, mention class), and the flow keeps the counts (`evidence`,
  `flow/use_evidence.py`). Served, a candidate's score is its posterior chance of use there,
  q·f_k, f_k = (U + P·g·q̄)/(Q + P·q̄) ≤ 1, g the agent's own back-off over all its evidence:
  the speculator's threshold θ = θ* (paper §2.3, Appendix B) then asks of each lookup what
  promotion asks of a site, and the two are one mechanism. A site's `state` says whether its
  candidates' mean posterior clears θ*; a `held` site is backed off, not switched off (a
  candidate scored far above the site's mean may still clear θ). Train-split evidence (each
  agent weighed by a flow learned without it: `--train-sessions`) adds into the same counts.
  (Before, this bar switched a site off when (used + 3·q̄)/(lookups + 3) of its would-be lookups
  fell under θ*: `benchmarks/stay_out.py` compares both on the train split.)
- `strict`: the reference implementation's bar: used ≥ 0.7, the Wilson lower bound (95%) of the
  use rate ≥ 0.5, and would-be lookups in at least 3 tasks.

Under `strict` a held site makes no lookup (`serve/runtime.py` binds nothing there); under
`posterior` with evidence every score is scaled. A site the evidence never reached keeps the
bar's default: promoted under `posterior` (scaled by g), held under `strict` (fewer than 3 tasks).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt

from stretto_core.errors import StrettoError
from stretto_core.flow.use_evidence import UseEvidence

PromotionState = Literal["promoted", "held"]
Bar = Literal["posterior", "strict"]
BARS: tuple[str, ...] = ("posterior", "strict")

DEFAULT_PRIOR_WEIGHT = 3.0
"""How many would-be lookups the flow's own score weighs as, under the posterior bar. Chosen on
the train split (`benchmarks/promotion_table.py --choose-prior`: promote on one half of each
agent's train tasks, replay the other): of 1, 3, 10 and 40, 3 falls shortest of each app's best
net tokens in total (best on Slack and travel, tied on banking, workspace and retail, 1.7% under
airline's best, P = 40); docs/promotion.md."""

STRICT_USED = 0.7
STRICT_WILSON = 0.5
STRICT_TASKS = 3
WILSON_Z = 1.959964
"""The strict bar (the reference implementation's): use rate, its 95% Wilson lower bound, tasks."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class SitePromotion(_Model):
    """One site lookup's evidence, and the state the bar gave it."""

    site: str
    """The site: the tool whose result the lookup rides on (`get_channels`, `x (failed)`, `start`)."""
    tool: str
    """The read it looks up there."""
    state: PromotionState
    lookups: NonNegativeFloat = 0.0
    """Would-be lookups counted on the clean sessions."""
    used: NonNegativeFloat = 0.0
    """Of them, those the agent made itself before its next write."""
    tasks: NonNegativeInt = 0
    """Tasks (sessions, where none is recorded) with at least one would-be lookup here."""
    score: NonNegativeFloat = 0.0
    """The sum of the would-be lookups' scores r·ρ (their mean is the posterior bar's prior)."""
    posterior: float | None = None
    """The posterior mean use rate (posterior bar)."""
    wilson: float | None = None
    """The 95% Wilson lower bound of the use rate (strict bar)."""

    @property
    def key(self) -> tuple[str, str]:
        return self.site, self.tool


class Promotion(_Model):
    """A flow's promotion: the bar, what it was judged on, and each site lookup's state."""

    bar: Bar = "posterior"
    theta_star: float = Field(ge=0.0, le=1.0)
    """θ* = δ/(β+δ): the use rate a site must clear (posterior bar)."""
    prior_weight: NonNegativeFloat = DEFAULT_PRIOR_WEIGHT
    """P: how many would-be lookups the flow's own score weighs as (posterior bar)."""
    sessions: NonNegativeInt = 0
    """The clean sessions the evidence was counted on."""
    unscored: PromotionState = "promoted"
    """The state of a site lookup the evidence never reached."""
    sites: list[SitePromotion] = Field(default_factory=list)
    """Sorted by (site, tool)."""
    evidence: UseEvidence | None = None
    """The counts of use the posterior bar serves with (`flow/use_evidence.py`); None: states alone
    (the strict bar, or a flow promoted before evidence was kept: held sites make no lookup)."""

    def held(self) -> frozenset[tuple[str, str]]:
        """The (site, tool) pairs that make no lookup, beyond `unscored`'s."""
        return frozenset(s.key for s in self.sites if s.state == "held")

    def state_of(self, site: str, tool: str) -> PromotionState:
        for s in self.sites:
            if s.key == (site, tool):
                return s.state
        return self.unscored


def wilson_lower(used: float, n: float, z: float = WILSON_Z) -> float:
    """The Wilson score interval's lower bound of a rate of `used` in `n` (0 when n is 0)."""
    if n <= 0:
        return 0.0
    p = used / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n))


def posterior_rate(used: float, lookups: float, score: float, prior_weight: float) -> float:
    """(used + P·q̄) / (lookups + P), q̄ the site's mean score: its use rate shrunk to its score."""
    mean = score / lookups if lookups > 0 else 0.0
    denominator = lookups + prior_weight
    return (used + prior_weight * mean) / denominator if denominator > 0 else mean


def judge(site: str, tool: str, lookups: float, used: float, tasks: int, score: float, bar: str,
          theta_star: float, prior_weight: float) -> SitePromotion:
    """One site lookup's state under `bar`."""
    if bar not in BARS:
        raise StrettoError(f"--bar is one of {', '.join(BARS)}, not {bar!r}")
    posterior = posterior_rate(used, lookups, score, prior_weight)
    wilson = wilson_lower(used, lookups)
    if bar == "posterior":
        ok = lookups <= 0 or posterior >= theta_star
    else:
        ok = lookups > 0 and used / lookups >= STRICT_USED and wilson >= STRICT_WILSON and tasks >= STRICT_TASKS
    return SitePromotion(site=site, tool=tool, state="promoted" if ok else "held", lookups=lookups, used=used,
                         tasks=tasks, score=score, posterior=round(posterior, 6), wilson=round(wilson, 6))


def default_state(bar: str) -> PromotionState:
    """A site the evidence never reached: promoted on its score (posterior), held (strict)."""
    return "promoted" if bar == "posterior" else "held"


def describe(promotion: Promotion) -> list[str]:
    """Markdown lines: the bar, and each site lookup's evidence and state."""
    p = promotion
    bar = (f"posterior use rate (the flow's score weighs as {p.prior_weight:g} lookups) ≥ θ* = {p.theta_star:.3g}"
           if p.bar == "posterior" else
           f"strict: used ≥ {STRICT_USED}, Wilson lower bound ≥ {STRICT_WILSON}, ≥ {STRICT_TASKS} tasks")
    held = sum(1 for s in p.sites if s.state == "held")
    if p.evidence is not None:
        g = p.evidence.agent_factor()
        bar = (f"posterior chance of use, served as the score (each candidate's r·ρ times its key's f; the flow's "
               f"score weighs as {p.evidence.site_prior:g} candidates at a key, {p.evidence.agent_prior:g} expected "
               f"uses against the agent's own); the agent's back-off g = {g:.3f}; a site's state: its mean "
               f"posterior against θ* = {p.theta_star:.3g}")
    lines = ["", "## Promotion", "",
             f"Bar: {bar}; judged on {p.sessions} clean sessions the flow did not learn from. "
             f"{held} of {len(p.sites)} site lookups held back ({'backed off' if p.evidence is not None else 'they make no lookup'}); a site lookup "
             f"not listed is {p.unscored}.", ""]
    if p.evidence is not None and p.evidence.hold:
        held_keys = sorted(p.evidence.held(p.theta_star))
        lines += [f"Keys held back (their mean posterior chance of use is under θ*: no lookup there): {len(held_keys)}",
                  ""] + [f"- `{tool}` after `{site}`, pick {mention}" for tool, site, mention in held_keys] + [""]
    if p.sites:
        counted = "weighed" if p.evidence is not None else "would-be"
        lines += [f"| site | lookup | state | {counted} | used | tasks | mean score | posterior | Wilson low |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for s in p.sites:
            mean = s.score / s.lookups if s.lookups else 0.0
            lines.append(f"| `{s.site}` | `{s.tool}` | {'**held back**' if s.state == 'held' else 'promoted'} | "
                         f"{s.lookups:g} | {s.used:g} | {s.tasks} | {mean:.3f} | {s.posterior or 0:.3f} | "
                         f"{s.wilson or 0:.3f} |")
    return lines
