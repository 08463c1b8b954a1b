"""The uses the evidence test missed at a site of a served session, taught anyway (the `weighed` rule).

A served lookup is taught as the agent's call only when the evidence test catches a use of it
(`served.py`), and the test misses reads whose answer the agent restates rather than repeats: a
site whose lookups the agent needed is taught fewer uses than it had, and the next flow backs off
there. Where the test caught n of a site's lookups, its recall is r and it catches a detour with
chance f, the site stands for about (n − f·N)/(r − f) uses of its N lookups: `drawn_as_used` teaches
that many, adding to the n caught ones a share (`used_share`) of the site's uncaught lookups, each
by a draw fixed by a hash of the session and the lookup (a session is taught the same every time,
counts stay integers and merges stay exact). A site where the test caught none (a chained lookup
the agent never reads) is taught none, and one catch among many lookups (a stray detour) no more.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Mapping, Sequence

from stretto_core.sessions.model import Lookup


@dataclass(frozen=True)
class ToolRecall:
    """The evidence test's recall per tool, measured on a deployment's recorded sessions: the
    recall `weighed` scales catches by at each tool, and below `blind_below` a tool whose uncaught
    lookups are taught by `score_share` of their score instead (`drawn_by_score`). A fixed input:
    sessions taught with the same table count the same in parts as at once."""

    by_tool: Mapping[str, float]
    blind_below: float
    score_share: float
    ramp: bool = False
    """Instead of a cliff at `blind_below`: a tool is as blind as its recall is short of it,
    1 − r/`blind_below` (no second knob: the threshold is where blindness ends)."""

    def blind(self) -> set[str]:
        return {tool for tool, r in self.by_tool.items() if r < self.blind_below}

    def blindness(self) -> dict[str, float]:
        """Per blind tool, how blind (1: wholly; with `ramp`, 1 − r/`blind_below`)."""
        return {tool: (1.0 - r / self.blind_below if self.ramp else 1.0)
                for tool, r in self.by_tool.items() if r < self.blind_below}


def used_share(caught: int, missed: int, recall_share: float, false_share: float = 0.0) -> float:
    """The share of a site's `missed` lookups to teach as used so that, with its `caught` ones,
    the site is taught the uses they stand for: u·n of n = caught + missed lookups, where the test
    catches a used one with chance r (`recall_share`) and an unused one with chance f
    (`false_share`), so caught ≈ n·(u·r + (1 − u)·f) and u·n ≈ (caught − f·n) / (r − f)."""
    if missed <= 0 or caught <= 0:
        return 0.0
    r = min(max(recall_share, 1e-6), 1.0)
    f = min(max(false_share, 0.0), r / 2)
    uses = (caught - f * (caught + missed)) / (r - f)
    return min(1.0, max(0.0, (uses - caught) / missed))


def drawn_as_used(session_id: str, shown: Sequence[Lookup], caught: set[str], recall_share: float,
                  false_share: float = 0.0, by_tool: Mapping[str, float] | None = None) -> set[str]:
    """Of the `shown` lookups the test did not catch (`caught`: the call ids it did), those taught
    as used: at each (tool, site), `used_share` of them, each by its own fixed draw (`by_tool`:
    the test's recall per tool, where measured; `recall_share` elsewhere)."""
    groups: dict[tuple[str, str | None], list[Lookup]] = {}
    hits: dict[tuple[str, str | None], int] = {}
    for lk in shown:
        key = (lk.tool, lk.site)
        if lk.call_id in caught:
            hits[key] = hits.get(key, 0) + 1
        else:
            groups.setdefault(key, []).append(lk)
    out: set[str] = set()
    for key, missed in groups.items():
        r = by_tool.get(key[0], recall_share) if by_tool else recall_share
        share = used_share(hits.get(key, 0), len(missed), r, false_share)
        out |= {lk.call_id for lk in missed if _draw(session_id, lk.call_id) < share}
    return out


def drawn_by_score(session_id: str, shown: Sequence[Lookup], caught: set[str], blind: Mapping[str, float] | set[str],
                   share: float = 1.0) -> set[str]:
    """Where the test is blind (`blind`: tools whose uses it catches too rarely to tell one from a
    detour), an uncaught lookup says nothing either way: it is taught as used with the chance the
    flow gave it when it served (its score), so the site's estimate stays where it was, in
    expectation, instead of falling for want of evidence the test could not give (`share` < 1:
    a score that made the lookup is one picked for being high, so only that share of it; `blind` as a
    mapping: each tool's blindness in [0, 1] scales it too)."""
    weight = blind if isinstance(blind, Mapping) else dict.fromkeys(blind, 1.0)
    return {lk.call_id for lk in shown if lk.tool in weight and lk.call_id not in caught
            and _draw(session_id, lk.call_id) < share * weight[lk.tool] * (lk.score or 0.0)}


def _draw(session_id: str, call_id: str) -> float:
    """A number in [0, 1) fixed by the session and the lookup."""
    digest = hashlib.sha256(f"{session_id}\0{call_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64
