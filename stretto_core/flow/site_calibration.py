"""Each site's score recalibrated on the use counted there (the paper's Appendix B), as counts in a flow.

A score r·ρ is calibrated on average, not at every site. Where the lookups of one site were used
more or less often than they were scored, a flow can carry what was counted there: at each site,
the candidates weighed, the sum of their scores Q and how many the agent used, U, counted by
replaying sessions the scoring flow did not learn from (`evaluate/site_calibration.py` cross-fits
them). Served, a binding's ρ at that site is multiplied by

    f = (U + P·q̄) / (Q + P·q̄),   q̄ = Q / n,

the model's own score weighing as a prior of P candidates (the paper's 40), so a site with few
candidates keeps its score and one with many takes its counted rate. Counts add, so merging two
flows adds their sites' counts.
"""

from __future__ import annotations

from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveInt

from stretto_core.errors import StrettoError

DEFAULT_PRIOR = 40.0
"""The paper's prior: the model's score weighs as 40 candidates."""
DEFAULT_FLOOR = 0.1
"""Candidates scored below this are not counted: a site's factor is a ratio to its mean score, and
candidates scored near 0 would make it a ratio of noise (one used in a hundred scored 0.001: ×10)."""
NO_ARGUMENT = "(no argument)"
SiteKey = tuple[str, str, str, str]
"""(looked-up tool, site, binding sources, mention class of the lead's pick)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SiteCount(_Model):
    """What the weighed candidates of one looked-up tool at one site, bound one way, came to."""

    tool: str
    site: str
    source: str
    """The binding's sources, one `<tool> <path>` per argument joined by ` & ` (`(no argument)`)."""
    mention: str
    """The mention class of the lead argument's pick (`plain`, `mentioned`, ...)."""
    weighed: NonNegativeFloat = 0.0
    score: NonNegativeFloat = 0.0
    """The sum of the weighed candidates' scores r·ρ."""
    used: NonNegativeFloat = 0.0
    """How many of them the agent called before its next write."""

    @property
    def key(self) -> SiteKey:
        return self.tool, self.site, self.source, self.mention

    def factor(self, prior: float) -> float:
        """(U + P·q̄) / (Q + P·q̄); 1 where nothing was scored."""
        if self.weighed <= 0.0 or self.score <= 0.0:
            return 1.0
        mean = self.score / self.weighed
        return (self.used + prior * mean) / (self.score + prior * mean)


class SiteCalibration(_Model):
    """The sites' counts and the prior they are served with."""

    prior: NonNegativeFloat = DEFAULT_PRIOR
    floor: NonNegativeFloat = DEFAULT_FLOOR
    """Only candidates scored at least this were counted."""
    folds: PositiveInt = 5
    """Into how many folds the sessions were dealt to count them on flows that did not learn them."""
    sites: list[SiteCount] = Field(default_factory=list)
    """Sorted by key."""

    def factors(self) -> dict[SiteKey, float]:
        return {s.key: s.factor(self.prior) for s in self.sites}

    def merged(self, other: "SiteCalibration", weight: float = 1.0) -> "SiteCalibration":
        """The two calibrations' counts added (`other`'s times `weight`); they must share prior and folds."""
        if (self.prior, self.floor, self.folds) != (other.prior, other.floor, other.folds):
            raise StrettoError(f"cannot merge site calibrations with different priors, floors or folds "
                               f"({self.prior:g}/{self.floor:g}/{self.folds} and "
                               f"{other.prior:g}/{other.floor:g}/{other.folds}); calibrate both alike")
        return SiteCalibration(prior=self.prior, floor=self.floor, folds=self.folds,
                               sites=add_counts(self.sites, [scaled(s, weight) for s in other.sites]))


def scaled(count: SiteCount, weight: float) -> SiteCount:
    return count.model_copy(update={"weighed": count.weighed * weight, "score": count.score * weight,
                                    "used": count.used * weight})


def add_counts(*groups: Iterable[SiteCount]) -> list[SiteCount]:
    """Counts of the same site added, sorted by key (so adding in any order gives the same list)."""
    totals: dict[SiteKey, list[float]] = {}
    for group in groups:
        for s in group:
            add_to(totals, s.key, s.weighed, s.score, s.used)
    return site_counts(totals)


def add_to(totals: dict[SiteKey, list[float]], key: SiteKey, weighed: float, score: float, used: float) -> None:
    """Add one site's (weighed, score, used) to running totals."""
    t = totals.setdefault(key, [0.0, 0.0, 0.0])
    t[0] += weighed
    t[1] += score
    t[2] += used


def site_counts(totals: dict[SiteKey, list[float]]) -> list[SiteCount]:
    """Running totals as the file's rows, sorted by key."""
    return [SiteCount(tool=k[0], site=k[1], source=k[2], mention=k[3], weighed=w, score=q, used=u)
            for k, (w, q, u) in sorted(totals.items())]


def site_key(tool: str, site: str, binding: Any) -> SiteKey:
    """The site a binding of `tool` made at `site` is counted and served under."""
    return tool, site, " & ".join(binding.sources) or NO_ARGUMENT, getattr(binding, "mention", "plain")
