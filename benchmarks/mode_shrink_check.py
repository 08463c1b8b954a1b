"""Does serving a flow in a mode it learned too few sessions of need its reach shrunk towards the habit?

    python benchmarks/mode_shrink_check.py --sessions DIR [--theta 0.3] [--draws 1000] [--json OUT]

DIR holds ingested τ²-bench sessions (`stretto ingest tau2 .../trajectories --out DIR`). The per-mode
shrinkage (`flow/modes.py`, `serve/modes.py`) changes serving only where a flow learned one mode and
serves the other: in the published data, a telecom flow learned from solo runs serving sessions
with a user. The shared train split holds no telecom session with a user (its 20 are solo, one
agent, 5 tasks), so the train split alone cannot choose this rule. The only sessions with a user
outside the test split are 20 of gpt-4o on generated telecom tasks (`small`, in neither train nor
test): this replays them, with the flow learned from the solo train sessions, once as the rule
serves (reach shrunk: w = n_user / 30 = 0) and once with the reach as learned (w = 1), paired over
tasks. The test split is never read. A second table does the same inside the solo train sessions,
leaving one task out, with the shrinkage forced at w = n / 30 (the premise: few sessions make the
reach overconfident).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from stretto_core.evaluate.measure.bench_data import Corpus, domain_of
from stretto_core.evaluate.measure.bootstrap import format_interval
from stretto_core.evaluate.measure.metrics import compare_speculators, merge_results
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import Flow, learn
from stretto_core.flow.modes import MIN_MODE_SESSIONS
from stretto_core.serve.modes import ModeShrunk
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import Session
from stretto_core.cli.commands._load import load_for_verb
from stretto_core.sessions.splits import make_split_file

SOLO_DOMAIN = "tau2/telecom (solo)"
USER_DOMAIN = "tau2/telecom"


def unrecorded_modes(flow: Flow) -> Flow:
    """The same flow as if learned before modes were recorded: served with its reach as learned (w = 1)."""
    sources = [s.model_copy(update={"solo_sessions": None}) for s in flow.provenance.sources]
    return flow.model_copy(update={"provenance": flow.provenance.model_copy(update={"sources": sources})})


class Forced:
    """A model served with its reach shrunk at a fixed weight whatever the mode (the premise's check)."""

    def __init__(self, model: Any, weight: float) -> None:
        self.shrunk = ModeShrunk(model, weight)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.shrunk, name)


def replay(model: Any, sessions: Sequence[Session], theta: float) -> ReplayResult:
    return replay_sessions(model, list(sessions), ReplayOptions(theta=theta, policy="use", split="all", processes=1))


def row(label: str, a: ReplayResult, b: ReplayResult, draws: int) -> dict[str, Any]:
    """b (shrunk) against a (as learned), paired over tasks."""
    c = compare_speculators(a, b, draws=draws, a_label="reach as learned", b_label="reach shrunk")
    line = {"case": label, "tasks": c.tasks, "episodes": c.a.episodes}
    for name, m in (("as_learned", c.a), ("shrunk", c.b)):
        line[name] = {"saved": m.saved, "detours": m.detours, "lookups": m.lookups, "used": m.used,
                      "turns_saved": format_interval(m.turns_saved, 100, 1, "%"),
                      "detours_per_episode": format_interval(m.detours_per_episode, 1, 2)}
    line["shrunk_minus_as_learned"] = {"saved": c.difference.saved, "detours": c.difference.detours,
                                       "turns_saved": format_interval(c.difference.turns_saved, 100, 1, "", True),
                                       "detours_per_episode": format_interval(c.difference.detours_per_episode,
                                                                              1, 2, "", True)}
    return line


def print_rows(rows: list[dict[str, Any]]) -> None:
    print("| case | tasks | episodes | as learned: saved · detours | shrunk: saved · detours | shrunk − as learned: "
          "turns saved (points) | detours / episode |\n|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        a, b, d = r["as_learned"], r["shrunk"], r["shrunk_minus_as_learned"]
        print(f"| {r['case']} | {r['tasks']} | {r['episodes']} | {a['saved']} · {a['detours']} | "
              f"{b['saved']} · {b['detours']} | {d['turns_saved']} | {d['detours_per_episode']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    loaded = load_for_verb([args.sessions])
    corpus = Corpus("tau2", loaded, make_split_file([s.header for s in loaded]))
    solo_train = corpus.on("train", SOLO_DOMAIN)
    outside = [s for s in corpus.sessions if corpus.sides[s.session_id] == "none" and domain_of(s.header) == USER_DOMAIN]
    if not solo_train or not outside:
        sys.exit(f"need solo telecom train sessions ({len(solo_train)}) and telecom sessions with a user outside "
                 f"the split ({len(outside)}) in {args.sessions}")
    if corpus.on("train", USER_DOMAIN):
        print(f"note: {len(corpus.on('train', USER_DOMAIN))} telecom train sessions with a user exist; "
              "this check does not use them")
    rows = []
    flow = learn(solo_train)
    rows.append(row(f"solo train flow ({len(solo_train)} sessions) serving {len(outside)} sessions with a user "
                    "outside the split", replay(FlowRuntime(unrecorded_modes(flow)), outside, args.theta),
                    replay(FlowRuntime(flow), outside, args.theta), args.draws))
    tasks = sorted({s.header.task_id for s in solo_train})
    plain, forced = [], []
    for task in tasks:
        held = [s for s in solo_train if s.header.task_id == task]
        fold = learn([s for s in solo_train if s.header.task_id != task])
        weight = min(1.0, fold.provenance.sources[0].sessions / MIN_MODE_SESSIONS)
        plain.append(replay(FlowRuntime(fold), held, args.theta))
        forced.append(replay(Forced(FlowRuntime(fold), weight), held, args.theta))
    rows.append(row(f"solo train, leave one of {len(tasks)} tasks out, shrunk at w = n / 30",
                    merge_results(plain), merge_results(forced), args.draws))
    print_rows(rows)
    print(f"\nθ = {args.theta}; 95% intervals from {args.draws} paired bootstrap draws over tasks; the test split is "
          f"not read. {time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
