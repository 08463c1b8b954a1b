"""Served-loop stability: learn → serve → learn again, ≥ 5 rounds, for each rule of what a served session teaches.

    python benchmarks/served_loop.py [--apps agentdojo/slack,agentdojo/travel,tau2/retail,tau2/airline]
        [--rules drop,all,holdout,used,said,weighed] [--rounds 5] [--split train] [--most N] [--json OUT]
        [--paired [--folds 2]] [--tool-recall [--blind 0.15] [--blind-share 0.5] [--ramp]]

For each app (τ²: each agent with sessions on the split apart, in recorded order; AgentDojo: the
suite's sessions of every pipeline, in a fixed hashed order), the sessions are cut into rounds+1
batches. Batch 0 is recorded; in each round the current flow serves the next batch by record
replay (the agent skips the calls lookups answered; `evaluate/served_loop.py` writes the session
a recorder would have) and the next flow learns from batch 0 and the served batches, each
session as the rule teaches it (`learn/served.py`). Each round's flow is scored on its batch
beside the reference: the flow learned once from the same sessions as recorded, unserved.
Prints per rule and round turns saved and detours, and whether every round stays within 10% of
the reference in both (strict). On 4–66 episodes the reference itself moves by more than that from
round to round, so each reference round also gets its 95% bootstrap interval over the round's
tasks (`evaluate/round_spread.py`, printed as [saved · detours]), and a round counts as outside
beyond noise only when it is more than 10% off *and* beyond that interval (`*`: more than 10% off;
`**`: beyond the interval too). Both counts are printed; writes every number to --json. Decisions are made on `--split train`
(the default); `--split test` reports.

`--paired` adds the paired score (`evaluate/paired_rounds.py`): cross-fitted over `--folds` folds of
the deployment, each round's flow under each rule and the reference learned from the same
sessions unserved are replayed on the same sessions neither learned from (every session of the
deployment, once per round), and the difference (rule − reference, share of the reference) gets a
paired 95% interval: a round is *within* 10% when its whole interval is, *off* when its whole
interval is beyond 10%, else *unresolved*. The per-batch table above stays as it is.

`--env` serves in the real environment (each episode on a fresh one, every recorded call and
lookup run there, `replay/env.py`): about 0.4 s CPU an episode against record replay's 4 ms, so on
this machine's two shared cores it runs on a few named `--deployments`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Any, Sequence

from lifecycle_data import DEFAULT_CACHE, in_order, load_app
from stretto_core.evaluate.measure.bootstrap import Interval
from stretto_core.evaluate.paired_rounds import DEFAULT_FOLDS, PairedRound, run_paired, verdict
from stretto_core.evaluate.round_spread import outside, reference_spread
from stretto_core.evaluate.served_loop import REFERENCE, run_loop
from stretto_core.learn import served
from stretto_core.learn.evidence_recall import tool_recall
from stretto_core.learn.missed_uses import ToolRecall
from stretto_core.learn.served import RULES
from stretto_core.sessions.model import Session

def deployments(app: str, split: str, cache: Path, most: int | None) -> dict[str, list[Session]]:
    """The sessions each deployment of the app sees, in arrival order."""
    sessions = load_app(app, cache).on(split, app=app)
    if app.startswith("agentdojo/"):
        ordered = sorted(sessions, key=lambda s: hashlib.sha1(s.session_id.encode()).hexdigest())
        return {"all pipelines": ordered[:most] if most else ordered}
    by_agent: dict[str, list[Session]] = {}
    for s in in_order(sessions):
        by_agent.setdefault(s.header.agent_model or "unknown", []).append(s)
    return {a: (ss[:most] if most else ss) for a, ss in sorted(by_agent.items()) if len(ss) >= 24}


def mark(judged: dict[str, bool]) -> str:
    """`*` a round more than 10% off the reference (saves or detours); `**` beyond its 95% interval too."""
    if judged["saved_beyond_noise"] or judged["detours_beyond_noise"]:
        return " **"
    return " *" if judged["saved"] or judged["detours"] else ""


def interval(i: Interval) -> str:
    return "–" if i.low is None or i.high is None else f"{i.low:.0f}–{i.high:.0f}"


def share(i: Interval) -> str:
    """A paired difference as `+3% [−2, +8]`."""
    if i.point is None:
        return "–"
    if i.low is None or i.high is None:
        return f"{i.point:+.0%}"
    return f"{i.point:+.0%} [{i.low:+.0%}, {i.high:+.0%}]"


PAIRED_KEYS = ("deployments", "rounds", "within", "off", "unresolved", "point_within", "stable_point", "never_off",
               "saved", "saved_reference", "detours", "detours_reference")


def report_paired(rounds: list[PairedRound], totals: dict[str, int]) -> tuple[str, list[dict[str, Any]]]:
    """One rule's paired row (a cell per round: saved and detours differences, `✓` within 10% by its
    whole interval, `✗` off by its whole interval, `?` unresolved) and its rounds for the JSON."""
    cells: list[str] = []
    rows: list[dict[str, Any]] = []
    for pair in rounds:
        saved, detours = pair.differences()
        judged = (verdict(saved), verdict(detours))
        mark = "✗" if "off" in judged else "✓" if judged == ("within", "within") else "?"
        point_within = all(d.point is not None and abs(d.point) <= 0.1 for d in (saved, detours))
        totals["rounds"] += 1
        totals["within" if mark == "✓" else "off" if mark == "✗" else "unresolved"] += 1
        totals["point_within"] += int(point_within)
        for key, score in (("", pair.rule), ("_reference", pair.reference)):
            totals["saved" + key] += score.saved
            totals["detours" + key] += score.detours
        cells.append(f"{share(saved)} · {share(detours)} {mark}")
        rows.append({"rule": pair.rule.as_dict(), "reference": pair.reference.as_dict(),
                     "saved_difference": saved.model_dump(), "detours_difference": detours.model_dump(),
                     "verdict": {"saved": judged[0], "detours": judged[1]}, "point_within": point_within})
    totals["deployments"] += 1
    totals["stable_point"] += int(all(r["point_within"] for r in rows))
    totals["never_off"] += int(not any("off" in r["verdict"].values() for r in rows))
    return " | ".join(cells), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default="agentdojo/slack,agentdojo/travel,tau2/retail,tau2/airline")
    parser.add_argument("--rules", default=",".join(RULES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--split", default="train", choices=("train", "test"))
    parser.add_argument("--most", type=int, default=None, help="At most this many sessions per deployment.")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--env", action="store_true", help="Serve in the real benchmark environment (τ²: "
                        "tau2/<domain>; AgentDojo suites too), each lookup run there; slow: pick few deployments.")
    parser.add_argument("--paired", action="store_true", help="Also score each round's flow paired with the "
                        "reference's on the sessions neither learned from (cross-fitted; slower).")
    parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS, help="Folds of the paired cross-fit (2 or more).")
    parser.add_argument("--tool-recall", action="store_true", help="`weighed` takes the evidence test's recall per "
                        "tool, measured on each loop's batch 0 (the recorded sessions), and teaches a tool it is blind at "
                        "by each lookup's score.")
    parser.add_argument("--blind", type=float, default=served.BLIND_RECALL, help="With --tool-recall: below this "
                        "recall a tool is blind.")
    parser.add_argument("--blind-share", type=float, default=served.BLIND_SHARE, help="With --tool-recall: an "
                        "uncaught lookup at a blind tool is taught with this share of its score.")
    parser.add_argument("--ramp", action="store_true", help="With --tool-recall: a tool is as blind as its recall is "
                        "short of --blind (1 − r/blind), not wholly blind below it.")
    parser.add_argument("--deployments", default=None, help="Only these deployments (agents), comma-separated.")
    args = parser.parse_args()
    if args.folds < 2:
        parser.error(f"--folds must be 2 or more, not {args.folds}")
    started = time.process_time()
    def measured(batch: Sequence[Session]) -> ToolRecall:
        """The test's recall per tool on a loop's recorded batch, with the knobs given."""
        manifest = batch[0].header.manifest
        return ToolRecall(tool_recall(batch, manifest) if manifest else {}, args.blind, args.blind_share, args.ramp)

    recall_of = measured if args.tool_recall else None
    rules = args.rules.split(",")
    out: list[dict] = []
    summary: dict[str, dict[str, int]] = {r: dict.fromkeys(("stable", "stable_beyond_noise", "deployments", "rounds",
                                                            "rounds_out", "rounds_out_beyond_noise", "saved", "detours"), 0)
                                          for r in [REFERENCE, *rules]}
    paired_summary: dict[str, dict[str, int]] = {r: dict.fromkeys(PAIRED_KEYS, 0) for r in rules}
    paired_out: list[dict] = []
    for app in args.apps.split(","):
        for name, sessions in deployments(app, args.split, args.cache, args.most).items():
            if len(sessions) < args.rounds + 1 or (args.deployments and name not in args.deployments.split(",")):
                continue
            result = run_loop(sessions, rules, args.rounds, args.theta, env=args.env, recall_of=recall_of)
            ref = result.rounds_by_rule[REFERENCE]
            spreads = [reference_spread(r) for r in ref]
            print(f"\n## {app}, {name}: {len(sessions)} {args.split} sessions, batches of {result.batch}, θ = {args.theta}, "
                  f"served by {'the real environment' if args.env else 'record replay'}")
            print("| rule | " + " | ".join(f"round {r + 1}" for r in range(args.rounds))
                  + " | saved | detours | every round within 10% | rounds outside 10% and the reference's 95% |")
            print("|---|" + "---|" * (args.rounds + 4))
            for rule, scores in result.rounds_by_rule.items():
                judged = [outside(s, r) for s, r in zip(scores, ref)]
                cells = [f"{s.saved_share:.1%} · {s.detours_per_episode:.2f}" + mark(j) for s, j in zip(scores, judged)]
                if rule == REFERENCE:
                    cells = [f"{c} [{interval(a)} · {interval(b)}]" for c, (a, b) in zip(cells, spreads)]
                saved, detours = sum(s.saved for s in scores), sum(s.detours for s in scores)
                stable = not any(j["saved"] or j["detours"] for j in judged)
                noisy_out = sum(j["saved_beyond_noise"] or j["detours_beyond_noise"] for j in judged)
                summary[rule]["saved"] += saved
                summary[rule]["detours"] += detours
                if rule != REFERENCE:
                    summary[rule]["deployments"] += 1
                    summary[rule]["stable"] += int(stable)
                    summary[rule]["stable_beyond_noise"] += int(noisy_out == 0)
                    summary[rule]["rounds"] += len(judged)
                    summary[rule]["rounds_out"] += sum(j["saved"] or j["detours"] for j in judged)
                    summary[rule]["rounds_out_beyond_noise"] += noisy_out
                print(f"| {rule} | " + " | ".join(cells) + f" | {saved} | {detours} | "
                      + ("- | - |" if rule == REFERENCE else f"{'yes' if stable else 'no'} | {noisy_out} |"))
                out.append({"app": app, "deployment": name, "rule": rule, "split": args.split,
                            "rounds": [{**s.as_dict(), **({} if rule == REFERENCE else {"outside": j})}
                                       for s, j in zip(scores, judged)],
                            "saved": saved, "detours": detours,
                            "stable": stable if rule != REFERENCE else None,
                            "rounds_outside_beyond_noise": noisy_out if rule != REFERENCE else None,
                            **({"spread": [{"saved": a.model_dump(), "detours": b.model_dump()} for a, b in spreads]}
                               if rule == REFERENCE else {})})
            if args.paired:
                paired = run_paired(sessions, rules, args.rounds, args.theta, folds=args.folds, env=args.env,
                                    recall_of=recall_of)
                print(f"\npaired, {args.folds}-fold cross-fit: each round's flow against the reference learned from the "
                      f"same sessions unserved, both replayed on the {len(sessions)} sessions they did not learn from; "
                      "saved · detours, rule − reference as a share of it [95%]; ✓ within 10%, ✗ off, ? unresolved")
                print("| rule | " + " | ".join(f"round {r + 1}" for r in range(args.rounds)) + " |")
                print("|---|" + "---|" * args.rounds)
                for rule, rounds in paired.items():
                    row_text, rows = report_paired(rounds, paired_summary[rule])
                    print(f"| {rule} | {row_text} |")
                    paired_out.append({"app": app, "deployment": name, "rule": rule, "split": args.split,
                                       "folds": args.folds, "rounds": rows})
    ref_total = summary[REFERENCE]
    print("\n| rule | saved, all rounds | vs reference | detours | vs reference | deployments with every round "
          "within 10% (strict) | rounds outside 10% | deployments with no round outside 10% and the reference's 95% "
          "| rounds outside both |\n|---|---|---|---|---|---|---|---|---|")
    for rule, s in summary.items():
        ds = (s["saved"] - ref_total["saved"]) / ref_total["saved"] if ref_total["saved"] else 0.0
        dd = (s["detours"] - ref_total["detours"]) / ref_total["detours"] if ref_total["detours"] else 0.0
        if rule == REFERENCE:
            print(f"| {rule} | {s['saved']} | | {s['detours']} | | | | | |")
            continue
        print(f"| {rule} | {s['saved']} | {ds:+.1%} | {s['detours']} | {dd:+.1%} | {s['stable']} of {s['deployments']} "
              f"| {s['rounds_out']} of {s['rounds']} | {s['stable_beyond_noise']} of {s['deployments']} "
              f"| {s['rounds_out_beyond_noise']} of {s['rounds']} |")
    def gap(rule: str) -> float:
        return max(abs(summary[rule]["saved"] / max(ref_total["saved"], 1) - 1),
                   abs(summary[rule]["detours"] / max(ref_total["detours"], 1) - 1))

    steadiest = min(rules, key=lambda r: (summary[r]["rounds_out_beyond_noise"], summary[r]["rounds_out"], gap(r)))
    closest = min(rules, key=gap)
    note = "" if args.split == "train" else " (test split: reported, not chosen by)"
    print(f"\nfewest rounds outside 10% and the reference's 95% (then fewest outside 10%): {steadiest}{note}")
    print(f"closest to the reference over all rounds (the larger of the two gaps): {closest}{note}")
    if args.paired:
        print(f"\npaired ({args.folds}-fold cross-fit), over all rounds of all deployments\n"
              "| rule | saved | vs reference | detours | vs reference | rounds within 10% (whole interval) | rounds off "
              "(whole interval) | unresolved | rounds whose point is within 10% | deployments with every point within "
              "10% | deployments with no round off |\n|---|---|---|---|---|---|---|---|---|---|---|")
        for rule, p in paired_summary.items():
            ds = p["saved"] / max(p["saved_reference"], 1) - 1
            dd = p["detours"] / max(p["detours_reference"], 1) - 1
            print(f"| {rule} | {p['saved']} | {ds:+.1%} | {p['detours']} | {dd:+.1%} | {p['within']} of {p['rounds']} "
                  f"| {p['off']} | {p['unresolved']} | {p['point_within']} of {p['rounds']} "
                  f"| {p['stable_point']} of {p['deployments']} | {p['never_off']} of {p['deployments']} |")
        best = min(rules, key=lambda r: (paired_summary[r]["off"], -paired_summary[r]["point_within"]))
        print(f"\npaired: fewest rounds off 10% (then most points within): {best}{note}")
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps({"split": args.split, "rounds": args.rounds, "theta": args.theta,
                                         "tool_recall": args.tool_recall, "blind": args.blind,
                                         "blind_share": args.blind_share, "ramp": args.ramp, "rows": out, "summary": summary,
                                         **({"paired": paired_out, "paired_summary": paired_summary}
                                            if args.paired else {})}, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
