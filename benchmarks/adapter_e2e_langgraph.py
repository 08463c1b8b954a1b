"""τ² retail test episodes through a real LangChain `create_agent`, without and with stretto.

    python benchmarks/adapter_e2e_langgraph.py [--all] [--mode async|sync] [--out bench-out/adapter_e2e_langgraph.json]

A scripted model plays each recorded episode (the kit's `EpisodePlayer`) against the episode's
real τ²-bench environment behind `StructuredTool`s; with `StrettoMiddleware` serving the retail
flow (learned from the train split), the agent drops the calls an appended lookup answered.
The LLM turns it takes are compared with `stretto replay --env` on the same episodes: without
stretto they must equal the recorded turns, with it the replay's count. Default: the sample's
test episodes; `--all`: the whole retail test split of the full data (`STRETTO_DATA`).
Needs the benchmark environments (`scripts/install-envs.sh`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from stretto_core.evaluate.scripted import fixture_flow, load_episodes, replay_turns

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "adapters"))
from langgraph_support import run_episode  # noqa: E402 - the harness the end-to-end test runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="the whole retail test split of the full data")
    parser.add_argument("--mode", choices=["async", "sync"], default="async", help="ainvoke or invoke")
    parser.add_argument("--out", type=Path, default=Path("bench-out/adapter_e2e_langgraph.json"))
    args = parser.parse_args()

    episodes = load_episodes("tau2/retail", "test", full=args.all)
    flow = fixture_flow("tau2/retail")
    started = time.perf_counter()
    rows = []
    for session in episodes:
        without = run_episode(session, None, mode=args.mode)
        served = run_episode(session, flow, mode=args.mode)
        rows.append({"session_id": session.header.session_id, "agent": session.header.agent_model,
                     "recorded_turns": without.recorded_turns, "turns_without": without.llm_turns,
                     "turns_with": served.llm_turns, "saved_turns": served.saved_turns, "lookups": served.lookups})
    seconds = time.perf_counter() - started
    replay_without, replay_with = replay_turns(flow, episodes)
    total = {key: sum(r[key] for r in rows) for key in ("recorded_turns", "turns_without", "turns_with",
                                                        "saved_turns", "lookups")}
    report = {
        "episodes": len(rows), "split": "retail test", "data": "full" if args.all else "sample",
        "mode": args.mode, "seconds": round(seconds, 2), "total": total,
        "replay": {"turns_without": replay_without, "turns_with": replay_with},
        "matches_replay": total["turns_without"] == replay_without and total["turns_with"] == replay_with,
        "episodes_detail": rows,
    }
    print(f"{len(rows)} retail test episodes ({report['data']}), create_agent + StrettoMiddleware, {args.mode}")
    print(f"  LLM turns without stretto {total['turns_without']:5d}   replay --env {replay_without:5d}")
    print(f"  LLM turns with stretto    {total['turns_with']:5d}   replay --env {replay_with:5d}")
    saved = total["turns_without"] - total["turns_with"]
    share = saved / total["turns_without"] if total["turns_without"] else 0.0
    print(f"  saved {saved} turns ({share:.1%}), {total['lookups']} lookups, {seconds:.1f} s for both arms")
    print(f"  matches the replay: {report['matches_replay']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"  wrote {args.out}")
    if not report["matches_replay"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
