"""The Claude adapter under the real bundled CLI, against a scripted Messages API on 127.0.0.1.

Each module fixture runs one short conversation (about a second of CLI time per prompt) with an
in-process SDK MCP shop; the tests read what the model was sent next and what was recorded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from claude_shop import Shop, customer_json, flow_then, order_json, shop_server
from claude_support import cli_options, run_client
from stretto_claude.testing import Reply, ScriptedMessagesAPI, result_texts, scripted
from stretto_core import Session, read_session
from stretto_core.sessions.model import LLMTurn, Lookup, ToolResult, UserMessage
from stretto_claude import claude_hooks

pytest.importorskip("claude_agent_sdk")


class Run:
    """What one conversation left: the fake API's requests, the shop's calls, the session file."""

    def __init__(self, api: ScriptedMessagesAPI, shop: Shop, hooks: Any, store: Path, messages: list[Any]) -> None:
        self.api, self.shop, self.hooks, self.messages = api, shop, hooks, messages
        files = sorted(store.glob("*.jsonl"))
        self.files = files
        self.session: Session = read_session(files[0])

    def seen_after(self, turn: int, index: int = 0) -> list[dict[str, Any]]:
        """The content blocks of the `index`-th tool result the model received in request `turn`."""
        content = self.api.tool_results(turn)[index]["content"]
        return [{"type": "text", "text": content}] if isinstance(content, str) else content

    def events(self, kind: type) -> list[Any]:
        return [e for e in self.session.events if isinstance(e, kind)]


def converse(tmp: Path, replies: list[Reply], prompts: list[str], *, then: str, watch: bool,
             shop: Shop | None = None, **hook_options: Any) -> Run:
    shop = shop or Shop()
    servers = {"shop": shop_server(shop)}
    store = tmp / "sessions"
    hooks = claude_hooks(flow_then(then), mcp_servers=servers, store=store, **hook_options)
    with ScriptedMessagesAPI(scripted(replies), lifetime=90) as api:
        options = cli_options(api, tmp, servers, hooks)
        messages = asyncio.run(run_client(prompts, options, hooks if watch else None))
    hooks.close()
    return Run(api, shop, hooks, store, messages)


# -- a served conversation: a lookup, then a call after which the flow decides nothing ----------
@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Run:
    replies = [Reply(text="Let me check.", calls=[("mcp__shop__get_order", {"order_id": "O7"})]),
               Reply(text="It has shipped."),
               Reply(calls=[("mcp__shop__get_customer", {"customer_id": "C9"})]),
               Reply(text="C9 is a gold customer.")]
    return converse(tmp_path_factory.mktemp("served"), replies,
                    ["Where is my order O7?", "And customer C9?"], then="get_customer", watch=True,
                    agent_model="claude-scripted-1")


def test_the_appended_lookup_reaches_what_the_model_sees_next(served: Run) -> None:
    blocks = served.seen_after(1)
    assert blocks[0]["text"] == order_json("O7")
    appendix = "\n".join(b["text"] for b in blocks[1:])
    assert 'get_customer {"customer_id": "C7"}' in appendix
    assert customer_json("C7") in appendix
    assert served.shop.called("get_customer")[0] == {"customer_id": "C7"}


def test_nothing_is_appended_when_the_flow_decides_nothing(served: Run) -> None:
    assert result_texts(served.api.tool_results(3)[0]) == customer_json("C9")
    assert [lk.tool for lk in served.hooks.lookups] == ["get_customer"]


def test_one_claude_session_is_one_recorded_session(served: Run) -> None:
    assert len(served.files) == 1
    assert served.session.header.harness == "claude-agent-sdk"
    assert served.session.header.agent_model == "claude-scripted-1"


def test_the_recorded_session_holds_user_text_tool_results_and_lookups(served: Run) -> None:
    assert [u.text for u in served.events(UserMessage)] == ["Where is my order O7?", "And customer C9?"]
    results = served.events(ToolResult)
    assert [(r.tool, r.content) for r in results] == [("get_order", order_json("O7")),
                                                      ("get_customer", customer_json("C9"))]
    assert "get_customer" in (results[0].appended or "") and results[1].appended is None
    lookups = served.events(Lookup)
    assert [(lk.tool, lk.arguments, lk.after_call_id, lk.error) for lk in lookups] == [
        ("get_customer", {"customer_id": "C7"}, results[0].call_id, False)]


def test_a_watched_stream_records_whole_model_turns_with_their_input_tokens(served: Run) -> None:
    turns = served.events(LLMTurn)
    assert [(t.text, [c.tool for c in t.calls]) for t in turns] == [
        ("Let me check.", ["get_order"]), ("It has shipped.", []),
        ("", ["get_customer"]), ("C9 is a gold customer.", [])]
    assert all(not t.inferred for t in turns)
    assert turns[0].usage is not None and turns[0].usage.input_tokens == 100


# -- tools the flow wants but may not look up -------------------------------------------------
@pytest.fixture(scope="module", params=["refund", "get_notes"])
def refused(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Run]:
    then = request.param
    declared = {"reads": ["refund"]} if then == "refund" else {}
    replies = [Reply(calls=[("mcp__shop__get_order", {"order_id": "O7"})]), Reply(text="done")]
    return then, converse(tmp_path_factory.mktemp(then), replies, ["Where is my order O7?"], then=then,
                          watch=False, **declared)


def test_a_write_or_an_undeclared_tool_is_never_looked_up_even_when_the_flow_says_so(refused: tuple[str, Run]) -> None:
    then, run = refused
    assert flow_then(then).manifest.is_read(then)  # the flow would look it up
    assert run.shop.called(then) == []
    assert run.hooks.lookups == []
    assert run.seen_after(1) == [{"type": "text", "text": order_json("O7")}]


def test_without_the_stream_each_call_gets_an_inferred_turn_and_the_reply_is_recorded(refused: tuple[str, Run]) -> None:
    _, run = refused
    turns = run.events(LLMTurn)
    assert [(t.inferred, [c.tool for c in t.calls], t.text) for t in turns] == [
        (True, ["get_order"], ""), (None, [], "done")]


# -- lookups that fail ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Run:
    # the hang last: a lookup that timed out cools its tool down (no lookup of it for a while)
    shop = Shop(loyalty={"C1": "raise", "C2": "garbage", "C3": "hang"})
    replies = [Reply(calls=[("mcp__shop__get_order", {"order_id": f"O{k}"}) for k in (1, 2, 3)]),
               Reply(text="done")]
    return converse(tmp_path_factory.mktemp("failing"), replies, ["Check O1, O2 and O3"], then="get_loyalty",
                    watch=True, shop=shop, lookup_timeout=0.5)


@pytest.mark.parametrize("index, mode", [(0, "raise"), (1, "garbage"), (2, "hang")])
def test_a_lookup_that_fails_leaves_the_agents_result_unchanged_and_is_recorded_as_failed(
        failing: Run, index: int, mode: str) -> None:
    order, customer = f"O{index + 1}", f"C{index + 1}"
    assert failing.seen_after(1, index)[0] == {"type": "text", "text": order_json(order)}
    lookup = next(lk for lk in failing.events(Lookup) if lk.arguments == {"customer_id": customer})
    assert lookup.tool == "get_loyalty" and lookup.error
    if mode == "hang":
        assert "abandoned" in lookup.content


def test_the_run_with_failing_lookups_ends_with_the_agents_reply(failing: Run) -> None:
    assert len(failing.api.turns) == 2
    assert [type(m).__name__ for m in failing.messages][-1] == "ResultMessage"
    assert failing.messages[-1].result == "done"
