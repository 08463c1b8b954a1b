"""Who ran a session: its agent (the model, normalized) and its harness, as learning groups them.

An agent is its model: `agent_key` drops a provider prefix, a date and an AgentDojo defence
suffix, so `azure/gpt-4o-2024-11-20` and `gpt-4o`, or `gpt-4o-2024-05-13-tool_filter` and
`gpt-4o-2024-05-13`, are one agent. Learning for one agent weighs the sessions of its
harness-mates (other agents in its harness) and of other harnesses apart (`flow/harness.py`), and
the bench's "learned from other agents" never sees the same model.
"""

from __future__ import annotations

import re

DEFENCE_SUFFIXES = ("-repeat_user_prompt", "-spotlighting_with_delimiting", "-tool_filter",
                    "-transformers_pi_detector")
"""AgentDojo pipelines that wrap a model in a prompt-injection defence: the same model."""

DATE_SUFFIX = re.compile(r"[-_@]?(\d{4}-\d{2}-\d{2}|\d{8})$")


def agent_key(model: str | None) -> str:
    """The agent a session belongs to: its model, normalized."""
    name = (model or "unknown").rsplit("/", 1)[-1]
    for suffix in DEFENCE_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return DATE_SUFFIX.sub("", name) or name
