"""Per read tool: the agent's own calls in a recorded batch beside the calls each rule teaches from the same batch served.

    python benchmarks/served_teaching_counts.py APP DEPLOYMENT [--rules said,weighed] [--rounds 3] [--split train]

Runs the served loop's first rounds on one deployment (`benchmarks/served_loop.py`'s batches; the
flow relearned under the last rule named) and prints, per round and tool, how many read calls the
agent made in the recorded batch, how many lookups the flow served there, and how many calls each
rule teaches from the served batch. A rule that teaches a tool about as often as the agent called
it is not over-teaching it by count; detours that grow anyway come from *where* the taught call
sits (at the lookup's site, not where the agent made it). Train split by default.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Iterable

from lifecycle_data import DEFAULT_CACHE
from served_loop import deployments
from stretto_core.evaluate.served_loop import batches_of, serve_batch
from stretto_core.flow.ir import learn
from stretto_core.learn.served import RULES, teaching_sessions
from stretto_core.sessions.model import LLMTurn, Lookup, Session


def read_calls(sessions: Iterable[Session]) -> Counter[str]:
    """The agent's read calls per tool (taught lookups are inferred calls, and count)."""
    out: Counter[str] = Counter()
    for s in sessions:
        manifest = s.header.manifest
        for e in s.events:
            if isinstance(e, LLMTurn):
                out.update(c.tool for c in e.calls if manifest is None or manifest.is_read(c.tool))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("app")
    parser.add_argument("deployment")
    parser.add_argument("--rules", default="said,weighed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--split", default="train", choices=("train", "test"))
    args = parser.parse_args()
    rules = args.rules.split(",")
    if any(r not in RULES for r in rules):
        parser.error(f"--rules are among {', '.join(RULES)}, not {args.rules!r}")
    if args.rounds < 1:
        parser.error("--rounds must be 1 or more")
    try:
        by_name = deployments(args.app, args.split, DEFAULT_CACHE, None)
    except Exception as exc:  # an unknown app or a missing data cache: one line, no traceback
        raise SystemExit(f"cannot load {args.app!r}: {exc}") from None
    if args.deployment not in by_name:
        raise SystemExit(f"no deployment {args.deployment!r} in {args.app}: one of {', '.join(by_name)}")
    batches = batches_of(by_name[args.deployment], 5)
    taught = list(batches[0])
    flow = learn(taught)
    for r in range(1, min(args.rounds, len(batches) - 1) + 1):
        served, score = serve_batch(flow, batches[r], 0.3)
        lookups = Counter(e.tool for s in served for e in s.events if isinstance(e, Lookup) and not e.abandoned)
        recorded = read_calls(batches[r])
        per_rule = {rule: read_calls(teaching_sessions(served, rule)) for rule in rules}
        print(f"\nround {r + 1}: {score.saved} turns saved, {score.detours} detours")
        print("| tool | agent's calls, recorded | lookups served | " + " | ".join(f"taught by {x}" for x in rules)
              + " |\n|---|---|---|" + "---|" * len(rules))
        for tool in sorted(recorded | lookups):
            print(f"| {tool} | {recorded[tool]} | {lookups[tool]} | "
                  + " | ".join(str(per_rule[x][tool]) for x in rules) + " |")
        taught += list(teaching_sessions(served, rules[-1]))
        flow = learn(taught)


if __name__ == "__main__":
    main()
