"""`stretto demo`: the whole pipeline on the embedded shop, with no data, server or key.

1. Record: the scripted agent serves customers in a real SDK (the OpenAI Agents SDK, when it is
   installed) with stretto's one line, which records every session; or in the built-in harness.
2. Learn: a flow is counted from the first sessions (the train customers).
3. Show: what the flow learned at each site.
4. Replay: the held-out sessions are replayed from the record with both speculators.
5. Live: the same held-out customers are served again with the flow; the agent reads the
   appended lookups and skips those calls. LLM turns with and without are compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

from stretto_core.demo.shop import SHOP_MANIFEST
from stretto_core.errors import StrettoError
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import Flow, learn, save_flow
from stretto_core.flow.review import show
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import LLMTurn, Session
from stretto_core.sessions.store import load_sessions

HARNESSES = ("openai-agents", "builtin")
SDK_MISSING = ("the OpenAI Agents SDK is not installed (pip install \"stretto[openai-agents]\"): "
               "the demo's agent runs in stretto's built-in harness")
SDK_MODULES = ("agents", "openai", "stretto_openai_agents")
HARNESS_GROUP = "stretto.demo_harnesses"
"""The entry-point group adapters register a demo harness under (the OpenAI Agents adapter's
`stretto_openai_agents.demo`), so the core finds it by name and imports no adapter itself."""


def registered_harness(name: str) -> ModuleType | None:
    """The demo harness an installed adapter registers as `name`; None when none does."""
    from importlib.metadata import entry_points

    for point in entry_points(group=HARNESS_GROUP):
        if point.name == name:
            module: ModuleType = point.load()
            return module
    return None


def load_harness(name: str | None = None) -> tuple[ModuleType, str | None]:
    """The harness module to run the demo's agent in (`HARNESS`, `NAME`, `serve_customers`), and
    a note when the default is not available. `None`: the OpenAI Agents SDK when installed, else
    the built-in harness."""
    if name not in (None, *HARNESSES):
        raise StrettoError(f"--harness must be one of {', '.join(HARNESSES)}, not {name!r}")
    from stretto_core.demo import builtin

    if name == "builtin":
        return builtin, None
    try:
        found = registered_harness("openai-agents")
        if found is None:
            raise ImportError("no demo harness registered as openai-agents", name="stretto_openai_agents")
        return found, None
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in SDK_MODULES:
            raise
        if name == "openai-agents":
            raise StrettoError("--harness openai-agents: the OpenAI Agents SDK is not installed "
                               "(pip install \"stretto[openai-agents]\")") from exc
        return builtin, SDK_MISSING


def demo(home: Path, sessions: int = 60, train: int = 40, theta: float = 0.3,
         harness: ModuleType | None = None) -> dict[str, Any]:
    """Run the five steps in `harness` (default: `load_harness()`'s); returns the numbers."""
    if harness is None:
        harness = load_harness()[0]
    base, live_dir = home / "sessions", home / "live"
    for old in list(base.glob("*.jsonl")) + list(live_dir.glob("*.jsonl")):
        old.unlink()
    harness.serve_customers(base, range(sessions), "record")
    recorded = ordered(load_sessions([base]))
    flow: Flow = learn(recorded[:train], SHOP_MANIFEST)
    save_flow(flow, home / "shop.flow.json")
    runtime = FlowRuntime(flow)
    held_out = recorded[train:]
    replays = {policy: replay_sessions(runtime, held_out, ReplayOptions(theta=theta, policy=policy, processes=1))
               for policy in ("use", "next")}
    harness.serve_customers(live_dir, range(train, sessions), "live", flow, theta, desc="serve")
    served = ordered(load_sessions([live_dir]))
    return {"sessions": sessions, "train": train, "theta": theta, "flow": str(home / "shop.flow.json"),
            "harness": harness.HARNESS, "harness_name": harness.NAME,
            "flow_show": show(flow, theta),
            "replay": {p: {"llm_turns": r.llm_turns, "turns_saved": r.turns_saved, "detours": r.detours,
                           "lookups": r.lookups, "ceiling_turns": r.ceiling_turns} for p, r in replays.items()},
            "live": {"llm_turns_without": llm_turns(held_out), "llm_turns_with": llm_turns(served),
                     "input_tokens_without": input_tokens(held_out), "input_tokens_with": input_tokens(served),
                     "lookups": sum(1 for s in served for e in s.events if e.kind == "lookup"),
                     "episodes": len(served)},
            "sessions_dir": str(base), "live_dir": str(live_dir)}


def ordered(sessions: list[Session]) -> list[Session]:
    """Sessions by customer (their ids end in the customer's number)."""
    return sorted(sessions, key=lambda s: s.header.session_id)


def llm_turns(sessions: list[Session]) -> int:
    """The LLM turns the sessions recorded."""
    return sum(1 for s in sessions for e in s.events if isinstance(e, LLMTurn))


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
    lines = [f"stretto recorded {numbers['sessions']} conversations of a scripted shop agent running in "
             f"{numbers['harness_name']},",
             f"learned a flow from the first {numbers['train']}, and served the other {held} customers again "
             "with it:", "",
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
