"""`stretto demo`: the whole pipeline on the embedded shop, with no data, server or key.

1. Record: the scripted agent serves customers; every session is written by the real recorder.
2. Learn: a flow is counted from the first sessions (the train tasks).
3. Show: what the flow learned at each site.
4. Replay: the held-out sessions are replayed from the record with both speculators.
5. Live: the same held-out customers are served again with the engine in the harness; the agent
   reads the appended lookups and skips those calls. LLM turns with and without are compared.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stretto_core.demo.shop import SHOP_MANIFEST, Shop, call_key_text, run_agent
from stretto_core.serve.engine import Engine, EngineConfig, EngineSession
from stretto_core.flow.ir import Flow, learn, save_flow
from stretto_core.flow.review import show
from stretto_core.progress import track
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.recorder import SessionRecorder
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.sessions.model import (LLMTurn, SessionHeader, ToolCall, ToolResult, Usage, UserMessage,
                                  parse_json_content)
from stretto_core.sessions.store import load_sessions

SHOP_SEED = 7
PROMPT_TOKENS = 1500
"""A nominal prompt size per LLM turn, so the recorded sessions carry token usage."""


@dataclass
class EpisodeStats:
    llm_turns: int = 0
    lookups: int = 0


class Harness:
    """Runs one scripted episode: records it, and serves lookups when an engine is given."""

    def __init__(self, shop: Shop, recorder: SessionRecorder, engine: Engine | None) -> None:
        self.shop = shop
        self.recorder = recorder
        self.engine_session: EngineSession | None = engine.session() if engine else None
        self.seen: dict[str, str] = {}
        self.stats = EpisodeStats()
        self._calls = 0
        self._context = PROMPT_TOKENS

    def respond(self, text: str) -> str:
        self.recorder.user(text)
        if self.engine_session:
            self.engine_session.observe(UserMessage(text=text))
        self._context += len(text) // 4
        return text

    def turn(self, text: str, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        self.stats.llm_turns += 1
        made = []
        for tool, args in calls:
            self._calls += 1
            made.append(ToolCall(call_id=f"call_{self._calls}", tool=tool, arguments=args))
        usage = Usage(input_tokens=self._context, output_tokens=20 + len(text) // 4)
        self.recorder.llm_turn(text, made, usage)
        if self.engine_session:
            self.engine_session.observe(LLMTurn(text=text, calls=made))
        results = []
        for call in made:
            content, error = self.shop.call(call.tool, call.arguments)
            self.recorder.tool_result(call.call_id, call.tool, content, error=error)
            results.append(content + self._serve(call, content, error))
            self._context += len(results[-1]) // 4
        if self.engine_session is None:
            return results
        fence = f"\n[stretto {self.engine_session.fence}] "
        return [r.split(fence, 1)[0] for r in results]

    def _serve(self, call: ToolCall, content: str, error: bool) -> str:
        es = self.engine_session
        if es is None:
            return ""
        es.observe(ToolResult(call_id=call.call_id, tool=call.tool, content=content,
                              parsed=parse_json_content(content), error=error))
        lookups = es.run_lookups(call.call_id, self.shop.call)
        for lk in lookups:
            self.recorder.record(lk)
            self.seen[call_key_text(lk.tool, lk.arguments)] = lk.content
        self.stats.lookups += len(lookups)
        return es.appendix(lookups)


def run_episode(directory: Path, index: int, engine: Engine | None, tag: str) -> EpisodeStats:
    """Serve customer `index` (its own seeded draw) on a fresh copy of the shop."""
    shop = Shop.generate(random.Random(SHOP_SEED))
    header = SessionHeader(session_id=f"demo-{tag}-{index:03d}", harness="stretto-demo", agent_model="scripted",
                           app="demo/shop", manifest=SHOP_MANIFEST, task_id=str(index))
    with SessionRecorder(directory, header, stamp=False) as rec:
        harness = Harness(shop, rec, engine)
        run_agent(shop, random.Random(1000 + index), harness.respond, harness.turn, harness.seen)
    return harness.stats


def demo(home: Path, sessions: int = 60, train: int = 40, theta: float = 0.3) -> dict[str, Any]:
    """Run the five steps; returns the numbers it printed."""
    base = home / "sessions"
    for old in list(base.glob("*.jsonl")) + list((home / "live").glob("*.jsonl")):
        old.unlink()
    baseline = [run_episode(base, i, None, "record") for i in track(range(sessions), "record", unit="session")]
    recorded = load_sessions([base])
    flow: Flow = learn(recorded[:train], SHOP_MANIFEST)
    save_flow(flow, home / "shop.flow.json")
    runtime = FlowRuntime(flow)
    held_out = recorded[train:]
    replays = {policy: replay_sessions(runtime, held_out, ReplayOptions(theta=theta, policy=policy, processes=1))
               for policy in ("use", "next")}
    engine = Engine(runtime, EngineConfig(theta=theta, live_manifest=SHOP_MANIFEST))  # the operator's word on reads
    live = [run_episode(home / "live", i, engine, "live") for i in track(range(train, sessions), "serve", unit="session")]
    before = sum(b.llm_turns for b in baseline[train:])
    after = sum(s.llm_turns for s in live)
    tokens_before, tokens_after = input_tokens(held_out), input_tokens(load_sessions([home / "live"]))
    return {"sessions": sessions, "train": train, "theta": theta, "flow": str(home / "shop.flow.json"),
            "flow_show": show(flow, theta),
            "replay": {p: {"llm_turns": r.llm_turns, "turns_saved": r.turns_saved, "detours": r.detours,
                           "lookups": r.lookups, "ceiling_turns": r.ceiling_turns} for p, r in replays.items()},
            "live": {"llm_turns_without": before, "llm_turns_with": after,
                     "input_tokens_without": tokens_before, "input_tokens_with": tokens_after,
                     "lookups": sum(s.lookups for s in live), "episodes": len(live)},
            "sessions_dir": str(base), "live_dir": str(home / "live")}


def input_tokens(sessions: list) -> int:
    """The input tokens the sessions' LLM turns report."""
    return sum(e.usage.input_tokens or 0 for s in sessions for e in s.events
               if isinstance(e, LLMTurn) and e.usage is not None)


def render(numbers: dict[str, Any]) -> str:
    """What a newcomer reads: the customers served without and with stretto, and what to try next."""
    live, use = numbers["live"], numbers["replay"]["use"]
    held = numbers["sessions"] - numbers["train"]

    def change(a: int, b: int) -> str:
        return f"{(b - a) / a:+.1%}" if a else ""

    used = use["lookups"] - use["detours"]
    lines = [f"stretto recorded {numbers['sessions']} conversations of a scripted shop agent, learned a flow "
             f"from the first {numbers['train']},", f"and served the other {held} customers again with it:", "",
             f"  {'':26}{'without stretto':>16}{'with stretto':>14}",
             f"  {'LLM turns':26}{live['llm_turns_without']:>16,}{live['llm_turns_with']:>14,}  "
             f"{change(live['llm_turns_without'], live['llm_turns_with'])}",
             f"  {'input tokens':26}{live['input_tokens_without']:>16,}{live['input_tokens_with']:>14,}  "
             f"{change(live['input_tokens_without'], live['input_tokens_with'])}",
             f"  {'lookups stretto made':26}{'':>16}{live['lookups']:>14,}",
             f"  {'  used by the agent':26}{'':>16}{used:>14,}   (replay)",
             f"  {'  detours (not used)':26}{'':>16}{use['detours']:>14,}   (replay)", "",
             f"The replay of the same {held} recorded sessions at θ = {numbers['theta']}, both speculators:",
             f"  {'speculator':22} {'LLM turns':>9} {'saved':>7} {'detours':>8} {'ceiling':>8}"]
    for policy, name in (("use", "use before write"), ("next", "next step")):
        r = numbers["replay"][policy]
        share = r["turns_saved"] / r["llm_turns"] if r["llm_turns"] else 0.0
        lines.append(f"  {name:22} {r['llm_turns']:9d} {share:7.1%} {r['detours']:8d} {r['ceiling_turns']:8d}")
    lines += ["", f"sessions: {numbers.get('sessions_dir', '')} (served: {numbers.get('live_dir', '')})",
              f"flow:     {numbers['flow']}", "",
              "next, see what the flow learned:  stretto flow show " + numbers["flow"],
              "then, serve your own agent:       docs/quickstart/ (OpenAI Agents, ADK, LangGraph, Claude, MCP proxy)"]
    return "\n".join(lines) + "\n"


def save_numbers(numbers: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps({k: v for k, v in numbers.items() if k != "flow_show"}, indent=1) + "\n")
