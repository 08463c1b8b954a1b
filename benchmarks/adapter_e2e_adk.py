"""Google ADK end to end: recorded τ² retail test episodes through ADK's Runner, with and without stretto.

Each episode is played by a scripted model (`EpisodePlayer`) through ADK's real `Runner`, every
call running in the real τ²-bench environment; once with no plugin, once with
`StrettoPlugin(flow=<retail flow from the train split>, reads=<shipped manifest's reads>)`.
Prints LLM turns without -> with beside what `stretto replay --env` counts on the same episodes,
lists any episode where they differ, and writes JSON.

    python benchmarks/adapter_e2e_adk.py            # the tests' sample (3 episodes)
    python benchmarks/adapter_e2e_adk.py --all      # the whole retail test split (STRETTO_DATA)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time

from stretto_adk import StrettoPlugin
from stretto_adk.scripted import run_episode
from stretto_core.evaluate.scripted import fixture_flow, load_episodes, replay_turns
from summary_file import write_summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="the whole retail test split of the full data")
    parser.add_argument("--limit", type=int, default=None, help="at most this many episodes")
    parser.add_argument("--out", default="bench-out/adapter_e2e_adk.json")
    args = parser.parse_args(argv)
    logging.getLogger("google_adk").setLevel(logging.ERROR)

    episodes = load_episodes("tau2/retail", "test", full=args.all, limit=args.limit)
    flow = fixture_flow("tau2/retail")
    reads = episodes[0].header.manifest.reads()
    started = time.perf_counter()
    without, with_stretto = replay_turns(flow, episodes)
    replay_s = time.perf_counter() - started

    rows = []
    adk_s = 0.0
    with tempfile.TemporaryDirectory() as store:
        plugin = StrettoPlugin(flow=flow, reads=reads, store=store)
        for n, session in enumerate(episodes, 1):
            t0 = time.perf_counter()
            bare = asyncio.run(run_episode(session))
            served = asyncio.run(run_episode(session, [plugin]))
            adk_s += time.perf_counter() - t0
            per_episode = replay_turns(flow, [session])
            rows.append({"session_id": session.session_id, "recorded": bare.recorded_turns,
                         "adk_without": bare.llm_turns, "adk_with": served.llm_turns,
                         "replay_without": per_episode[0], "replay_with": per_episode[1],
                         "lookups": served.lookups})
            if n % 25 == 0:
                print(f"  {n}/{len(episodes)} episodes", file=sys.stderr)

    adk_without = sum(r["adk_without"] for r in rows)
    adk_with = sum(r["adk_with"] for r in rows)
    differ = [r for r in rows if (r["adk_without"], r["adk_with"]) != (r["replay_without"], r["replay_with"])]
    summary = {"episodes": len(rows), "source": "full data" if args.all else "repository sample",
               "adk_without": adk_without, "adk_with": adk_with,
               "replay_without": without, "replay_with": with_stretto,
               "saved_share": (adk_without - adk_with) / adk_without if adk_without else 0.0,
               "lookups": sum(r["lookups"] for r in rows),
               "matches_replay": (adk_without, adk_with) == (without, with_stretto),
               "episodes_differing": differ, "adk_seconds": adk_s, "replay_seconds": replay_s,
               "python": sys.version.split()[0], "per_episode": rows}
    print(f"episodes {len(rows)} ({summary['source']})")
    print(f"ADK     LLM turns without -> with: {adk_without} -> {adk_with} "
          f"({100 * summary['saved_share']:.1f}% saved, {summary['lookups']} lookups)")
    print(f"replay  LLM turns without -> with: {without} -> {with_stretto}")
    print(f"matches replay: {summary['matches_replay']}; episodes differing: {len(differ)}")
    for r in differ[:10]:
        print(f"  {r['session_id']}: ADK {r['adk_without']}->{r['adk_with']}, "
              f"replay {r['replay_without']}->{r['replay_with']}")
    print(f"ADK runs {adk_s:.1f} s, replay {replay_s:.1f} s")
    write_summary(args.out, summary)
    return 0 if summary["matches_replay"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
