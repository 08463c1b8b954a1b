"""The reference harness: a scripted agent served by a `LiveSession` with no SDK in between.

It is what every adapter does, with nothing of an SDK's own: the agent's turns come from an
`EpisodePlayer`, its calls run in the real environment, and after each result the live
session's lookups ride in that same result. An adapter's end-to-end run must count the same
LLM turns as this harness, and this harness the same as `stretto replay --env`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from stretto_core.evaluate.scripted.player import EpisodePlayer
from stretto_core.evaluate.scripted.toolset import Tau2Toolset
from stretto_core.serve.live import Stretto
from stretto_core.sessions.model import Session


@dataclass(frozen=True)
class EpisodeRun:
    """What one scripted episode did: LLM turns made, recorded, saved, and lookups made."""

    session_id: str
    llm_turns: int
    recorded_turns: int
    saved_turns: int
    lookups: int


async def run_episode(session: Session, stretto: Stretto | None) -> EpisodeRun:
    """Play one recorded episode against its real tools, with stretto serving (or not)."""
    toolset = Tau2Toolset(session)
    player = EpisodePlayer(session)
    live = stretto.session(f"reference-{session.header.session_id}", task_id=session.header.task_id) \
        if stretto is not None else None
    try:
        for segment in player.segments():
            if live is not None:
                live.user(segment.user_text)
            outputs: list[str] = []
            while True:
                turn = player.next_turn(outputs)
                outputs = []
                if live is not None and turn.counted:
                    live.llm_turn(turn.text, turn.calls)
                if not turn.calls:
                    break
                for call in turn.calls:
                    text, error = toolset.call(call.tool, call.arguments)
                    if live is not None:
                        text += await live.after_tool(call.call_id, call.tool, call.arguments, text,
                                                      toolset.acall, error=error)
                    outputs.append(text)
    finally:
        if live is not None:
            live.close()
    made = len(live.lookups) if live is not None else 0
    return EpisodeRun(session.header.session_id, player.llm_turns, player.recorded_turns,
                      player.saved_turns, made)


def run_episodes(sessions: list[Session], stretto: Stretto | None) -> list[EpisodeRun]:
    """`run_episode` over several episodes, in order."""
    return [asyncio.run(run_episode(s, stretto)) for s in sessions]
