"""What a served session may teach the next flow, and what other agents' sessions weigh as the agent's own arrive.

Where a flow served, the agent did not make the calls its lookups answered: learned as recorded
(stretto's `Lookup` events are not the agent's calls), the served session says the agent no
longer reads there, and the next flow backs off exactly where the last one paid: the loop
collapses. Counting every lookup as the agent's call instead teaches the flow its own guesses,
detours included. The rules (`RULES`), measured by `benchmarks/served_loop.py` (learn → serve →
learn again, round after round) on the train split:

- `drop`     stretto's lookups dropped, the session learned as recorded (what learning did before);
- `all`      every answered lookup counted as the agent's own call, at the point it was made;
- `holdout`  served sessions teach nothing; only sessions served record-only (a control fraction,
             `holdout=0.1`, and record and shadow sessions) are learned from;
- `used`     an answered lookup counts as the agent's call only with evidence of use: a value its
             result was the first in the session to show (`first_source.py`: not a field name or a
             value an earlier result, call, lookup or text held, nor one it was called with)
             appears in an argument of a later call of the agent's before its next write; the rest
             are dropped;
- `said`     as `used`, and such a value in the agent's own text before its next write counts as
             evidence too (a read whose answer the agent tells the user);
- `weighed`  as `said`, and the uses the test missed are taught too: at each (tool, site) of a
             session where it caught n of N lookups, the site stands for (n − f·N)/(r − f) uses
             (r = `RECALL`, f = `FALSE_CATCH`), so that many, the caught ones and a share of the
             rest drawn by a hash of the session and the lookup, are taught as the agent's calls
             (`missed_uses.drawn_as_used`); a site where it caught none (a chained lookup the
             agent never reads) teaches none.

Evidence must be a value only this lookup showed: counting values any result repeats (the user's
name in every reservation, the field names every result of a tool has) made nearly every lookup
the agent's call, chained ones it would never have made included (issue 25).

`DEFAULT_RULE` is the rule the loop benchmark chose (docs/promotion.md gives the figures). A
lookup the agent repeated itself (`ToolResult.repeats`) is never converted: the agent's own call
is already counted. An abandoned lookup was never shown, and teaches nothing.

Other agents' sessions enter an agent's flow as a power prior (`flow.ir.learn`'s `prior`); a
fixed weight keeps the agent's own habit out long after its own sessions could teach it, so the
prior's weight falls as they arrive: w(n) = w0 · k / (k + n) (`prior_weight_at`).
"""

from __future__ import annotations

from typing import Iterable, Iterator

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import Event, LLMTurn, Lookup, Session, ToolCall, ToolResult
from stretto_core.learn.missed_uses import ToolRecall, drawn_as_used, drawn_by_score
from stretto_core.learn.first_source import first_shown
from stretto_core.sessions.values import argument_leaves, normalize

RULES: tuple[str, ...] = ("drop", "all", "holdout", "used", "said", "weighed")
DEFAULT_RULE = "weighed"
"""Chosen by `benchmarks/served_loop.py` on the train split (docs/promotion.md): over nine
deployments and five rounds no round of it is both more than 10% off flows learned from the same
sessions unserved and beyond the unserved flow's own 95% interval (`said` 1 of 45, `used` 4,
`holdout` 8, `all` 10, `drop` 11), and 10 of 45 are more than 10% off (`said` 13); over all rounds
it saved 1.0% fewer turns with 3.1% fewer detours (`said` −1.4% / −2.8%). Its draws change which
lookups are taught: with two other hashes, 11 and 12 rounds more than 10% off, none beyond noise.
Paired (`--paired`: each round's flow and the unserved one replayed on the same sessions neither
learned from), it is off by more than 10% beyond doubt in 6 of 45 rounds (`said` 10, `used` 15,
`all` 19, `holdout` 20, `drop` 21)."""

SERVED_MODE = "serve"
MODE_LABEL = "stretto_mode"
"""Where a header without a `mode` field (session format 2) says how the session was served."""
MIN_EVIDENCE_CHARS = 3
"""A value shorter than this (`1`, `ok`, `no`) is no evidence that the agent read a result."""

RECALL = 0.5
"""`weighed`: the share of the reads an agent uses that the evidence test catches. Measured on the
train split's recorded sessions, each of the agent's own read calls put in a lookup's place
(`benchmarks/evidence_recall.py`): 2,264 of 4,490, 0.50 (AgentDojo Slack 0.22, travel 0.44,
τ² retail 0.80, airline 0.52; 0.53 of the served loop's used lookups). The loop benchmark, on
the train split, agrees: 0.3 and 0.7 strayed in more rounds, and so did each app's own recall (tried
without `FALSE_CATCH`) (docs/promotion.md)."""
FALSE_CATCH = 0.05
"""`weighed`: the share of detours (lookups the agent would not have made) the evidence test catches
anyway (a value it shows that the agent happens to write): 41 of 759 in the served loop under
`said` on the train split (`benchmarks/evidence_recall.py --served`, where replay knows which
lookups the agent would have made). Without it, a site where the test caught a stray detour was
taught a second one, and τ² airline's chained reservation lookups came back (claude-opus-4-6's
rounds 4–5: 2.1 detours an episode against the unserved flow's 0.7 and 0.4)."""

BLIND_RECALL = 0.15
"""`weighed` with a recall per tool (`teaching_view`'s `recall`, a `ToolRecall`; only `benchmarks/served_loop.py
--tool-recall` passes one so far): below this recall the test cannot tell a use from a detour at a
tool, so an uncaught lookup of it is taught by its own score (`missed_uses.drawn_by_score`). Chosen
on the train split by the paired score over both cuts (2 and 3 folds), leaving each deployment out
(`benchmarks/served_loop_choose.py`): every deployment left out is judged by 0.15 / 0.5, 5 of 90
rounds off against plain `weighed`'s 11; 0.35 teaches τ² airline gpt-4.1-mini's flight searches
(recall about 0.3) by score, +200% detours (docs/promotion.md)."""

BLIND_SHARE = 0.5
"""`weighed` with a recall per tool: an uncaught lookup at a blind tool is taught with this share of
its score (a score that made a lookup was picked for being high). Train split, paired score over
both cuts: the whole score 10 of 90 rounds off (travel's detours +21–32%), 0.7 6, 0.5 5, 0.3 6
(at a bar of 0.25; docs/promotion.md)."""

MIN_SAID_CHARS = 4
"""A value the agent's text must hold to count as said: shorter ones (`yes`, `12`) match anything."""

DEFAULT_PRIOR_SESSIONS = 100.0
"""w0: what other agents' sessions weigh as, in sessions, before any of the agent's own (the paper's 100)."""
DEFAULT_PRIOR_HALF = 100.0
"""k: after this many of the agent's own sessions the prior weighs half of w0. Chosen on the train
split (`benchmarks/online_curve.py --choose-half`: each τ² agent's flow after its first 10 and 30
sessions replayed on its later train sessions): utility 574.7, 579.9, 580.0, 580.0 at k = 10, 30,
100, 300; the curve is flat past 30, and 100 is the smallest best (docs/promotion.md)."""


def is_served(session: Session) -> bool:
    """Whether stretto served lookups in this session: its header says `serve`, or it holds a
    lookup stretto made and showed (whatever the header says: the lookups changed what the agent did)."""
    mode = getattr(session.header, "mode", None) or session.header.labels.get(MODE_LABEL)
    if mode == SERVED_MODE:
        return True
    return any(isinstance(e, Lookup) and not e.abandoned for e in session.events)


def teaching_view(session: Session, rule: str = DEFAULT_RULE,
                  recall: ToolRecall | None = None) -> Session | None:
    """The session as the next flow learns it under `rule`; None: it teaches nothing (`recall`:
    `weighed`'s recall per tool, measured on the deployment's recorded sessions, where known)."""
    if rule not in RULES:
        raise ValueError(f"the served-session rule is one of {', '.join(RULES)}, not {rule!r}")
    if not is_served(session):
        return session
    if rule == "drop":
        return session
    if rule == "holdout":
        return None
    manifest = session.header.manifest
    fresh = first_shown(session) if rule != "all" else {}
    shown = _shown_lookups(session)
    keep = {lk.call_id for lk in shown
            if rule == "all" or (manifest is not None and shows_use(session, lk, manifest, said=rule != "used",
                                                                   fresh=fresh.get(lk.call_id, set())))}
    if rule == "weighed" and manifest is not None:
        caught = set(keep)
        keep |= drawn_as_used(session.session_id, shown, caught, RECALL, FALSE_CATCH,
                              recall.by_tool if recall is not None else None)
        if recall is not None:
            keep |= drawn_by_score(session.session_id, shown, caught, recall.blindness(), recall.score_share)
    return as_agent_calls(session, keep)


def teaching_sessions(sessions: Iterable[Session], rule: str = DEFAULT_RULE,
                      recall: ToolRecall | None = None) -> Iterator[Session]:
    """Each session's `teaching_view`, the ones that teach nothing left out."""
    for s in sessions:
        view = teaching_view(s, rule, recall)
        if view is not None:
            yield view


def taught_views(sessions: Iterable[Session], rule: str = DEFAULT_RULE) -> Iterator[tuple[Session, str | None]]:
    """Each teaching session's view, with the recorded session's fingerprint where the view is not
    the session itself (so a flow remembers what it learned from as recorded); None: the view is it."""
    from stretto_core.sessions.fingerprint import session_fingerprint

    for s in sessions:
        view = teaching_view(s, rule)
        if view is not None:
            yield view, (None if view is s else session_fingerprint(s))


def _shown_lookups(session: Session) -> list[Lookup]:
    """Lookups the agent saw and did not make again itself."""
    repeated = {e.repeats for e in session.events if isinstance(e, ToolResult) and e.repeats}
    return [e for e in session.events if isinstance(e, Lookup) and not e.abandoned and e.call_id not in repeated]


def shows_use(session: Session, lookup: Lookup, manifest: ToolManifest, said: bool = False,
              fresh: set[str] | None = None) -> bool:
    """Whether a value the lookup's result was the first to show (`first_source.py`; `fresh`, when
    already known) appears in an argument of a later call of the agent's before its next write
    (`said`: or in the agent's own text)."""
    if fresh is None:
        fresh = first_shown(session).get(lookup.call_id, set())
    values = [v for v in fresh if len(v) >= MIN_SAID_CHARS] if said else []
    after = False
    for event in session.events:
        if event is lookup:
            after = True
            continue
        if not after or not isinstance(event, LLMTurn):
            continue
        if values and event.text:
            text = event.text.casefold()
            if any(v in text for v in values):
                return True
        for call in event.calls:
            for leaf in argument_leaves(call.arguments):
                key = normalize(leaf)
                if key is not None and len(key) >= MIN_EVIDENCE_CHARS and key in fresh:
                    return True
            if manifest.ends_reach(call.tool):
                return False
    return False


def as_agent_calls(session: Session, lookups: set[str]) -> Session:
    """The session with each named lookup in place as the agent's own call (an inferred one-call
    turn and its result); every other lookup stays a lookup (learning does not count those)."""
    events: list[Event] = []
    for event in session.events:
        if isinstance(event, Lookup) and event.call_id in lookups:
            events.append(LLMTurn(calls=[ToolCall(call_id=event.call_id, tool=event.tool,
                                                  arguments=dict(event.arguments))], inferred=True))
            events.append(ToolResult(call_id=event.call_id, tool=event.tool, content=event.content,
                                     parsed=event.parsed, error=event.error))
        else:
            events.append(event)
    return Session(header=session.header, events=events)


def prior_weight_at(own_sessions: int, w0: float = DEFAULT_PRIOR_SESSIONS, half: float = DEFAULT_PRIOR_HALF) -> float:
    """What the other agents' sessions weigh as, in sessions, once `own_sessions` of the agent's
    own are counted: w0 · k / (k + n). It falls smoothly, halving at n = k; k = ∞ is a fixed w0."""
    if own_sessions < 0 or w0 < 0 or half < 0:
        raise ValueError("sessions, w0 and k are numbers ≥ 0")
    if half == float("inf"):
        return w0
    return w0 * half / (half + own_sessions) if half + own_sessions > 0 else 0.0

