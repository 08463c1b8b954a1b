"""Retention (issue 27, item 3): sessions older than N days, by their header's start time, are
deleted (a fake clock), by `stretto store prune`, by `Stretto(retain_days=N)` and by the proxy's option;
`redact_fields=[...]` hashes named fields before a session is written."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult
from stretto_core.sessions.retention import parse_age, prune_sessions
from stretto_core.sessions.store import write_session

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def sessions_aged(folder: Path, days: list[float | None], now: datetime = NOW) -> dict[str, float | None]:
    ages = {}
    for i, age in enumerate(days):
        started = None if age is None else now - timedelta(days=age)
        write_session(Session(header=SessionHeader(session_id=f"s{i}", harness="t", started_at=started)), folder)
        ages[f"s{i}.jsonl"] = age
    return ages


def test_a_fake_clock_deletes_exactly_the_sessions_older_than_n_days(tmp_path: Path) -> None:
    ages = sessions_aged(tmp_path, [0.5, 29.9, 30.1, 45, 400, None])
    pruned = prune_sessions(tmp_path, 30, now=NOW)
    assert sorted(p.name for p in pruned.deleted) == sorted(n for n, a in ages.items() if a is not None and a > 30)
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["s0.jsonl", "s1.jsonl", "s5.jsonl"]
    assert pruned.undated == 1  # a session without a start time is kept, and counted


def test_ages_read_as_days_or_hours_and_anything_else_is_refused() -> None:
    from stretto_core.errors import StrettoError

    assert parse_age("30d") == 30 and parse_age("30") == 30 and parse_age("12h") == 0.5
    with pytest.raises(StrettoError, match="30d"):
        parse_age("a month")


def test_stretto_with_retain_days_prunes_its_store_when_it_starts(tmp_path: Path) -> None:
    from stretto_core import Stretto

    sessions_aged(tmp_path, [1, 10, 100], now=datetime.now(timezone.utc))
    Stretto(store=tmp_path, retain_days=30)
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["s0.jsonl", "s1.jsonl"]


def test_the_cli_prunes_with_older_than(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from stretto_core.cli import verb_app

    sessions_aged(tmp_path, [1, 100], now=datetime.now(timezone.utc))
    done = CliRunner().invoke(verb_app("store"), ["store", "prune", "--older-than", "30d", "--store", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "deleted 1 sessions" in done.output and [p.name for p in tmp_path.glob("*.jsonl")] == ["s0.jsonl"]


def test_redact_fields_hash_named_fields_before_anything_is_written(tmp_path: Path, monkeypatch) -> None:
    from stretto_core import Stretto

    monkeypatch.setenv("STRETTO_REDACT_KEY", "a key for the test, long enough")
    live = Stretto(store=tmp_path, redact_fields=["email"]).session("s")
    live.llm_turn(calls=[ToolCall(call_id="c", tool="find_user", arguments={"email": "jane.roe@example.org"})])
    live.after_tool_sync("c", "find_user", {"email": "jane.roe@example.org"},
                         json.dumps({"user_id": "u1", "email": "jane.roe@example.org"}), lambda *_: None)
    live.user("Yes, jane.roe@example.org is mine")  # once seen under the field, its words go everywhere
    live.close()
    text = next(tmp_path.glob("*.jsonl")).read_text()
    assert "jane" not in text and "roe" not in text and "u1" in text
    monkeypatch.delenv("STRETTO_REDACT_KEY")
    with pytest.raises(Exception, match="STRETTO_REDACT_KEY"):
        Stretto(store=tmp_path, redact_fields=["email"])
