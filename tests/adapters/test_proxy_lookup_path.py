"""A proxied call's lookup goes out and comes back with no task of its own (issue 30, goal 5):
the request is written at once and the answer's future is what the engine awaits. The host sees
the same answer, and the session records the same events, as on the path that awaits the channel;
a lookup given up on at its timeout is still cancelled at the server."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
from proxy_support import MemoryChannel, read_session_files, toy_flow  # noqa: E402
from stretto_core import Stretto  # noqa: E402
from stretto_core.serve.workers import bounded  # noqa: E402
from stretto_mcp.listing import Listing  # noqa: E402
from stretto_mcp.relay import Relay, RelayOptions  # noqa: E402
from stretto_mcp.served import Served  # noqa: E402

READ = {"readOnlyHint": True, "destructiveHint": False}
TOOLS = [{"name": name, "inputSchema": {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]},
          "annotations": READ} for name, key in (("get_order", "order_id"), ("get_customer", "customer_id"))]


class Shop:
    """A server in memory: every order id is an order of customer C<n>; `silent` tools never answer."""

    name = "server"

    def __init__(self, *, writes_at_once: bool, silent: tuple[str, ...] = ()) -> None:
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.silent = silent
        if writes_at_once:
            self.send_nowait = self._take  # the channel's way to write without waiting

    async def receive(self) -> Any:
        return await self.inbox.get()

    async def send(self, message: dict[str, Any]) -> None:
        self._take(message)

    def _take(self, message: dict[str, Any]) -> bool:
        self.sent.append(message)
        if "id" not in message or "method" not in message:
            return True
        params = message.get("params") or {}
        if message["method"] == "tools/list":
            result: dict[str, Any] = {"tools": TOOLS}
        elif message["method"] == "tools/call" and params.get("name") in self.silent:
            return True
        elif message["method"] == "tools/call":
            arguments = params.get("arguments") or {}
            value = ({"order_id": arguments["order_id"], "customer_id": "C" + arguments["order_id"].lstrip("O")}
                     if params["name"] == "get_order" else {"customer_id": arguments.get("customer_id"), "tier": "gold"})
            result = {"content": [{"type": "text", "text": json.dumps(value)}], "isError": False}
        else:
            result = {}
        self.inbox.put_nowait({"jsonrpc": "2.0", "id": message["id"], "result": result})
        return True

    async def aclose(self) -> None:
        pass


class Host(MemoryChannel):
    name = "host"


def _call(request_id: int, order: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "get_order", "arguments": {"order_id": order}}}


async def _serve(folder: Path, server: Shop, orders: list[str], *, lookup_timeout: float = 5.0,
                 tasks: list[int] | None = None) -> tuple[Host, Relay]:
    """The relay serving the toy flow in front of `server`; each order asked for in turn. `tasks`
    gets the tasks started while the last order was asked for and answered."""
    stretto = Stretto(toy_flow(folder / "toy.flow.json"), store=folder / "sessions", harness="mcp-proxy",
                      lookup_timeout=lookup_timeout)
    host = Host()
    relay = Relay(host, server, Served(stretto, Listing(stretto.flow)), RelayOptions(server_timeout=30))
    running = asyncio.create_task(relay.run())
    loop = asyncio.get_running_loop()
    for number, order in enumerate(orders, 1):
        if number == len(orders) and tasks is not None:
            loop.set_task_factory(lambda loop, coro, **kw: tasks.append(1) or asyncio.Task(coro, loop=loop, **kw))
        await host.inbox.put(_call(number, order))
        await host.answer(number)
        loop.set_task_factory(None)
    await host.inbox.put(None)
    await asyncio.wait_for(running, 10)
    return host, relay


def test_a_lookup_after_a_proxied_call_starts_no_task_of_its_own(tmp_path: Path) -> None:
    tasks: list[int] = []
    host, _ = asyncio.run(_serve(tmp_path, Shop(writes_at_once=True), ["O1", "O2"], tasks=tasks))
    appended = host.sent[-1]["result"]["content"][-1]["text"]
    assert "get_customer" in appended and '"customer_id": "C2"' in appended
    assert len(tasks) == 1  # the call's own answering task; the lookup rides on the answer's future


def _host_view(host: Host) -> list[str]:
    """What the host was sent, each session's random fence made alike."""
    return [re.sub(r"stretto [0-9a-f]{16}", "stretto FENCE", json.dumps(m, sort_keys=True)) for m in host.sent]


def _recorded(folder: Path) -> list[dict[str, Any]]:
    [session] = read_session_files(folder / "sessions")
    events = [e.model_dump(mode="json", exclude={"at"}) for e in session.events]
    return json.loads(re.sub(r"stretto [0-9a-f]{16}", "stretto FENCE", json.dumps(events)))


def test_the_host_and_the_session_see_the_same_whether_the_lookup_is_written_at_once_or_awaited(
        tmp_path: Path) -> None:
    orders = ["O1", "O2", "O3"]
    at_once, _ = asyncio.run(_serve(tmp_path / "a", Shop(writes_at_once=True), orders))
    awaited, _ = asyncio.run(_serve(tmp_path / "b", Shop(writes_at_once=False), orders))
    assert _host_view(at_once) == _host_view(awaited)
    assert sum("get_customer" in view for view in _host_view(at_once)) == 3
    assert _recorded(tmp_path / "a") == _recorded(tmp_path / "b")
    assert [e["kind"] for e in _recorded(tmp_path / "a")].count("lookup") == 3


def test_a_lookup_given_up_on_at_its_timeout_is_cancelled_at_the_server_and_nothing_waits(tmp_path: Path) -> None:
    server = Shop(writes_at_once=True, silent=("get_customer",))
    host, relay = asyncio.run(_serve(tmp_path, server, ["O1"], lookup_timeout=0.2))
    assert host.sent[-1]["result"]["content"] == [{"type": "text", "text": json.dumps(
        {"order_id": "O1", "customer_id": "C1"})}]  # nothing appended: the lookup was abandoned
    [lookup] = [m for m in server.sent if m.get("params", {}).get("name") == "get_customer"]
    cancels = [m for m in server.sent if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [lookup["id"]]
    assert relay._own == {} and relay._lookups_in_flight == 0


def test_bounded_cancels_a_plain_future_at_its_timeout() -> None:
    async def scenario() -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        with pytest.raises(TimeoutError):
            await bounded(future, 0.05)
        return future

    assert asyncio.run(scenario()).cancelled()


def test_bounded_returns_a_plain_futures_result_and_a_cancel_of_its_caller_stays_a_cancel() -> None:
    async def scenario() -> tuple[Any, bool]:
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        loop.call_later(0.01, ready.set_result, "answer")
        got = await bounded(ready, 5)
        never = loop.create_future()
        waiting = asyncio.ensure_future(bounded(never, 5))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return got, never.cancelled()

    assert asyncio.run(scenario()) == ("answer", True)


@pytest.mark.parametrize("result", [
    {"content": [{"type": "text", "text": "order O1"}], "isError": False},
    {"content": [{"type": "text", "text": "no such order"}], "isError": True},
    {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
    {"content": [], "structuredContent": {"order_id": "O1"}},
    {"content": [{"type": "text", "text": "x"}], "_meta": {"k": "v"}}])
def test_a_result_reads_as_the_general_reader_reads_it(result: dict[str, Any]) -> None:
    from stretto_core import result_text
    from stretto_core.serve.results import WHOLE
    from stretto_mcp.served import result_as_text

    blocks = result.get("content") or []
    expected = result_text({"content": blocks}, WHOLE) if blocks else result_text(result["structuredContent"], WHOLE)
    assert result_as_text(result) == (expected, bool(result.get("isError")))


def test_a_result_of_one_text_block_is_read_without_the_general_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    import stretto_mcp.served as served

    monkeypatch.setattr(served, "result_text", lambda *a, **k: (_ for _ in ()).throw(AssertionError("general reader")))
    assert served.result_as_text({"content": [{"type": "text", "text": "order O1"}], "isError": True}) == ("order O1", True)


def test_an_answer_the_reader_cannot_take_fails_that_lookup_and_not_the_pump_that_set_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import stretto_mcp.own as own

    def unreadable(answer: dict[str, Any]) -> tuple[str, bool]:
        raise TypeError("a result no reader expected")

    monkeypatch.setattr(own, "lookup_outcome", unreadable)

    async def answered() -> BaseException | None:
        answer = own.LookupAnswer(asyncio.get_running_loop())
        answer.set_result({"jsonrpc": "2.0", "id": 1, "result": {"content": 7}})  # must not raise here
        return answer.exception()

    failure = asyncio.run(answered())
    assert isinstance(failure, ValueError) and "unreadable lookup answer (TypeError)" in str(failure)
