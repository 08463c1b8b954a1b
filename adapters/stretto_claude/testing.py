"""A scripted Messages API on 127.0.0.1, so the real bundled Claude Code CLI runs with no key.

For tests, examples and benchmarks of agents built on the Claude Agent SDK, with or without
stretto. The CLI streams every model call from `ANTHROPIC_BASE_URL`. This stdlib server answers
each main-loop request (one that carries `tools`) with the next reply of a *brain*, a function
of the request body, as Server-Sent Events; anything else (a title, a token count) gets a short
fixed answer. Every request body is kept, so a test can assert exactly what the model was shown.
The server stops itself after `lifetime` seconds, so nothing is left running.

    with ScriptedMessagesAPI(scripted([Reply(calls=[("mcp__shop__get_order", {"order_id": "O1"})]),
                                       Reply(text="done")])) as api:
        options = ClaudeAgentOptions(env=api.env(tmp_dir), ...)
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable

MODEL = "claude-scripted-1"


@dataclass
class Reply:
    """One model turn: text, then tool calls (name as the CLI shows it, input, id)."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    ids: list[str] | None = None
    input_tokens: int = 100
    output_tokens: int = 20


Brain = Callable[[dict[str, Any]], Reply]


def scripted(replies: Iterable[Reply]) -> Brain:
    """A brain that gives these replies in order, then `done` for ever."""
    queue = list(replies)

    def brain(_request: dict[str, Any]) -> Reply:
        return queue.pop(0) if queue else Reply(text="done")
    return brain


class ScriptedMessagesAPI:
    """The fake server: `with ScriptedMessagesAPI(brain) as api: ... api.env(tmp) ... api.turns`."""

    def __init__(self, brain: Brain, *, lifetime: float = 120.0) -> None:
        self.brain = brain
        self.lifetime = lifetime
        self.turns: list[dict[str, Any]] = []   # bodies of main-loop requests, in order
        self.other: list[dict[str, Any]] = []   # every other request body
        self.errors: list[Exception] = []       # what the brain raised (answered with a 400)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def env(self, config_dir: str | Path) -> dict[str, str]:
        """The environment that points the CLI here and keeps it quiet and offline."""
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-dummy",
            "CLAUDE_CONFIG_DIR": str(config_dir),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }

    def start(self) -> "ScriptedMessagesAPI":
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ScriptedMessagesAPI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # what the model was shown ---------------------------------------------------------------
    def tool_results(self, turn: int) -> list[dict[str, Any]]:
        """The tool_result blocks of the last user message of main-loop request `turn`."""
        messages = self.turns[turn]["messages"]
        content = messages[-1].get("content") if messages else None
        if not isinstance(content, list):
            return []
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]

    def answer(self, body: dict[str, Any]) -> Reply | None:
        """The brain's reply to a main-loop request, or None for any other request."""
        with self._lock:
            if not body.get("tools"):
                self.other.append(body)
                return None
            self.turns.append(body)
            return self.brain(body)


def result_texts(block: dict[str, Any]) -> str:
    """All the text of one tool_result block, however its content is shaped."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


@dataclass
class Received:
    """One tool result the model received: its call, its text (with any hook context about it
    appended, as the model reads it next), and whether it is an error."""

    call_id: str
    tool: str
    text: str
    error: bool


_CONTEXT = re.compile(r"(?:^|\n\n)(?:PostToolUse|PostToolUseFailure):(\S+) hook additional context: ")


def received(body: dict[str, Any]) -> list[Received]:
    """The tool results the model received since its previous turn, in the order of its calls."""
    messages = body.get("messages") or []
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if last < 0:
        return []
    names = {b.get("id"): b.get("name", "") for b in _blocks(messages[last]) if b.get("type") == "tool_use"}
    results: list[Received] = []
    contexts: list[tuple[str, str]] = []
    for message in messages[last + 1:]:
        for block in _blocks(message):
            if message.get("role") == "user" and block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id"))
                results.append(Received(call_id, names.get(call_id, ""), result_texts(block),
                                        bool(block.get("is_error"))))
            elif message.get("role") == "system" and block.get("type") == "text":
                contexts.extend(_hook_contexts(block.get("text", "")))
    given: set[int] = set()
    for tool, text in contexts:  # each context goes with the first result of its tool still without one
        for i, result in enumerate(results):
            if i not in given and result.tool == tool:
                result.text += "\n" + text
                given.add(i)
                break
    return results


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _hook_contexts(text: str) -> list[tuple[str, str]]:
    marks = list(_CONTEXT.finditer(text))
    return [(m.group(1), text[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(text)])
            for i, m in enumerate(marks)]


# the wire --------------------------------------------------------------------------------------
def _events(reply: Reply) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of one streamed message."""
    msg_id = "msg_" + uuid.uuid4().hex[:24]
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": MODEL, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1}}})]
    index = 0
    if reply.text or not reply.calls:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": {"type": "text_delta", "text": reply.text or "ok"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": index})]
        index += 1
    ids = reply.ids or ["toolu_" + uuid.uuid4().hex[:24] for _ in reply.calls]
    for (name, args), call_id in zip(reply.calls, ids):
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": call_id, "name": name, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(args)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": index})]
        index += 1
    stop = "tool_use" if reply.calls else "end_turn"
    events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": reply.output_tokens}}),
               ("message_stop", {"type": "message_stop"})]
    return events


def _whole(reply: Reply) -> dict[str, Any]:
    """The same message as one JSON body, for a request that does not stream."""
    content: list[dict[str, Any]] = []
    for name, data in _events(reply):
        if name == "content_block_start":
            content.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                content[-1]["text"] += delta["text"]
            else:
                content[-1]["input"] = json.loads(delta["partial_json"])
    return {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant", "model": MODEL,
            "content": content, "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": reply.input_tokens,
                                             "output_tokens": reply.output_tokens}}


def _handler(api: ScriptedMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's spelling
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            size = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(size) or b"{}")
            except ValueError:
                body = {}
            if "count_tokens" in self.path:
                self._json(200, {"input_tokens": 100})
                return
            if not self.path.startswith("/v1/messages"):
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})
                return
            try:
                reply = api.answer(body)
            except Exception as exc:  # noqa: BLE001 - a broken script ends the run, it does not hang it
                api.errors.append(exc)
                self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": f"the script failed: {exc!r}"}})
                return
            if reply is None:
                reply = Reply(text="ok")
            if not body.get("stream"):
                self._json(200, _whole(reply))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for name, data in _events(reply):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler

