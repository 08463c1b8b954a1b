"""What the customer wants, by counting: the reach of a read given a word the user said.

The reach r(t | h) counts the tool state only, and at some sites the tool state cannot tell
whether a read will be used: after an order, τ² retail's agents look up its products when the
customer wants an exchange or a changed item (used about eight times in ten), and not when the
customer wants a return, a cancellation or a new address (about two in ten); the counts over
steps see one rate, about one in two, and the lookups made there are half of retail's detours.
The user's words tell the two apart, and a count over them is as cheap as the reach's own.

Counted per site s (the tool whose result the speculator decides after, `site_name`) and read
tool t, over every result of the agent's own calls in training:

    n(s)          decisions at s                     m(s, t)     of which t was called before the next write
    n(s, w)       of those, with w said so far       m(s, t, w)  of which t was called before the next write

where w is a word the user wrote in lower case (letters only, 3–20 of them: no name, no number,
no id or email is ever counted). Derived (`derive_table`), for each (s, t) and each word said in
at least `MIN_SESSIONS` sessions, the use rate given the word shrunk to the site's rate p(s, t) =
m(s, t) / n(s) with a prior of `PRIOR_DECISIONS` decisions, and its lift over that rate,

    L(s, t, w) = ((m(s, t, w) + A p) / (n(s, w) + A)) / p,

kept when it is `MIN_Z` binomial deviations from p (the deviation widened by the square root of
the site's decisions per task) and moves the rate by `MIN_LIFT` either way; a word vouches for
the read on less (`VOUCH_Z`, `VOUCH_LIFT`). Kept are the words whose saying holds the read back
(`said`), those whose absence does (`unsaid`) and those that vouch for it (`vouch`).

Served (`serve/intent.py`), the reach of t at s is r(t | h) times the lowest lift among the
`said` words said and the `unsaid` words not said, unless a `vouch` word was said: the words only
ever hold a read back, since raising one outranks the reads the tool state is sure of and spends
the budget of a call on it. A proxy, which sees no user words, serves the reach as counted.
"""

from __future__ import annotations

import math
from typing import Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from stretto_core.learn.bindings.model import site_name
from stretto_core.learn.reads_ahead import reads_before_write
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import Session, ToolResult, UserMessage
from stretto_core.sessions.said_words import said_words


MIN_SESSIONS = 10.0
"""A word enters the table only when the users of at least this many sessions said it."""

PRIOR_DECISIONS = 10.0
"""The site's rate weighs this many decisions in a word's shrunk rate."""

MIN_LIFT = 1.5
"""A word is kept when its shrunk rate is at least this factor above or below the site's."""

MIN_Z = 3.0
"""…and when its decisions' uses are at least this many binomial deviations from what the site's
rate expects (a site tests a thousand words), the deviation widened by the square root of the
site's decisions per task (they are not independent: a design effect; AgentDojo's twenty agents
ran the same requests)."""

VOUCH_Z, VOUCH_LIFT = 2.0, 1.4
"""A word that vouches for a read needs less: it can only keep a read as counted."""



class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IntentCounts(_Model):
    """The counts of the module docstring; every number a (weighted) count, added when flows merge."""

    decisions: dict[str, float] = Field(default_factory=dict)
    """n(s): site -> decisions at it."""
    used: dict[str, dict[str, float]] = Field(default_factory=dict)
    """m(s, t): site -> read tool -> decisions after which the agent called it before its next write."""
    said: dict[str, dict[str, float]] = Field(default_factory=dict)
    """n(s, w): site -> word -> decisions at which the user had said the word."""
    said_used: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)
    """m(s, t, w): site -> read tool -> word -> decisions with the word said and the tool called."""
    sessions: dict[str, float] = Field(default_factory=dict)
    """word -> sessions whose user said it."""
    site_tasks: dict[str, list[str]] = Field(default_factory=dict)
    """site -> the tasks (a session without one: its id) with a decision at it, sorted: a task's
    decisions are not independent, however many agents ran it."""

    def merged(self, other: "IntentCounts", weight: float = 1.0) -> "IntentCounts":
        out = self.model_copy(deep=True)
        out.add(other, weight)
        return out

    def add(self, other: "IntentCounts", weight: float = 1.0) -> None:
        """Add `weight` times `other`, in place (summing many flows copies the total once, not per flow)."""
        out = self
        _add_flat(out.decisions, other.decisions, weight)
        _add_flat(out.sessions, other.sessions, weight)
        for site, tasks in other.site_tasks.items():
            out.site_tasks[site] = sorted(set(out.site_tasks.get(site, [])) | set(tasks))
        for site, row in other.used.items():
            _add_flat(out.used.setdefault(site, {}), row, weight)
        for site, row in other.said.items():
            _add_flat(out.said.setdefault(site, {}), row, weight)
        for site, tools in other.said_used.items():
            mine = out.said_used.setdefault(site, {})
            for tool, row in tools.items():
                _add_flat(mine.setdefault(tool, {}), row, weight)


def _add_flat(into: dict[str, float], other: dict[str, float], weight: float) -> None:
    for key, value in other.items():
        into[key] = into.get(key, 0.0) + weight * value


class IntentRule(_Model):
    """Derived, for one (site, read tool): the words that hold its reach back, and those that vouch for it."""

    vouch: list[str] = Field(default_factory=list)
    """Words whose saying raises the rate by `MIN_LIFT` or more: said, the reach is served as counted."""
    said: dict[str, float] = Field(default_factory=dict)
    """word -> lift below 1 when the user said it."""
    unsaid: dict[str, float] = Field(default_factory=dict)
    """word -> lift below 1 while the user has not said it."""


class IntentTable(_Model):
    """Derived: site -> read tool -> `IntentRule` (only the pairs with a word kept)."""

    rules: dict[str, dict[str, IntentRule]] = Field(default_factory=dict)


def decisions_of(session: Session, manifest: ToolManifest) -> Iterator[tuple[str, frozenset[str], frozenset[str]]]:
    """(site, words said so far, reads the agent called before its next write) per agent result.

    The decisions between two user messages share one frozenset of words (the same object), so a
    counter can add a word's decisions once per message rather than once per decision."""
    user_calls = {c.call_id for e in session.events if isinstance(e, UserMessage) for c in e.calls}
    later = reads_before_write(session, manifest, user_calls)
    words: frozenset[str] = frozenset()
    for event in session.events:
        if isinstance(event, UserMessage):
            new = said_words(event.text)
            if not new <= words:
                words = words | new
        elif isinstance(event, ToolResult) and event.call_id not in user_calls:
            yield site_name(event.tool, event.error), words, later[event.call_id]


def count_session(counts: IntentCounts, session: Session, manifest: ToolManifest, weight: float = 1.0) -> None:
    """Add one session's decisions to `counts`.

    Per-word counts are added once per run of decisions with the same words said (weight times
    the run's decisions at a site, and at a site with a tool used), not once per decision: a
    session's user says a few hundred words and makes tens of decisions between two messages."""
    seen: set[str] = set()
    sites: set[str] = set()
    run_words: frozenset[str] = frozenset()
    run: dict[str, list] = {}  # site -> [decisions, {tool: decisions it was used after}] in this run

    def add_run() -> None:
        if not run_words:
            return
        for site, (n, tools) in run.items():
            _add_each(counts.said.setdefault(site, {}), run_words, weight * n)
            if tools:
                said_used = counts.said_used.setdefault(site, {})
                for tool, k in tools.items():
                    _add_each(said_used.setdefault(tool, {}), run_words, weight * k)

    for site, words, reads in decisions_of(session, manifest):
        if words is not run_words:
            add_run()
            run_words, run = words, {}
            seen |= words
        sites.add(site)
        counts.decisions[site] = counts.decisions.get(site, 0.0) + weight
        used = counts.used.setdefault(site, {})
        for tool in reads:
            used[tool] = used.get(tool, 0.0) + weight
        here = run.setdefault(site, [0, {}])
        here[0] += 1
        for tool in reads:
            here[1][tool] = here[1].get(tool, 0) + 1
    add_run()
    for word in seen:
        counts.sessions[word] = counts.sessions.get(word, 0.0) + weight
    task = session.header.task_id or session.session_id
    for site in sites:
        tasks = counts.site_tasks.setdefault(site, [])
        if task not in tasks:
            tasks.append(task)
            tasks.sort()


def _add_each(row: dict[str, float], words: frozenset[str], n: float) -> None:
    """`row[word] += n` for every word, in their order (a run's words are a few hundred: the
    product and the look-up method are taken once, not once per word)."""
    get = row.get
    for word in words:
        row[word] = get(word, 0.0) + n


def derive_table(counts: IntentCounts) -> IntentTable:
    """The rules kept (module docstring), lifts rounded so a file states them exactly."""
    common = common_words(counts)
    rules = {site: kept for site in sorted(counts.decisions) if (kept := site_rules(counts, site, common))}
    return IntentTable(rules=rules)


def common_words(counts: IntentCounts) -> set[str]:
    """The words said in enough sessions to enter the table (`MIN_SESSIONS`)."""
    return {w for w, n in counts.sessions.items() if n >= MIN_SESSIONS}


def site_rules(counts: IntentCounts, site: str, common: set[str]) -> dict[str, IntentRule]:
    """One site's rules (a function of that site's counts and the common words alone, so that a
    flow staged session by session derives again only the sites a session touched)."""
    rules: dict[str, IntentRule] = {}
    n = counts.decisions[site]
    said = counts.said.get(site, {})
    spread = math.sqrt(max(1.0, n / max(1, len(counts.site_tasks.get(site, ())))))  # decisions per task
    for tool, m in sorted(counts.used.get(site, {}).items()):
        p = m / n if n > 0 else 0.0
        if not 0.0 < p < 1.0:
            continue
        hits = counts.said_used.get(site, {}).get(tool, {})
        rule = IntentRule()
        for word in sorted(common & said.keys()):
            k, n_w = hits.get(word, 0.0), said[word]
            vouches, present = _telling_lifts(k, n_w, p, VOUCH_Z * spread, MIN_Z * spread)
            if vouches is not None and vouches >= VOUCH_LIFT:
                rule.vouch.append(word)
            elif present is not None and present <= 1.0 / MIN_LIFT:
                rule.said[word] = present
            absent = _telling_lift(m - k, n - n_w, p, MIN_Z * spread)
            if absent is not None and absent <= 1.0 / MIN_LIFT:
                rule.unsaid[word] = absent
        if rule.said or rule.unsaid:
            rules[tool] = rule
    return rules


def _telling_lift(k: float, n: float, p: float, z: float) -> float | None:
    """The lift of k uses in n decisions over the rate p, shrunk with `PRIOR_DECISIONS`, when it is
    `z` binomial deviations from p; None otherwise."""
    if n <= 0:
        return None
    if abs(k - n * p) < z * math.sqrt(n * p * (1.0 - p)):
        return None
    return _shrunk_lift(k, n, p)


def _shrunk_lift(k: float, n: float, p: float) -> float:
    """k uses in n decisions shrunk to the rate p with `PRIOR_DECISIONS`, over p."""
    return round((k + PRIOR_DECISIONS * p) / (n + PRIOR_DECISIONS) / p, 6)


def _telling_lifts(k: float, n: float, p: float, z: float, z_more: float) -> tuple[float | None, float | None]:
    """`_telling_lift` at `z` and at `z_more` of the same uses, the deviation found once (a word
    is tested for vouching and for holding back at every site and read)."""
    if n <= 0:
        return None, None
    deviation, sd = abs(k - n * p), math.sqrt(n * p * (1.0 - p))
    below, below_more = deviation < z * sd, deviation < z_more * sd
    if below and below_more:
        return None, None
    lift = _shrunk_lift(k, n, p)
    return (None if below else lift), (None if below_more else lift)


def count_sessions(sessions: Iterable[Session], manifest: ToolManifest, weight: float = 1.0) -> IntentCounts:
    counts = IntentCounts()
    for s in sessions:
        count_session(counts, s, manifest, weight)
    return counts
