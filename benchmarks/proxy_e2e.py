"""The scripted agent through the proxy on τ² retail's test episodes, against `replay --env`.

    .venv/bin/python benchmarks/proxy_e2e.py [--episodes 3 | --all] [--full] [--host mcp|openai-agents]
                                             [--json proxy_e2e.json]

Each episode runs as a host would run it: a real MCP client (the `mcp` package's `Client`, or
with `--host openai-agents` the OpenAI Agents SDK's `MCPServerStdio` under its `Runner` and
`ScriptedModel`; the scripted model's brain an `EpisodePlayer`), `stretto proxy`, and τ²'s
environment as an MCP server. Without a flow and
with the shipped retail flow, it counts the LLM turns the scripted model made and compares them
with what `stretto replay --env` counts on the same episodes as the proxy sees them (no user
words, no replies: `sessions.views.as_seen_by_a_proxy`); it also prints the replay of the whole
episodes, which an adapter inside the agent matches. `--all` runs the whole test split
(of the tests' sample, or of the published runs with `--full`, which needs STRETTO_DATA).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--all", action="store_true", help="Every test episode.")
    parser.add_argument("--full", action="store_true", help="The published runs (STRETTO_DATA), not the sample.")
    parser.add_argument("--mode", default="legacy", choices=("legacy", "auto"), help="The client's protocol era.")
    parser.add_argument("--host", default="mcp", choices=("mcp", "openai-agents"),
                        help="The MCP client driving the proxy.")
    parser.add_argument("--json", type=Path, default=Path("proxy_e2e.json"))
    args = parser.parse_args()
    from stretto_core.evaluate.scripted import fixture_flow, load_episodes, replay_turns
    from stretto_mcp.scripted import run_episodes

    sessions = load_episodes("tau2/retail", "test", full=args.full)
    if not args.all:
        sessions = sessions[:args.episodes]
    flow = fixture_flow("tau2/retail")
    started = time.perf_counter()
    without, with_flow = replay_turns(flow, sessions, proxy_view=True)  # what the proxy can see
    _, full_with = replay_turns(flow, sessions)  # what an adapter inside the agent, seeing all, saves
    plain = run_episodes(sessions, None, mode=args.mode, host=args.host)
    served = run_episodes(sessions, flow, mode=args.mode, host=args.host)
    seconds = time.perf_counter() - started
    row = {"episodes": len(sessions), "host": args.host, "mode": args.mode, "full": args.full,
           "replay_turns_without": without, "replay_turns_with": with_flow, "replay_full_view_with": full_with,
           "proxy_turns_without": sum(r.llm_turns for r in plain), "proxy_turns_with": sum(r.llm_turns for r in served),
           "results_with_lookups": sum(r.appended for r in served), "seconds": round(seconds, 1),
           "episodes_detail": [{"session": s.session_id, "without": p.llm_turns, "with": s.llm_turns}
                               for p, s in zip(plain, served)]}
    row["equal"] = (row["proxy_turns_without"], row["proxy_turns_with"]) == (without, with_flow)
    print(f"{len(sessions)} retail test episodes through the proxy (host {args.host}, {args.mode} protocol)")
    print(f"LLM turns without the flow: proxy {row['proxy_turns_without']}, replay --env {without}")
    print(f"LLM turns with the flow:    proxy {row['proxy_turns_with']}, replay --env of the proxy's view {with_flow}")
    print(f"  (replay --env of the whole episodes, user words and replies seen, as an in-agent adapter: {full_with})")
    print(f"results that carried lookups: {row['results_with_lookups']}; equal: {row['equal']}; {seconds:.0f} s")
    args.json.write_text(json.dumps(row, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0 if row["equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
