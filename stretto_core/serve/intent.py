"""Serving the reach's lift given the user's words (`learn/intent.py`), cheaply per decision.

The state keeps, of each user message, the rules' words the learner would have counted there
(`ToolState.watched_words`, cut by `sessions/said_words.py`, the learner's own rule: "Return" at a
sentence's start is no more said here than it was counted there). A rule's lift is found once per
user message (the state's `user_version`) and kept in the state's views, so a decision costs a
dictionary lookup when the user has not spoken since.
"""

from __future__ import annotations

from stretto_core.learn.intent import IntentRule, IntentTable
from stretto_core.sessions.state import ToolState


class IntentLifts:
    """A flow's `intent_table`, ready for decisions."""

    def __init__(self, table: IntentTable) -> None:
        self.rules = {(site, tool): rule for site, tools in table.rules.items() for tool, rule in tools.items()}
        self.words: frozenset[str] = frozenset(w for rule in self.rules.values()
                                               for w in (*rule.vouch, *rule.said, *rule.unsaid))
        """Every word a rule asks about: what a served state watches the user's messages for."""

    def lift(self, tool: str, state: ToolState, site: str) -> float:
        """The rule's lift for what the user said so far; 1 when no user spoke (a proxy's view)."""
        rule = self.rules.get((site, tool))
        if rule is None or not state.user.count:
            return 1.0
        tag = ("intent", site, tool)
        cached = state.views.get(tag)
        if cached is not None and cached[0] == state.user_version:
            return cached[1]
        if not self.words <= state.watched_words:
            state.watch(self.words)
        lift = rule_lift(rule, state.words_said)
        state.views[tag] = (state.user_version, lift)
        return lift

    def lifted(self, reach: float, tool: str, state: ToolState, site: str) -> float:
        return reach * self.lift(tool, state, site)


def rule_lift(rule: IntentRule, said: set[str] | frozenset[str]) -> float:
    """1 when the user said a word that vouches for the read; else the lowest lift of a word
    said that holds it back, or of a word not said whose saying would have vouched for it."""
    if any(w in said for w in rule.vouch):
        return 1.0
    lifts = [lift for w, lift in rule.said.items() if w in said]
    lifts += [lift for w, lift in rule.unsaid.items() if w not in said]
    return min(lifts, default=1.0)
