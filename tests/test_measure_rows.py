"""Shared builders for the measurement tests: shop episodes, hand-made episode and weighed rows."""

from __future__ import annotations

from stretto_core.evaluate.replay.episode import PreparedEpisode, prepare_sessions
from stretto_core.evaluate.replay.rows import EpisodeRow, WeighedRow
from test_replay_fakes import Script, Shop

EMAIL = {"email": "ann@x.org"}
USER = {"user_id": "u1"}


def shop_episode(n: int) -> Script:
    """Episodes that vary: some read the user right away, some after a write, some read an order."""
    shop = Shop()
    script = Script(session_id=f"s{n:03d}").user("I am ann@x.org").agent(("find_user", EMAIL), tokens=900).play(shop)
    if n % 3 == 1:
        script.agent(("cancel_order", {"order_id": "o1"}), tokens=1000).play(shop)
    script.agent(("get_user", USER), tokens=1100).play(shop)
    if n % 2 == 0:
        script.agent(("get_order", {"order_id": "o1"}), tokens=1200).play(shop)
    return script.agent(text="Done.", tokens=1300)


def shop_sessions(count: int, agent: str = "fake-agent") -> list[PreparedEpisode]:
    sessions = []
    for n in range(count):
        session = shop_episode(n).session()
        session.header.agent_model = agent
        sessions.append(session)
    return prepare_sessions(sessions)


def episode_row(sid: str, task: str, turns: int, saved: int, detours: int, ceiling: int, app: str = "shop") -> EpisodeRow:
    return EpisodeRow(session_id=sid, task_id=task, app=app, llm_turns=turns, turns_saved=saved, detours=detours,
                      ceiling_turns=ceiling, lookups=saved + detours, used=saved)


def weighed(task: str, next_score: float, use_score: float, used: bool, sid: str | None = None) -> WeighedRow:
    return WeighedRow(session_id=sid or f"s-{task}", task_id=task, decision=0, tool="get_user", site="x", reach=use_score,
                      next_p=next_score, binding=1.0, score_use=use_score, score_next=next_score, used=used)
