"""Preconditions of writes: a write is made only where the state shows what each of its demonstrations changed.

A decision tree learns a split only where a site's training steps disagree. With few sessions a
site often saw one write only (after `get_data_usage`, always `refuel_data`; after the status
bar, always `toggle_airplane_mode`), so its leaf makes that write in any state, and a toggle made
where the demonstrations never made it undoes what was right (airplane mode turned on again,
mobile data turned off). A write's precondition is what every demonstration of it changed:
`now:TOKEN`s some result showed since the last write (whichever tool returned it: the status bar
is printed by `check_status_bar` and by every toggle alike) that the write's own result no
longer showed.
Tying a write to what it changed, not to the task it was seen in, is what lets a repair learned
on one ticket be made on another whose state needs it. Ticket words can be added
(`with_ticket`); they make a write wait for the tickets it was seen with.

Reads get no precondition: a read changes nothing, and a run that reads more learns more.
"""

from __future__ import annotations

from collections import defaultdict

from stretto_core.procedures.episodes import Episode
from stretto_core.procedures.state import RunState, Step

NOW = "now:"
"""The prefix of a token some result showed since the last write (that write's own result too),
whichever tool returned it: what the run knows of the state as it is now."""


def now_tokens(state: RunState) -> set[str]:
    """The tokens of every result from the last write (inclusive) on, without whole ` | ` lines."""
    start = max(state.last_write_index(), 0)
    return {t for step in state.steps[start:] for t in step.tokens if " | " not in t}


def condition_features(state: RunState, vocab: set[str]) -> set[str]:
    """The features a precondition may name: what results say now, and the ticket's words."""
    return {f"{NOW}{t}" for t in now_tokens(state)} | {f"ticket: {w}" for w in state.words if w in vocab}


def _changed(before: RunState, step: Step) -> set[str]:
    """What the write changed: tokens results showed since the last write that its own result
    no longer shows (a whole ` | `-joined line is left out: its pieces are tokens of their own)."""
    after = set(step.tokens)
    return {f"{NOW}{t}" for t in now_tokens(before) if t not in after}


def state_tokens(episodes: list[Episode], writes: set[str]) -> set[str]:
    """Tokens that can describe a state: shown by some result of a call and not by another result
    of the very same call, arguments included (the status bar; the customer's name never varies
    and tells nothing; two lines of one customer differ, but neither changed: grouping by action
    instead made their fields preconditions and lost 2 of the 4 recorded leave-one-task-out
    folds), and comparisons of fields of the result of a read only some episodes made (`data_used_gb>=data_limit_gb`: a read made
    in every episode looks up the customer, one made in some looks into the problem)."""
    shown: dict[str, list[set[str]]] = defaultdict(list)
    compared: dict[str, set[str]] = defaultdict(set)
    in_episodes: dict[str, int] = defaultdict(int)
    for e in episodes:
        for tool in {s.tool for s in e.steps}:
            in_episodes[tool] += 1
        for step in e.steps:
            if not step.error:
                shown[step.call_key()].append(set(step.tokens))
                if step.tool not in writes:
                    compared[step.tool].update(t for t in step.tokens if ">=" in t and not t.startswith("says "))
    out: set[str] = set()
    for results in shown.values():
        out |= set.union(*results) - set.intersection(*results)
    for tool, tokens in compared.items():
        if in_episodes[tool] < len(episodes):
            out |= tokens
    return out


def learn_preconditions(episodes: list[Episode], vocab: list[str], writes: set[str],
                        with_ticket: bool = False) -> dict[str, list[str]]:
    """Each write action's precondition: what it changed in every state it was demonstrated in.

    A write is demonstrated where it was needed: the state it was made in showed something its
    result no longer shows (the status bar's airplane, `data_used_gb>=data_limit_gb`). The
    precondition is what every demonstration of the write changed (Find-S over those tokens that
    can describe a state, `state_tokens`), and
    with `with_ticket` also the splitting ticket words every one of its tickets had. Steps'
    action keys must already be assigned.
    """
    words = set(vocab)
    states = {f"{NOW}{t}" for t in state_tokens(episodes, writes)}
    having: dict[str, list[set[str]]] = defaultdict(list)
    for e in episodes:
        run = RunState(e.ticket, e.steps)
        for t, step in enumerate(e.steps):
            if step.tool not in writes or not step.action:
                continue
            prefix = run.prefix(t)
            needed = _changed(prefix, step) & states
            if with_ticket:
                needed |= {f"ticket: {w}" for w in prefix.words if w in words}
            having[step.action].append(needed)
    out: dict[str, list[str]] = {}
    for action, seen in having.items():
        common = set.intersection(*seen)
        if any(f.startswith(NOW) for f in common):
            out[action] = sorted(common)
    return out


def precision(episodes: list[Episode], vocab: list[str], requires: dict[str, list[str]]) -> dict[str, float]:
    """For each precondition, the share of training states meeting it whose next call was its
    write: how much the state alone says "make this write now". `Speed test failed` holds in
    many states where other calls came next; the status bar's airplane, only where it was
    turned off. Steps' action keys must already be assigned."""
    words = set(vocab)
    met: dict[str, int] = defaultdict(int)
    made: dict[str, int] = defaultdict(int)
    for e in episodes:
        run = RunState(e.ticket, e.steps)
        for t, step in enumerate(e.steps):
            feats = condition_features(run.prefix(t), words)
            for action, needed in requires.items():
                if all(f in feats for f in needed):
                    met[action] += 1
                    made[action] += step.action == action
    return {a: round(made[a] / met[a], 4) for a in requires if met[a]}


def unmet(requires: list[str], features: set[str]) -> list[str]:
    """The preconditions the state does not meet (empty: the write may be made)."""
    return [f for f in requires if f not in features]
