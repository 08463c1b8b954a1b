"""Choose among served-loop variants by the paired score, leaving each deployment out in turn.

    python benchmarks/served_loop_choose.py NAME=loop.json[+loop3.json][@RULE] [NAME=... ...] [--rule weighed]

Each file is a `benchmarks/served_loop.py --paired --json` output of one variant (a rule, or a
rule with other knobs: `--tool-recall --blind --blind-share`). Files joined by `+` are the same
variant scored under different cuts (`--folds 2`, `--folds 3`): their tallies add up per
deployment, so a variant is chosen for holding under every cut, not for one cut's luck. A variant is better with fewer
rounds *off* (the paired difference's whole 95% interval beyond 10% in saves or detours), then
more rounds whose point is within 10% in both. Chosen on every deployment, and left out one at a
time (each deployment, an agent or a pooled AgentDojo suite, judged by the variant the other
deployments choose), so a knob is not picked for the deployment that scores it. Train split only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

Tally = dict[str, int]


def tallies(path: Path, rule: str) -> dict[str, Tally]:
    """Per deployment: rounds, rounds off, rounds whose point is within 10%."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SystemExit(f"{path}: not a served_loop.py --json output ({exc.__class__.__name__})") from None
    if not isinstance(data, dict) or "paired" not in data:
        raise SystemExit(f"{path}: no paired score in it (run served_loop.py with --paired)")
    out: dict[str, Tally] = {}
    for row in data["paired"]:
        if row["rule"] != rule:
            continue
        rounds = row["rounds"]
        out[f"{row['app']}, {row['deployment']}"] = {
            "rounds": len(rounds), "off": sum("off" in r["verdict"].values() for r in rounds),
            "point_within": sum(bool(r["point_within"]) for r in rounds)}
    return out


def added(parts: list[dict[str, Tally]]) -> dict[str, Tally]:
    """Per deployment, the tallies of several cuts of one variant summed (deployments every cut scored)."""
    common = set.intersection(*(set(p) for p in parts))
    return {d: {key: sum(p[d][key] for p in parts) for key in parts[0][d]} for d in sorted(common)}


def better(t: Tally) -> tuple[int, int]:
    return (t["off"], -t["point_within"])


def summed(by_deployment: dict[str, Tally], leave_out: str | None = None) -> Tally:
    total: Tally = {"rounds": 0, "off": 0, "point_within": 0}
    for name, t in by_deployment.items():
        if name != leave_out:
            for key in total:
                total[key] += t[key]
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="NAME=PATH[+PATH][@RULE] of served_loop.py --paired --json outputs (`+`: "
                        "the same variant under other cuts, added up)")
    parser.add_argument("--rule", default="weighed", help="The rule whose rows a file is read for, where no @RULE says.")
    args = parser.parse_args()
    variants: dict[str, dict[str, Tally]] = {}
    for item in args.variants:
        name, sep, rest = item.partition("=")
        paths, _, rule = rest.partition("@")
        files = [Path(p) for p in paths.split("+")]
        if not sep or not name or not all(f.is_file() for f in files):
            raise SystemExit(f"each variant is NAME=PATH[+PATH][@RULE] of existing files, not {item!r}")
        parts = [tallies(f, rule or args.rule) for f in files]
        for f, part in zip(files, parts):
            if not part:
                raise SystemExit(f"{f}: no paired rows of rule {rule or args.rule!r}")
        variants[name] = added(parts)
    print("| variant | rounds off | rounds whose point is within 10% |\n|---|---|---|")
    for name, by in variants.items():
        t = summed(by)
        print(f"| {name} | {t['off']} of {t['rounds']} | {t['point_within']} of {t['rounds']} |")
    overall = min(variants, key=lambda v: better(summed(variants[v])))
    print(f"\nchosen on every deployment: {overall}")
    deployments = sorted(set.intersection(*(set(by) for by in variants.values())))
    held: Tally = {"rounds": 0, "off": 0, "point_within": 0}
    print("\n| deployment left out | chosen by the others | its rounds off | its points within 10% |\n|---|---|---|---|")
    for d in deployments:
        chosen = min(variants, key=lambda v: better(summed(variants[v], leave_out=d)))
        t = variants[chosen][d]
        for key in held:
            held[key] += t[key]
        print(f"| {d} | {chosen} | {t['off']} of {t['rounds']} | {t['point_within']} of {t['rounds']} |")
    print(f"\nleft out in turn: {held['off']} of {held['rounds']} rounds off, {held['point_within']} of "
          f"{held['rounds']} points within 10%")


if __name__ == "__main__":
    main()
