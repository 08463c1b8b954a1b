"""End to end through the real OpenAI Agents SDK (a scripted model playing the demo shop's agent):
one app, instrumented once and never restarted, from its first day to a rolled-back version.

day one, no flow file yet: sessions recorded (mode record)  ->  `stretto learn DIR` with no flags
->  `STRETTO_SHADOW=1`: sessions hold the would-be lookups and make none  ->  promote (h25b)
->  served: lookups made, fewer LLM turns  ->  `stretto flow stage` the new sessions
->  `stretto flow commit`: the next session serves version 2  ->  `stretto flow rollback`: the flow
file is version 1's byte for byte, and the next session serves it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from pathlib import Path

import pytest

import openai_support  # noqa: F401 - skips cleanly without the SDK; quiets tracing

from stretto_core.cli import main
from stretto_core.demo.agent import new_customer
from stretto_openai_agents.demo import CustomerContext, _conversation, erred, shop_agent
from stretto_core.demo.shop import SHOP_APP, SHOP_MANIFEST
from stretto_core.sessions.model import Lookup, Session, ShadowLookup
from stretto_core.sessions.store import read_session
from stretto_openai_agents import instrument, runtime_of


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, f"stretto {' '.join(argv)}: {err}"
    return out


class App:
    """The user's app: the shop agent with stretto's one line, serving customers as they come."""

    def __init__(self, deployment: Path) -> None:
        self.deployment = deployment
        self.agent = instrument(shop_agent(), flow=str(deployment / "flow.json"), manifest=SHOP_MANIFEST,
                                store=deployment / "sessions", app=SHOP_APP, session_key="customer",
                                error_results=erred)
        self.served = 0

    def serve(self, count: int, tag: str) -> list[Session]:
        names = []
        for _ in range(count):
            index = self.served % 40
            self.served += 1
            shop, brain = new_customer(index)
            name = f"{tag}-{self.served:03d}"
            asyncio.run(_conversation(self.agent, CustomerContext(name, shop), brain))
            names.append(name)
        runtime_of(self.agent).close()
        by_id = {}
        for path in (self.deployment / "sessions").glob("*.jsonl"):
            session = read_session(path)
            by_id[session.session_id] = session
        return [by_id[name] for name in names]


def turns(sessions: list[Session]) -> int:
    return sum(len(s.llm_turns()) for s in sessions)


def test_one_app_goes_from_day_one_to_a_rolled_back_version_without_a_restart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    dep = tmp_path / "shop"
    with caplog.at_level(logging.INFO, logger="stretto"):
        app = App(dep)
    assert any("no flow at" in r.getMessage() for r in caplog.records)

    day_one = app.serve(12, "day1")
    assert {s.header.mode for s in day_one} == {"record"} and not any(
        isinstance(e, (Lookup, ShadowLookup)) for s in day_one for e in s.events)

    out = cli(capsys, "learn", str(dep / "sessions"), "--out", str(dep / "flow.json"))
    assert "split auto: 12 sessions with no task label" in out
    learned = (dep / "flow.json").read_bytes()

    monkeypatch.setenv("STRETTO_SHADOW", "1")
    shadow = app.serve(8, "shadow")
    monkeypatch.delenv("STRETTO_SHADOW")
    assert {s.header.mode for s in shadow} == {"shadow"}
    assert {s.header.flow_sha256 for s in shadow} == {hashlib.sha256(learned).hexdigest()}
    would = [e for s in shadow for e in s.events if isinstance(e, ShadowLookup)]
    assert would and not any(isinstance(e, Lookup) for s in shadow for e in s.events)
    assert turns(shadow) == turns(app_twin(tmp_path, range(12, 20))), "shadow changes nothing the agent sees"

    # promote: `stretto flow promote` is h25b's; until it lands every site serves as learned.

    served = app.serve(8, "served")
    assert {s.header.mode for s in served} == {"serve"}
    assert any(isinstance(e, Lookup) for s in served for e in s.events)
    unserved = turns(app_twin(tmp_path, range(20, 28)))
    assert turns(served) < unserved, "the same customers, fewer LLM turns"
    print(f"LLM turns of customers 20-27: {unserved} without stretto, {turns(served)} served")

    out = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert "16 new sessions added" in out and "on version 1" in out
    out = cli(capsys, "flow", "commit", str(dep))
    assert "committed version 2" in out
    after_commit = app.serve(2, "v2")
    version_two = (dep / "history" / "v000002.flow.json").read_bytes()
    assert [s.header.flow_version for s in after_commit] == [2, 2]
    assert {s.header.flow_sha256 for s in after_commit} == {hashlib.sha256(version_two).hexdigest()}

    cli(capsys, "flow", "rollback", str(dep))
    version_one = (dep / "history" / "v000001.flow.json").read_bytes()
    assert (dep / "flow.json").read_bytes() == version_one
    after_rollback = app.serve(2, "back")
    assert [s.header.flow_version for s in after_rollback] == [1, 1]
    assert {s.header.flow_sha256 for s in after_rollback} == {hashlib.sha256(version_one).hexdigest()}
    out = cli(capsys, "flow", "log", str(dep))
    assert [line.split()[2] for line in out.splitlines() if line[:1].isdigit()] == \
        ["adopt", "stage", "commit", "rollback"]


def app_twin(tmp_path: Path, customers) -> list[Session]:
    """The same customers through the same SDK with no flow at all (what a shadow must equal)."""
    twin = App(tmp_path / "twin")
    twin.served = customers.start
    return twin.serve(len(customers), "twin")
