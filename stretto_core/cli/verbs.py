"""The verbs, named without importing them: `stretto --help` lists these, a verb loads when run.

Each verb lives in a module of `cli/commands/` with a `register(app)` function. Listing them
here, with their one-line help, lets the CLI start without importing what the verbs need
(plots, statistics, benchmark environments). `tests/test_cli_start.py` fails when this table
and the modules disagree.

`RESEARCH` names the verbs that reproduce the paper's evaluation (on labelled benchmark runs);
`stretto --help` lists them apart from the verbs a user runs on their own agent's sessions. A
verb not named there is a user's verb, so a new verb needs only its line in `VERBS`.
"""

from __future__ import annotations

VERBS: dict[str, tuple[str, str]] = {
    "ablate": ("ablate", "What each part of the estimators buys: each variant replayed on the test sessions."),
    "bench": ("bench", "The paper's tables, plots and JSON rows on the published runs (STRETTO_DATA)."),
    "calibrate": ("calibrate", "ECE, Brier and AUC of the next-step and use-before-write scores."),
    "ceiling": ("ceiling", "Class every LLM turn and print the read-only ceiling per app."),
    "costs": ("costs", "A saved turn's value, a detour's cost, and the threshold they set."),
    "curves": ("curves", "Learning curves: the agent's own, other agents', and a prior of others' plus its own."),
    "doctor": ("doctor", "Check the install, the SDK extras, the store, the flows and the data."),
    "demo": ("demo", "Run stretto end to end on a built-in shop served by a scripted agent."),
    "flow": ("flow", "Read, merge and review flow files."),
    "harnesses": ("harnesses", "Which sessions to learn each agent from across harnesses: own, mates, others, priors."),
    "ingest": ("ingest", "Convert recorded episodes into stretto sessions, one file each."),
    "learn": ("learn", "Learn a flow by counting: the habit, the reach, the bindings and the contracts."),
    "procedure": ("procedure", "Where no user speaks: compile, show, run and cascade a procedure from traces."),
    "proxy": ("proxy", "An MCP proxy in front of a server: records sessions and appends the flow's lookups."),
    "replay": ("replay", "Re-run each episode with the flow deciding after every tool response."),
    "split": ("split", "Write each app's train and test task ids."),
    "sweep": ("sweep", "Replay both speculators at each threshold: turns saved, detours, utility."),
    "userwords": ("userwords", "What binding from the user's words adds in replay, per suite and domain."),
}
"""Verb -> (module in cli/commands, one line of help)."""

RESEARCH: frozenset[str] = frozenset({
    "ablate", "bench", "calibrate", "costs", "curves", "harnesses", "split", "sweep", "userwords",
})
"""The research verbs: the paper's tables and studies on the published runs (`stretto --help`
lists them under "Research")."""

GROUPS: dict[str, str] = {
    "run": "Verbs (on your agent's sessions)",
    "research": "Research (the paper's evaluation on published runs)",
}
"""Group -> the heading `stretto --help` gives it, in the order listed."""


def group_of(verb: str) -> str:
    """The group `stretto --help` lists a verb under: "research" or "run"."""
    return "research" if verb in RESEARCH else "run"
