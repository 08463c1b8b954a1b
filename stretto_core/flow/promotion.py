"""Per-site promotion: which of a flow's lookups serve, judged on the deployment's own evidence.

A flow scores a lookup by counting other sessions; whether it pays for *this* agent is a
question its own sessions answer. `stretto flow promote` replays the deployment's clean
sessions (recorded, shadowed or held out; never ones the flow learned from) with the flow
deciding, and counts, per site lookup (the site a lookup rides on and the tool it looks up):
the would-be lookups, how many the agent then made itself before its next write (used), and
in how many tasks. A bar turns that evidence into a state:

- `posterior` (the default): the site's use rate with the flow's own mean score q̄ there as a
  Beta prior of weight P, (used + P·q̄) / (lookups + P), against θ* = δ/(β+δ), the threshold the
  costs give (paper §2.3, Appendix B). A lookup is worth making when its chance of use clears θ*,
  and this asks it of the site's counted rate, shrunk towards the score that made the flow want
  it: a site with little evidence keeps its score, one with much takes its rate.
- `strict`: the reference implementation's bar: used ≥ 0.7, the Wilson lower bound (95%) of the
  use rate ≥ 0.5, and would-be lookups in at least 3 tasks.

A held site makes no lookup (`serve/runtime.py` binds nothing there). A site the evidence never
reached keeps the bar's default: promoted under `posterior` (its score is all there is, and it
cleared θ), held under `strict` (fewer than 3 tasks).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt

from stretto_core.errors import StrettoError

PromotionState = Literal["promoted", "held"]
Bar = Literal["posterior", "strict"]
BARS: tuple[str, ...] = ("posterior", "strict")

DEFAULT_PRIOR_WEIGHT = 10.0
"""How many would-be lookups the flow's own score weighs as, under the posterior bar (chosen on
the train split: `benchmarks/promotion_table.py --choose-prior`, docs/promotion.md)."""

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
    lines = ["", "## Promotion", "",
             f"Bar: {bar}; judged on {p.sessions} clean sessions the flow did not learn from. "
             f"{held} of {len(p.sites)} site lookups held back (they make no lookup); a site lookup "
             f"not listed is {p.unscored}.", ""]
    if p.sites:
        lines += ["| site | lookup | state | would-be | used | tasks | mean score | posterior | Wilson low |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for s in p.sites:
            mean = s.score / s.lookups if s.lookups else 0.0
            lines.append(f"| `{s.site}` | `{s.tool}` | {'**held back**' if s.state == 'held' else 'promoted'} | "
                         f"{s.lookups:g} | {s.used:g} | {s.tasks} | {mean:.3f} | {s.posterior or 0:.3f} | "
                         f"{s.wilson or 0:.3f} |")
    return lines
