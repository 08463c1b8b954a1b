"""How often the evidence test catches a read the agent used, and a detour: what the `weighed` rule takes.

    python benchmarks/evidence_recall.py [--apps agentdojo/slack,agentdojo/travel,tau2/retail,tau2/airline]
        [--split train] [--served]

Recall, on the split's recorded (unserved) sessions: each of the agent's own read calls is put in
a lookup's place, as if stretto had answered it (`learn/evidence_recall.call_as_lookup`), and
tested as a served lookup is under `said` (a value it was the first to show turns up in the
agent's later calls or text before its next write). Prints per app and read tool the calls tested
and caught, and the pooled recall (`learn/served.RECALL` stands beside it).

`--served` also runs the served loop under `said` on each deployment (as `served_loop.py` does,
five rounds by record replay) and counts, of the lookups shown, those the agent would have made
(replay knows) and those it would not (detours), and how many of each the test caught: the
detours' share is `learn/served.FALSE_CATCH`; the used ones' share checks the recall above.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from lifecycle_data import DEFAULT_CACHE, load_app
from stretto_core.learn.evidence_recall import Recall, recall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default="agentdojo/slack,agentdojo/travel,tau2/retail,tau2/airline")
    parser.add_argument("--split", default="train", choices=("train", "test"))
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--served", action="store_true", help="Also count what the test catches of served lookups.")
    args = parser.parse_args()
    started = time.process_time()
    pooled = Recall()
    print("| app | read tool | own calls tested | caught | recall |\n|---|---|---|---|---|")
    for app in args.apps.split(","):
        sessions = load_app(app, args.cache).on(args.split, app=app)
        manifest = next(s.header.manifest for s in sessions if s.header.manifest is not None)
        app_total = Recall()
        for tool, counted in sorted(recall(sessions, manifest).items()):
            add(app_total, counted)
            print(f"| {app} | {tool} | {counted.tested} | {counted.caught} | {share(counted)} |")
        print(f"| {app} | all | {app_total.tested} | {app_total.caught} | {share(app_total)} |")
        add(pooled, app_total)
    print(f"| all apps | all | {pooled.tested} | {pooled.caught} | {share(pooled)} |")
    if args.served:
        served_catches(args.apps.split(","), args.split, args.cache)
    print(f"\n{time.process_time() - started:.0f} s CPU")


def served_catches(apps: list[str], split: str, cache: Path) -> None:
    """The served loop under `said`: of the lookups shown, used and detours, and the test's catches of each."""
    from served_loop import deployments
    from stretto_core.evaluate.served_loop import batches_of, serve_batch
    from stretto_core.flow.ir import learn
    from stretto_core.learn.first_source import first_shown
    from stretto_core.learn.served import _shown_lookups, shows_use, teaching_sessions

    print("\n| app | deployment | used lookups | caught | detours | caught |\n|---|---|---|---|---|---|")
    used_all, detours_all = Recall(), Recall()
    for app in apps:
        for name, sessions in deployments(app, split, cache, None).items():
            batches = batches_of(sessions, 5)
            taught = list(batches[0])
            used, detours = Recall(), Recall()
            for batch in batches[1:]:
                served, _ = serve_batch(learn(taught), batch)
                for s in served:
                    fresh = first_shown(s)
                    for lk in _shown_lookups(s):
                        caught = shows_use(s, lk, s.header.manifest, said=True, fresh=fresh.get(lk.call_id, set()))
                        counted = used if lk.used else detours
                        counted.tested += 1
                        counted.caught += int(caught)
                taught += list(teaching_sessions(served, "said"))
            print(f"| {app} | {name} | {used.tested} | {used.caught} ({share(used)}) | {detours.tested} "
                  f"| {detours.caught} ({share(detours)}) |")
            add(used_all, used)
            add(detours_all, detours)
    print(f"| all | all | {used_all.tested} | {used_all.caught} ({share(used_all)}) | {detours_all.tested} "
          f"| {detours_all.caught} ({share(detours_all)}) |")


def add(total: Recall, counted: Recall) -> None:
    total.tested += counted.tested
    total.caught += counted.caught


def share(counted: Recall) -> str:
    return f"{counted.caught / counted.tested:.2f}" if counted.tested else "–"


if __name__ == "__main__":
    main()
