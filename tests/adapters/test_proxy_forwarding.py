"""The proxy forwards every kind of message both ways, appends lookups, and keeps its own traffic
to itself (on the scriptable toy server of `proxy_support.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from proxy_support import proxy_command, read_session_files, toy_flow, toy_server_command

mcp = pytest.importorskip("mcp")
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402


def _proxy(tmp_path: Path, *options: str, flow: bool = True) -> StdioServerParameters:
    tmp_path.mkdir(parents=True, exist_ok=True)
    extra = ["--flow", str(toy_flow(tmp_path / "toy.flow.json"))] if flow else []
    command = proxy_command(toy_server_command(), *extra, "--store", str(tmp_path / "s"), *options)
    return StdioServerParameters(command=command[0], args=command[1:], env=same_code_env())


def _texts(result: Any) -> list[str]:
    return [getattr(block, "text", "") for block in result.content]


class Host:
    """What a host saw: log lines, and the server's requests it answered."""

    def __init__(self) -> None:
        self.logs: list[Any] = []
        self.asked: list[str] = []
        self.messages: list[Any] = []

    async def log(self, params: Any) -> None:
        self.logs.append(params.data)

    async def sampling(self, ctx: Any, params: Any) -> Any:
        self.asked.append("sampling")
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="hi"),
                                         model="scripted")

    async def elicitation(self, ctx: Any, params: Any) -> Any:
        self.asked.append("elicitation")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self, ctx: Any) -> Any:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def message(self, message: Any) -> None:
        self.messages.append(message)

    def client(self, params: StdioServerParameters) -> Client:
        return Client(params, mode="legacy", logging_callback=self.log, sampling_callback=self.sampling,
                      elicitation_callback=self.elicitation, list_roots_callback=self.roots,
                      message_handler=self.message)


def test_a_read_is_looked_up_and_its_result_appended_as_one_more_text_block(tmp_path: Path) -> None:
    async def run() -> list[str]:
        async with Client(_proxy(tmp_path), mode="legacy") as client:
            return _texts(await client.call_tool("get_order", {"order_id": "O1"}))

    texts = anyio.run(run)
    assert json.loads(texts[0])["customer_id"] == "C7"
    assert len(texts) == 2 and 'get_customer {"customer_id": "C7"}' in texts[1] and '"tier": "gold"' in texts[1]
    [session] = read_session_files(tmp_path / "s")
    assert [e.kind for e in session.events] == ["llm_turn", "tool_result", "lookup"]
    assert session.events[0].inferred is True and session.events[1].appended == texts[1]


def test_a_proxy_told_no_user_speaks_records_its_sessions_as_solo_and_still_looks_up(tmp_path: Path) -> None:
    async def run(where: Path, *options: str) -> list[str]:
        async with Client(_proxy(where, *options), mode="legacy") as client:
            return _texts(await client.call_tool("get_order", {"order_id": "O1"}))

    solo, present = anyio.run(run, tmp_path / "solo", "--solo"), anyio.run(run, tmp_path / "present")
    [solo_session], [present_session] = read_session_files(tmp_path / "solo" / "s"), read_session_files(tmp_path / "present" / "s")
    assert solo_session.header.solo is True and present_session.header.solo is False
    looked_up = 'get_customer {"customer_id": "C7"}'  # the toy flow learned no mode: served alike in both
    assert len(solo) == len(present) == 2 and looked_up in solo[1] and looked_up in present[1]


def test_a_tool_with_an_output_schema_keeps_its_structured_content_exactly(tmp_path: Path) -> None:
    async def run() -> Any:
        async with Client(_proxy(tmp_path), mode="legacy") as client:
            await client.list_tools()
            return await client.call_tool("order_report", {"order_id": "O2"})

    result = anyio.run(run)
    assert result.structured_content == {"order_id": "O2"}
    assert json.loads(_texts(result)[0])["order_id"] == "O2"


def test_a_lookups_own_log_lines_never_reach_the_host_but_the_agents_calls_do(tmp_path: Path) -> None:
    host = Host()

    async def run() -> list[str]:
        async with host.client(_proxy(tmp_path)) as client:
            looked_up = _texts(await client.call_tool("get_order", {"order_id": "O1"}))
            await client.call_tool("get_customer", {"customer_id": "C8"})
            await client.call_tool("slow", {"seconds": 0.1})
            return looked_up

    assert len(anyio.run(run)) == 2  # a lookup of get_customer was made, and it logs
    assert host.logs == ["read customer C8", "slow is done"]


def test_progress_resources_prompts_completions_and_server_requests_pass_through(tmp_path: Path) -> None:
    host = Host()
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def run() -> dict[str, Any]:
        async with host.client(_proxy(tmp_path)) as client:
            slow = await client.call_tool("slow", {"seconds": 0.2}, progress_callback=on_progress)
            asked = json.loads(_texts(await client.call_tool("ask_host", {}))[0])
            resources = await client.list_resources()
            read = await client.read_resource("shop://orders")
            prompt = await client.get_prompt("greet", {"customer_id": "C7"})
            done = await client.complete(types.PromptReference(type="ref/prompt", name="greet"),
                                         {"name": "customer_id", "value": "C"})
            await client.send_roots_list_changed()
            seen = json.loads(_texts(await client.call_tool("seen", {}))[0])["seen"]
            return {"slow": _texts(slow), "asked": asked, "resources": [str(r.uri) for r in resources.resources],
                    "read": read.contents[0].text, "prompt": prompt.messages[0].content.text,
                    "done": done.completion.values, "seen": seen}

    out = anyio.run(run)
    assert progress == [1, 2, 3, 4]
    assert host.asked == ["sampling", "elicitation", "roots"]
    assert out["asked"]["sampled"]["content"]["text"] == "hi" and out["asked"]["elicited"]["content"] == {"name": "Ada"}
    assert out["asked"]["roots"]["roots"][0]["uri"] == "file:///work"
    assert out["resources"] == ["shop://orders"] and "C7" in out["read"]
    assert out["prompt"] == "Greet C7" and out["done"] == ["C7", "C8", "C9"]
    assert "notifications/initialized" in out["seen"] and "notifications/roots/list_changed" in out["seen"]


def test_list_changed_reaches_the_host_and_a_changed_schema_stops_its_lookups(tmp_path: Path) -> None:
    host = Host()

    async def run() -> tuple[list[str], list[str]]:
        async with host.client(_proxy(tmp_path)) as client:
            await client.list_tools()
            before = _texts(await client.call_tool("get_order", {"order_id": "O1"}))
            await client.call_tool("change_tools", {})
            await anyio.sleep(0.3)  # the proxy re-reads the listing
            after = _texts(await client.call_tool("get_order", {"order_id": "O3"}))
            return before, after

    before, after = anyio.run(run)
    assert len(before) == 2, "the lookup was made before the change: the test would prove nothing"
    assert len(after) == 1
    assert any("tools/list_changed" in repr(m) or isinstance(m, types.ToolListChangedNotification)
               for m in host.messages), host.messages
    [session] = read_session_files(tmp_path / "s")
    kinds = [e.kind for e in session.events]
    refusals = [e for e in session.events if e.kind == "refusal"]
    # the notice makes every read wait for the new listing (`listing_stale`), which then says why
    assert {(e.tool, e.reason) for e in refusals if not e.lifted} >= {("get_customer", "listing_stale")}
    [refusal] = [e for e in refusals if e.reason == "schema_changed"]
    assert (refusal.tool, refusal.reason, refusal.lifted) == ("get_customer", "schema_changed", None)
    assert refusal.detail == "its input schema changed since the proxy first listed it"
    # said after the call that changed the tools, before the call whose lookups it stopped
    changed = session.events.index(refusal)
    assert kinds.index("lookup") < changed < len(kinds) - 1 - kinds[::-1].index("tool_result")


def test_the_operators_denylist_and_allowlist_stop_lookups(tmp_path: Path) -> None:
    async def run(params: StdioServerParameters) -> int:
        async with Client(params, mode="legacy") as client:
            return len((await client.call_tool("get_order", {"order_id": "O1"})).content)

    assert anyio.run(run, _proxy(tmp_path / "a")) == 2
    assert anyio.run(run, _proxy(tmp_path / "b", "--deny", "get_customer")) == 1
    assert anyio.run(run, _proxy(tmp_path / "c", "--tools", "get_order")) == 1
    [denied] = read_session_files(tmp_path / "b" / "s")
    assert denied.header.labels["proxy.refused.get_customer"] == "the operator's denylist names it"
    assert [(e.tool, e.reason) for e in denied.events if e.kind == "refusal"] == [("get_customer", "denied")]
    [allowed] = read_session_files(tmp_path / "a" / "s")
    assert [e for e in allowed.events if e.kind == "refusal"] == []


def test_calls_sent_together_are_recorded_as_one_inferred_turn(tmp_path: Path) -> None:
    async def run() -> None:
        async with Client(_proxy(tmp_path, flow=False), mode="legacy") as client:
            await client.list_tools()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "slow", {"seconds": 0.2})
                tg.start_soon(client.call_tool, "get_order", {"order_id": "O2"})
            await client.call_tool("refund", {"order_id": "O2"})

    anyio.run(run)
    [session] = read_session_files(tmp_path / "s")
    turns = [e for e in session.events if e.kind == "llm_turn"]
    assert [sorted(c.tool for c in t.calls) for t in turns] == [["get_order", "slow"], ["refund"]]
    assert all(t.inferred for t in turns)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_streamable_http_server_is_served_the_same_way(tmp_path: Path, mode: str) -> None:
    import socket
    import subprocess
    import time

    from proxy_support import HERE, PYTHON

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([PYTHON, str(HERE), "http", str(port)])
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        command = [PYTHON, "-m", "stretto_core", "proxy", "--flow", str(toy_flow(tmp_path / "toy.flow.json")),
                   "--store", str(tmp_path / "s"), "--upstream", f"http://127.0.0.1:{port}/mcp"]
        params = StdioServerParameters(command=command[0], args=command[1:], env=same_code_env())

        async def run() -> list[str]:
            async with Client(params, mode=mode) as client:
                await client.list_tools()
                return _texts(await client.call_tool("get_order", {"order_id": "O1"}))

        texts = anyio.run(run)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert json.loads(texts[0])["customer_id"] == "C7" and '"tier": "gold"' in texts[1]
