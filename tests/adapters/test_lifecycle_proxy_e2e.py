"""End to end through the proxy in front of a real stdio MCP server (the toy shop on the official
`mcp` SDK's server, `openai_mcp_shop.py`), with the real `mcp` client as the host:

day one, no flow file yet: sessions recorded (mode record)  ->  `stretto learn DIR` with no flags
->  `--shadow`: sessions hold the would-be lookups, the server serves the agent's calls only
->  promote (h25b)  ->  served: the lookup is made and appended, the agent skips its call
->  `stretto flow stage` the new sessions  ->  `stretto flow commit`: the next session serves
version 2  ->  `stretto flow rollback`: version 1's file byte for byte, served by the next session.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from proxy_support import proxy_command, read_session_files

pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402

from stretto_core.cli import main  # noqa: E402

SHOP = Path(__file__).resolve().parent / "openai_mcp_shop.py"


class Deployment:
    """The operator's side: one folder, proxy sessions started one after another."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        self.log = root / "server.log"
        self.started = 0

    def session(self, order: int, *options: str, env: dict[str, str] | None = None) -> list[str]:
        """One host session: get_order, get_customer unless a lookup already answered it, refund.
        The texts the host saw, in order."""
        self.started += 1
        command = proxy_command([sys.executable, str(SHOP), str(self.log)], "--flow", str(self.root / "flow.json"),
                                "--store", str(self.root / "sessions"), "--app", "toy-shop", *options)
        params = StdioServerParameters(command=command[0], args=command[1:], env={**same_code_env(), **(env or {})})
        return anyio.run(self._host, params, f"O{order}")

    @staticmethod
    async def _host(params: StdioServerParameters, order_id: str) -> list[str]:
        async with Client(params, mode="legacy") as client:
            await client.list_tools()
            seen = []
            order = await client.call_tool("get_order", {"order_id": order_id})
            seen.append(" ".join(getattr(b, "text", "") for b in order.content))
            if "get_customer" not in seen[-1]:
                customer = await client.call_tool("get_customer", {"customer_id": "C" + order_id[1:]})
                seen.append(" ".join(getattr(b, "text", "") for b in customer.content))
            await client.call_tool("refund", {"order_id": order_id})
            return seen

    def sessions(self) -> list:
        return sorted(read_session_files(self.root / "sessions"), key=lambda s: s.header.started_at)

    def served_calls(self) -> list[str]:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [json.loads(line)["tool"] for line in lines]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, f"stretto {' '.join(argv)}: {err}"
    return out


def test_the_proxy_goes_from_day_one_to_a_rolled_back_version(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    dep = Deployment(tmp_path / "toy")
    for i in range(6):
        dep.session(i % 3 + 1)
    day_one = dep.sessions()
    assert len(day_one) == 6 and {s.header.mode for s in day_one} == {"record"}
    assert dep.served_calls() == ["get_order", "get_customer", "refund"] * 6

    out = cli(capsys, "learn", str(tmp_path / "toy" / "sessions"), "--out", str(tmp_path / "toy" / "flow.json"))
    assert "split auto: 6 sessions with no task label" in out
    learned = (tmp_path / "toy" / "flow.json").read_bytes()

    shadow_texts = dep.session(2, "--shadow")
    shadow = dep.sessions()[-1]
    assert shadow.header.mode == "shadow" and shadow.header.flow_sha256 == hashlib.sha256(learned).hexdigest()
    would = [e for e in shadow.events if e.kind == "shadow_lookup"]
    assert [(w.tool, w.arguments) for w in would] == [("get_customer", {"customer_id": "C2"})]
    assert would[0].sources and would[0].score is not None and would[0].site == "get_order"
    assert not [e for e in shadow.events if e.kind == "lookup"] and len(shadow_texts) == 2
    assert dep.served_calls()[-3:] == ["get_order", "get_customer", "refund"], "shadow calls nothing itself"

    # promote: `stretto flow promote` is h25b's; until it lands every site serves as learned.

    disabled = dep.session(3, env={"STRETTO_DISABLED": "1"})
    assert dep.sessions()[-1].header.mode == "record" and len(disabled) == 2

    for i in range(3):
        served_texts = dep.session(i + 1)
        assert len(served_texts) == 1 and "get_customer" in served_texts[0], "the agent skipped its own call"
    served = dep.sessions()[-3:]
    assert {s.header.mode for s in served} == {"serve"}
    assert all([e.tool for e in s.events if e.kind == "lookup"] == ["get_customer"] for s in served)

    out = cli(capsys, "flow", "stage", str(tmp_path / "toy"), "--settled", "0")
    assert "5 new sessions added" in out and "on version 1" in out
    assert "committed version 2" in cli(capsys, "flow", "commit", str(tmp_path / "toy"))
    dep.session(1)
    version_two = (tmp_path / "toy" / "history" / "v000002.flow.json").read_bytes()
    after_commit = dep.sessions()[-1]
    assert after_commit.header.flow_version == 2
    assert after_commit.header.flow_sha256 == hashlib.sha256(version_two).hexdigest()

    cli(capsys, "flow", "rollback", str(tmp_path / "toy"))
    version_one = (tmp_path / "toy" / "history" / "v000001.flow.json").read_bytes()
    assert (tmp_path / "toy" / "flow.json").read_bytes() == version_one
    dep.session(1)
    assert dep.sessions()[-1].header.flow_version == 1
    assert dep.sessions()[-1].header.flow_sha256 == hashlib.sha256(version_one).hexdigest()
    assert os.access(tmp_path / "toy" / "history" / "log.jsonl", os.R_OK)
