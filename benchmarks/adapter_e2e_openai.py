"""LLM turns of τ² retail test episodes run through the OpenAI Agents SDK, without and with stretto.

    .venv/bin/python benchmarks/adapter_e2e_openai.py            # the 3 sample episodes
    .venv/bin/python benchmarks/adapter_e2e_openai.py --all      # the whole retail test split
    .venv/bin/python benchmarks/adapter_e2e_openai.py --all --json e2e_openai.json

Each episode is played by the SDK's `ScriptedModel` (stretto's `EpisodePlayer`) against the real
τ²-bench environment behind `FunctionTool`s, once bare and once through `instrument(...)` with
the shipped retail flow (learned from the train split). `--all` reads the full data from
`STRETTO_DATA` (or `../shared/data`). The SDK's counts are printed beside `stretto replay --env`'s
on the same episodes; they must agree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import agents
from agents import set_tracing_disabled

from stretto_core.evaluate.scripted import (EpisodePlayer, Tau2Toolset, fixture_flow, load_episodes,
                                            load_fixture_episodes, replay_turns)
from stretto_openai_agents import runtime_of
from stretto_openai_agents.testing import play_episode, stretto_serving


def run(sessions: list[Any], serve: Any) -> dict[str, Any]:
    """Play every episode; the per-episode and total counts."""
    rows = []
    for session in sessions:
        player = EpisodePlayer(session)
        agent = asyncio.run(play_episode(player, Tau2Toolset(session), session.header.session_id, serve=serve))
        runtime = runtime_of(agent)
        lookups = [lk for live in runtime.sessions for lk in live.lookups] if runtime is not None else []
        if runtime is not None:
            runtime.close()
        rows.append({"episode": session.header.session_id, "task": session.header.task_id,
                     "recorded_turns": player.recorded_turns, "llm_turns": player.llm_turns,
                     "saved_turns": player.saved_turns, "lookups": len(lookups),
                     "failed_lookups": sum(lk.error for lk in lookups)})
    return {"llm_turns": sum(r["llm_turns"] for r in rows), "lookups": sum(r["lookups"] for r in rows),
            "failed_lookups": sum(r["failed_lookups"] for r in rows), "episodes": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="the whole retail test split of the full data")
    parser.add_argument("--limit", type=int, default=None, help="at most this many episodes")
    parser.add_argument("--json", type=Path, default=Path("adapter_e2e_openai.json"), help="where to write the numbers")
    args = parser.parse_args(argv)
    set_tracing_disabled(True)
    sessions = load_episodes("tau2/retail", "test", full=True) if args.all else load_fixture_episodes("tau2/retail")
    sessions = sessions[:args.limit] if args.limit else sessions
    flow = fixture_flow("tau2/retail")
    started = time.perf_counter()
    replay_without, replay_with = replay_turns(flow, sessions)
    bare = run(sessions, None)
    with tempfile.TemporaryDirectory(prefix="stretto-e2e-openai-") as store:
        served = run(sessions, stretto_serving(flow, store))
    seconds = time.perf_counter() - started
    agree = bare["llm_turns"] == replay_without and served["llm_turns"] == replay_with
    print(f"{len(sessions)} tau2 retail test episodes through openai-agents {agents.__version__} "
          f"({seconds:.1f} s)")
    print(f"  SDK run:        {bare['llm_turns']} -> {served['llm_turns']} LLM turns "
          f"({served['lookups']} lookups, {served['failed_lookups']} failed)")
    print(f"  replay --env:   {replay_without} -> {replay_with} LLM turns")
    print(f"  agree: {'yes' if agree else 'NO'}")
    report = {"benchmark": "adapter_e2e_openai", "sdk": f"openai-agents {agents.__version__}",
              "split": "tau2/retail test" + (" (full data)" if args.all else " (sample)"),
              "episodes": len(sessions), "seconds": round(seconds, 2),
              "without": {"sdk": bare["llm_turns"], "replay": replay_without},
              "with": {"sdk": served["llm_turns"], "replay": replay_with, "lookups": served["lookups"],
                       "failed_lookups": served["failed_lookups"]},
              "agree": agree, "per_episode": {"without": bare["episodes"], "with": served["episodes"]}}
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"  wrote {args.json}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
