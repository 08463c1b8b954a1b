"""τ² retail test episodes through the real Claude Code CLI, without and with stretto, against replay.

Each recorded episode is played by a scripted model (the kit's `EpisodePlayer`) that the bundled
CLI reaches through the scripted Messages API on 127.0.0.1; the episode's real τ² environment
sits behind an in-process SDK MCP server; one `ClaudeSDKClient` turn per user message. Without
stretto the CLI should take every recorded LLM turn; with the shipped retail flow (learned from
the train split), exactly what `stretto replay --env` counts. Prints per episode and in total,
and writes JSON:

    python benchmarks/adapter_e2e_claude.py              # the 3 test episodes of the tests' sample
    python benchmarks/adapter_e2e_claude.py --all        # the whole retail test split (needs the full data)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "adapters"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="every retail test episode of the full data")
    parser.add_argument("--data", type=Path, help="the full data folder (default: STRETTO_DATA or ../shared/data)")
    parser.add_argument("--limit", type=int, help="at most this many episodes")
    parser.add_argument("--out", type=Path, default=REPO / "bench-out" / "adapter_e2e_claude.json")
    args = parser.parse_args()
    if args.data is not None:
        os.environ["STRETTO_DATA"] = str(args.data)

    from claude_support import run_episode
    from stretto_core.evaluate.scripted import fixture_flow, load_episodes, replay_turns

    flow = fixture_flow("tau2/retail")
    episodes = load_episodes("tau2/retail", "test", full=args.all, limit=args.limit)
    print(f"{len(episodes)} retail test episodes ({'full data' if args.all else 'repository sample'})")
    rows, started = [], time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for i, session in enumerate(episodes):
            folder = Path(tmp) / f"e{i}"
            without = asyncio.run(run_episode(session, folder / "without", None))
            served = asyncio.run(run_episode(session, folder / "with", flow))
            replay_without, replay_with = replay_turns(flow, [session])
            row = {"episode": session.header.session_id, "recorded": without.recorded_turns,
                   "cli_without": without.llm_turns, "cli_with": served.llm_turns, "replay_without": replay_without,
                   "replay_with": replay_with, "lookups": served.lookups,
                   "match": without.llm_turns == replay_without and served.llm_turns == replay_with}
            rows.append(row)
            print(f"{i + 1:3d} {row['episode'][-44:]:44s} without {row['cli_without']:3d} (replay "
                  f"{replay_without:3d})  with {row['cli_with']:3d} (replay {replay_with:3d})  lookups "
                  f"{row['lookups']:3d}  {'ok' if row['match'] else 'DIFFERS'}", flush=True)
    total = {key: sum(r[key] for r in rows) for key in ("recorded", "cli_without", "cli_with", "replay_without",
                                                        "replay_with", "lookups")}
    total["episodes"] = len(rows)
    total["episodes_matching"] = sum(r["match"] for r in rows)
    total["seconds"] = round(time.monotonic() - started, 1)
    saved = total["cli_without"] - total["cli_with"]
    print(f"\nLLM turns: without stretto {total['cli_without']} (replay {total['replay_without']}), with "
          f"{total['cli_with']} (replay {total['replay_with']}): {saved} saved "
          f"({100 * saved / max(1, total['cli_without']):.1f}%), {total['lookups']} lookups; "
          f"{total['episodes_matching']}/{len(rows)} episodes match the replay; {total['seconds']} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"total": total, "episodes": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0 if total["episodes_matching"] == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
