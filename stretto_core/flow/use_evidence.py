"""The posterior chance of use at a site: what promotion judges and the speculator thresholds, one quantity.

A flow scores a candidate lookup q = r·ρ by counting other sessions. Where lookups of a kind were
weighed on sessions the scoring flow did not learn from, the counts say how often such a lookup
was in fact used: at key k = (looked-up tool, site, mention class of the lead argument's pick),
the candidates weighed n_k, the sum of their scores Q_k, and how many the agent used, U_k. The
posterior use rate there, with the flow's own mean score q̄_k as a Beta prior of P candidates, is

    π_k = (U_k + P·g·q̄_k) / (n_k + P),

with `hold` (off by default: the train split preferred scaling alone) a key whose π_k falls under
θ* makes no lookup, and a candidate at any other key is served with the score q·π_k/q̄_k = q·f_k,

    f_k = (U_k + P·g·q̄_k) / (Q_k + P·q̄_k),

so the speculator's threshold (θ = θ*, paper §2.3) asks exactly the promotion's question: is this
lookup's chance of use, on the evidence, worth its cost? g is the agent's own back-off: over all
of the deployment's own evidence, (U + P_g) / (Q + P_g) (used against expected); an agent that
does not read ahead pulls every site towards its rate, sites it never reached included (f = g
there). Both are one-sided (f, g ≤ 1): evidence holds a lookup back, never adds one the flow
did not want (raising is `site_calibration`'s two-sided job).

Two kinds of evidence add into the same counts: the train split's (cross-fitted: each agent's
sessions weighed by a flow learned without them; `role="train"`) and the deployment's own clean
sessions (`flow promote`; `role="own"`); only the own counts make g.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat

EvidenceKey = tuple[str, str, str]
"""(looked-up tool, site, mention class of the lead argument's pick)."""
Role = Literal["train", "own"]

DEFAULT_SITE_PRIOR = 3.0
"""P: how many candidates the flow's own mean score weighs as at one key. Chosen on the train split
(`benchmarks/stay_out.py --choose`: leave one agent out, two task folds; utility saved − 3/7·detours
summed over τ² airline, retail, AgentDojo slack, travel): of 3, 10 and 40, 3 is best with train
evidence (airline 231.0 / 228.1 / 225.1, slack 102.1 / 101.7 / 90.7 at P_g = 40)."""
DEFAULT_AGENT_PRIOR = 40.0
"""P_g: how many expected uses the flow's scores weigh as against the agent's own used ones. Train
split as above: 40 and 10 within 1.3 of each other over the four apps (689.4 / 688.1), 3 and ∞
below on airline (228.4, 231.0 at 40; 225.x without g at P = 10)."""
DEFAULT_HOLD = False
"""Switch off keys whose mean posterior is under θ* (train split, as above: 685.9 with, 689.4 without;
retail gains, airline, slack and travel lose)."""
EVIDENCE_FLOOR = 0.1
"""Candidates scored below this are not counted (as in `flow/site_calibration.py`: ratios of noise)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class UseCount(_Model):
    """The candidates weighed at one key on one kind of evidence."""

    tool: str
    site: str
    mention: str = "plain"
    role: Role = "own"
    weighed: NonNegativeFloat = 0.0
    score: NonNegativeFloat = 0.0
    """The sum of their scores r·ρ."""
    used: NonNegativeFloat = 0.0
    """How many of them the agent made itself before its next write."""

    @property
    def key(self) -> EvidenceKey:
        return self.tool, self.site, self.mention


def evidence_key(tool: str, site: str, binding: Any) -> EvidenceKey:
    """The key a binding of `tool` made at `site` is counted and served under."""
    return tool, site, getattr(binding, "mention", "plain")


def count_use(rows: Iterable[tuple[EvidenceKey, float, bool]], role: Role = "own",
              floor: float = EVIDENCE_FLOOR) -> list[UseCount]:
    """Weighed candidates (key, score, used) as counts per key, sorted."""
    totals: dict[EvidenceKey, list[float]] = {}
    for key, score, used in rows:
        if score < floor:
            continue
        t = totals.setdefault(key, [0.0, 0.0, 0.0])
        t[0] += 1
        t[1] += score
        t[2] += float(used)
    return [UseCount(tool=k[0], site=k[1], mention=k[2], role=role, weighed=w, score=round(q, 6), used=u)
            for k, (w, q, u) in sorted(totals.items())]


class UseEvidence(_Model):
    """Counts of use and the priors they are served with; `factor` is what the speculator multiplies ρ by."""

    site_prior: NonNegativeFloat = DEFAULT_SITE_PRIOR
    agent_prior: NonNegativeFloat = DEFAULT_AGENT_PRIOR
    hold: bool = DEFAULT_HOLD
    """A key whose candidates' mean posterior q̄_k·f_k falls under θ* makes no lookup at all (`held`)."""
    counts: list[UseCount] = Field(default_factory=list)

    def agent_factor(self) -> float:
        """g = (U + P_g) / (Q + P_g) over the own counts, at most 1 (1 with no own evidence)."""
        own = [c for c in self.counts if c.role == "own"]
        used, score = sum(c.used for c in own), sum(c.score for c in own)
        if score <= 0.0 and used <= 0.0:
            return 1.0
        denominator = score + self.agent_prior
        return min(1.0, (used + self.agent_prior) / denominator) if denominator > 0 else 1.0

    def factors(self) -> tuple[dict[EvidenceKey, float], float]:
        """f_k for every counted key, and g (the factor of a key never counted)."""
        g = self.agent_factor()
        totals: dict[EvidenceKey, list[float]] = {}
        for c in self.counts:
            t = totals.setdefault(c.key, [0.0, 0.0, 0.0])
            t[0] += c.weighed
            t[1] += c.score
            t[2] += c.used
        out = {}
        for key, (n, q, u) in totals.items():
            out[key] = factor_of(n, q, u, self.site_prior, g)
        return out, g

    def held(self, theta_star: float) -> frozenset[EvidenceKey]:
        """The keys whose candidates' mean posterior q̄_k·f_k falls under θ*: they make no lookup."""
        factors, _ = self.factors()
        totals: dict[EvidenceKey, list[float]] = {}
        for c in self.counts:
            t = totals.setdefault(c.key, [0.0, 0.0])
            t[0] += c.weighed
            t[1] += c.score
        return frozenset(k for k, (n, q) in totals.items() if n > 0 and q / n * factors[k] < theta_star)

    def posterior(self, key: EvidenceKey) -> float | None:
        """π_k, the posterior use rate at a key (None where nothing was counted)."""
        n = q = u = 0.0
        for c in self.counts:
            if c.key == key:
                n, q, u = n + c.weighed, q + c.score, u + c.used
        if n <= 0:
            return None
        return q / n * factor_of(n, q, u, self.site_prior, self.agent_factor())


def factor_of(n: float, score: float, used: float, prior: float, g: float = 1.0) -> float:
    """f = (U + P·g·q̄) / (Q + P·q̄), at most 1; g where nothing was scored."""
    if n <= 0 or score <= 0:
        return g
    mean = score / n
    return min(1.0, (used + prior * g * mean) / (score + prior * mean))
