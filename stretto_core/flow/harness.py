"""Learning for one agent from sessions of several harnesses: its own, its harness-mates', the rest.

A deployment serves one agent (a model) in one harness, and often has traces of other agents and
other frameworks. They are not worth the same: the same model behaves differently under another
harness's prompt and loop, and agents of one harness share its loop. So the agent's own sessions
count as data, and the others enter as two power priors (`flow.ir.learn`, `priors=`):

    harness-mates   sessions of other agents in the agent's harness, weighing `mates` sessions
    other harnesses sessions run in any other harness (the same model's included), weighing `others`

A weight is how many sessions the body weighs in all ("weigh these 412 sessions as 100": each
counts 100/412); `ALL` counts each session as one (pooled), 0 leaves the body out.

The default (`DEFAULT_MATES`, `DEFAULT_OTHERS`) is the rule that did best on the τ²-bench airline
and retail agents (`stretto harnesses`, docs/harnesses.md). That table replays test episodes; checked
again on the train split alone by cross-validation over task folds (`benchmarks/harness_prior_cv.py`),
no rule beats it beyond its interval, so it stays (docs/harnesses.md, "Re-checked on the train split").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from stretto_core.errors import StrettoError
from stretto_core.flow.ir import Flow, learn
from stretto_core.sessions.agents import agent_key
from stretto_core.sessions.model import Session

ALL = "all"
"""A body's weight when each of its sessions counts as one (the body pooled with the agent's own)."""

Weight = float | str
"""A number of sessions, or `ALL`."""

DEFAULT_MATES: Weight = ALL
"""Harness-mates' weight by default (see the module docstring)."""

DEFAULT_OTHERS: Weight = 100.0
"""Other harnesses' weight by default."""


@dataclass(frozen=True)
class HarnessSplit:
    """One agent's sessions and the two other bodies, as learning for that agent weighs them."""

    agent: str
    harness: str
    own: list[Session]
    mates: list[Session]
    others: list[Session]


def harnesses_of(sessions: Sequence[Session]) -> list[str]:
    return sorted({s.header.harness for s in sessions})


def split_for_agent(sessions: Sequence[Session], agent: str, harness: str | None = None) -> HarnessSplit:
    """The agent's own sessions (in `harness`), its harness-mates' and other harnesses'.

    `harness` may be left out when the agent's sessions all ran in one harness.
    """
    key = agent_key(agent)
    if harness is None:
        ran = harnesses_of([s for s in sessions if agent_key(s.header.agent_model) == key])
        if len(ran) != 1:
            found = ", ".join(ran) if ran else "none of the sessions"
            raise StrettoError(f"agent {key!r} ran in {found}; name its harness (--harness)")
        harness = ran[0]
    own, mates, others = [], [], []
    for s in sessions:
        if s.header.harness != harness:
            others.append(s)
        elif agent_key(s.header.agent_model) == key:
            own.append(s)
        else:
            mates.append(s)
    return HarnessSplit(key, harness, own, mates, others)


def parse_weight(text: str | float | None, default: Weight) -> Weight:
    """`all`, a number of sessions (≥ 0), or the default when None; else a clear error."""
    if text is None:
        return default
    if isinstance(text, str) and text.strip().lower() == ALL:
        return ALL
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise StrettoError(f"a prior's weight is `all` or a number of sessions, not {text!r}") from None
    if value < 0 or value != value:
        raise StrettoError(f"a prior's weight must be 0 or more sessions, not {text!r}")
    return value


def prior_of(body: Sequence[Session], weight: Weight) -> tuple[list[Session], float | None] | None:
    """One `priors=` entry of `learn`: None when the body is empty or weighs nothing."""
    if not body or weight == 0:
        return None
    return list(body), (None if weight == ALL else float(weight))


def learn_split(split: HarnessSplit, *, mates: Weight = DEFAULT_MATES, others: Weight = DEFAULT_OTHERS,
                **options: Any) -> Flow:
    """The agent's flow: its own sessions, with harness-mates and other harnesses as priors."""
    priors = [p for p in (prior_of(split.mates, mates), prior_of(split.others, others)) if p is not None]
    priors += list(options.pop("priors", ()))
    if not split.own and not priors:
        raise StrettoError(f"no sessions to learn {split.agent!r} ({split.harness}) from: it has none of its "
                           "own and the priors weigh nothing")
    return learn(split.own, priors=priors, **options)


def learn_for_agent(sessions: Sequence[Session], agent: str, *, harness: str | None = None,
                    mates: Weight = DEFAULT_MATES, others: Weight = DEFAULT_OTHERS, **options: Any) -> Flow:
    """Learn one agent's flow from sessions of several harnesses (module docstring).

    `options` go to `flow.ir.learn` (manifest, features, constants, binding_options).
    """
    return learn_split(split_for_agent(sessions, agent, harness), mates=mates, others=others, **options)
