"""A lone surrogate escape (`"\\ud83d"`, what `JSON.stringify` writes for a cut emoji) is valid
JSON: the proxy forwards it both ways, answers the host, and records it, through the real proxy
and a real stdio server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_proxy_failures import RawHost

pytest.importorskip("mcp")

CUT = "half an emoji: \ud83d"


def test_a_host_request_with_a_lone_surrogate_is_forwarded_answered_and_recorded(tmp_path: Path) -> None:
    host = RawHost(tmp_path)
    host.call(1, "get_order", {"order_id": "O1", "memo": CUT})  # json.dumps escapes it: "\ud83d"
    content = host.answer(1)["result"]["content"]
    assert json.loads(content[0]["text"])["order_id"] == "O1"
    host.call(2, "get_order", {"order_id": "O2"})
    assert "result" in host.answer(2)  # the proxy is still up
    status, stderr = host.finish()
    assert status == 0, stderr
    [turn, *_] = host.session().events
    assert turn.calls[0].arguments == {"order_id": "O1", "memo": CUT}


def test_a_server_result_with_a_lone_surrogate_reaches_the_host_with_its_lookups_and_is_recorded(
        tmp_path: Path) -> None:
    host = RawHost(tmp_path, env={"TOY_CUT_EMOJI": "1"})
    host.call(1, "get_order", {"order_id": "O1"})
    answer = host.answer(1)
    assert "error" not in answer, answer
    content = answer["result"]["content"]
    assert json.loads(content[0]["text"]) == {"order_id": "O1", "customer_id": "C7", "status": "shipped",
                                              "note": CUT}
    assert len(content) == 2 and CUT in content[1]["text"] or "\\ud83d" in content[1]["text"]
    status, stderr = host.finish()
    assert status == 0, stderr
    events = host.session().events
    assert [e.kind for e in events] == ["llm_turn", "tool_result", "lookup"]
    assert events[1].parsed["note"] == CUT and events[2].parsed["note"] == CUT


def test_a_forwarded_message_goes_out_as_the_very_bytes_it_came_as() -> None:
    from stretto_mcp.wire import encode, parse_line

    line = b'{"jsonrpc": "2.0", "id": 1, "result": {"b": "\\ud83d \xc3\xa9", "a": 1.50}}\n'
    message = parse_line(line.decode(), line)
    assert encode(message) == line
    changed = {**message, "result": {"text": CUT + " é"}}
    assert json.loads(encode(changed)) == changed  # a changed message: valid UTF-8, the same value
