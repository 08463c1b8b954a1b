"""A recorded session says, as data, when a guard cut a lookup the flow chose: a budget, a time
limit (and, through the proxy, a changed listing: tests/adapters/test_proxy_forwarding.py).
Sessions of the format before `refusal` events existed still read."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from shop_sessions import MANIFEST, serve_recorded, shop_flow, shop_sessions, shop_tools
from stretto_core import Stretto, read_session
from stretto_core.errors import InputError
from stretto_core.sessions.model import Refusal, Session, ToolResult


def play(stretto: Stretto, session: Session, call_tool: Any) -> Session:
    """Serve one recorded shop session live, as an adapter would; the session file it wrote."""
    live = stretto.session(session.session_id, tools=MANIFEST)
    serve_recorded(live, session, call_tool)
    live.close()
    assert live.recorder is not None
    return read_session(live.recorder.path)


def refusals(session: Session) -> list[Refusal]:
    return [e for e in session.events if isinstance(e, Refusal)]


def test_a_session_budget_that_stops_lookups_is_recorded_with_the_lookup_it_cut(tmp_path: Path) -> None:
    episode = shop_sessions(30)[20]
    free = play(Stretto(shop_flow(), store=tmp_path / "free", theta=0.0), episode, shop_tools())
    capped = play(Stretto(shop_flow(), store=tmp_path / "capped", theta=0.0, per_session=1), episode, shop_tools())
    made = [e for e in free.events if e.kind == "lookup"]
    assert len(made) > 1 and refusals(free) == [], "no budget was reached: the test would prove nothing"
    assert len([e for e in capped.events if e.kind == "lookup"]) == 1
    cut = refusals(capped)
    assert cut and {r.reason for r in cut} == {"session_limit"}
    assert cut[0].tool == made[1].tool and "1 lookups in a session" in cut[0].detail
    results = {e.call_id for e in capped.events if isinstance(e, ToolResult)}
    assert all(r.after_call_id in results for r in cut)


def test_a_per_call_limit_is_recorded_after_the_call_whose_lookups_it_cut(tmp_path: Path) -> None:
    episode = shop_sessions(30)[20]
    capped = play(Stretto(shop_flow(), store=tmp_path, theta=0.0, per_call=1), episode, shop_tools())
    cut = refusals(capped)
    assert cut and {r.reason for r in cut} == {"call_limit"}
    events = capped.events
    for refusal in cut:  # right after the lookups riding on its call's result
        at = events.index(refusal)
        before = [e for e in events[:at] if isinstance(e, ToolResult)][-1]
        assert before.call_id == refusal.after_call_id


def test_a_lookup_that_outlives_its_time_is_recorded_as_refused_for_time(tmp_path: Path) -> None:
    release = threading.Event()

    def hangs(tool: str, args: dict[str, Any]) -> Any:
        release.wait(5)
        return "{}"

    stretto = Stretto(shop_flow(), store=tmp_path, theta=0.0, per_call=1, lookup_timeout=0.05, call_budget=0.2)
    try:
        recorded = play(stretto, shop_sessions(30)[20], hangs)
    finally:
        release.set()
    timed_out = [r for r in refusals(recorded) if r.reason == "lookup_timeout"]
    abandoned = {e.call_id: e for e in recorded.events if e.kind == "lookup" and e.abandoned}
    assert timed_out and abandoned
    assert {r.lookup_call_id for r in timed_out} == set(abandoned)
    assert all(r.tool == abandoned[r.lookup_call_id].tool and "abandoned" in r.detail for r in timed_out)


def test_a_session_of_the_first_format_still_reads_and_an_unknown_version_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"stretto_session": 1, "session_id": "s", "harness": "t"}) + "\n"
                   + json.dumps({"kind": "user", "text": "hi"}) + "\n")
    session = read_session(old)
    assert session.header.stretto_session == 1 and [e.kind for e in session.events] == ["user"]
    future = tmp_path / "future.jsonl"
    future.write_text(json.dumps({"stretto_session": 4, "session_id": "s", "harness": "t"}) + "\n")
    with pytest.raises(InputError, match="is not version 1, 2 or 3"):
        read_session(future)


def test_a_session_written_again_carries_the_current_version(tmp_path: Path) -> None:
    from stretto_core.sessions.model import SESSION_FORMAT_VERSION
    from stretto_core.sessions.store import write_session

    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"stretto_session": 1, "session_id": "s", "harness": "t"}) + "\n")
    path = write_session(read_session(old), tmp_path / "out")
    assert json.loads(path.read_text().splitlines()[0])["stretto_session"] == SESSION_FORMAT_VERSION == 3
