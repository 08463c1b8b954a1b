"""Serving the reach's lift given the user's words (`learn/intent.py`), cheaply per decision.

Which words the user said is looked up once per user message (the state's `user_version`) and
kept in the state's views, so a decision costs a dictionary lookup when the user has not spoken
since.
"""

from __future__ import annotations

from stretto_core.learn.intent import IntentRule, IntentTable
from stretto_core.sessions.state import ToolState
from stretto_core.sessions.user_text import find_word


class IntentLifts:
    """A flow's `intent_table`, ready for decisions."""

    def __init__(self, table: IntentTable) -> None:
        self.rules = {(site, tool): rule for site, tools in table.rules.items() for tool, rule in tools.items()}

    def lift(self, tool: str, state: ToolState, site: str) -> float:
        """The rule's lift for what the user said so far; 1 when no user spoke (a proxy's view)."""
        rule = self.rules.get((site, tool))
        if rule is None or not state.user.count:
            return 1.0
        tag = ("intent", site, tool)
        cached = state.views.get(tag)
        if cached is not None and cached[0] == state.user_version:
            return cached[1]
        lift = rule_lift(rule, state.user.text)
        state.views[tag] = (state.user_version, lift)
        return lift

    def lifted(self, reach: float, tool: str, state: ToolState, site: str) -> float:
        return reach * self.lift(tool, state, site)


def rule_lift(rule: IntentRule, text: str) -> float:
    """1 when the user said a word that vouches for the read; else the lowest lift of a word
    said that holds it back, or of a word not said whose saying would have vouched for it."""
    if any(find_word(text, w) >= 0 for w in rule.vouch):
        return 1.0
    lifts = [lift for w, lift in rule.said.items() if find_word(text, w) >= 0]
    lifts += [lift for w, lift in rule.unsaid.items() if find_word(text, w) < 0]
    return min(lifts, default=1.0)
