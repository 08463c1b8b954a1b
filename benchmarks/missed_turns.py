"""Why a domain's ceiling turns went unsaved: each one, by the first reason that holds.

    python benchmarks/missed_turns.py --sessions DIR --app tau2/retail [--variant full] [--json OUT]

Learns each test agent's flow from the train split as `stretto ablate` does, replays the test
episodes from the record at θ = 0.3 with every candidate weighed, and takes each turn of the
read-only ceiling that was not saved. Its first unanswered read is put under the first of:

- `no result in reach`: no tool result came between the agent's last write (or the start) and
  the call, so no decision could make it: nothing a speculator that acts after tool results can save;
- `named after the last result`: the call takes a value the user first wrote after the last
  tool result in reach: the value was not there to bind at any decision;
- `weighed below θ`: the very call (tool and arguments) was a candidate at a decision in reach,
  scored under the threshold (its best score is shown);
- `made, claimed elsewhere`: the call was made but answered another call of the same key;
- `bound to other arguments`: its tool was weighed in reach, bound to other values;
- `not weighed`: its tool was never a candidate in reach (no binding, or not predicted).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from detour_sources import replay_arguments
from variant_diff import load_corpus
from stretto_core.evaluate.measure.ablation import assignments_for
from stretto_core.evaluate.replay.episode import CallInfo, PreparedEpisode
from stretto_core.evaluate.replay.record import RecordSource
from stretto_core.evaluate.replay.run import ReplayOptions, build_engine
from stretto_core.evaluate.replay.walk import Walk
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.learn.bindings.mention import MIN_WRITTEN
from stretto_core.sessions.model import UserMessage
from stretto_core.sessions.value_written import written_in
from stretto_core.sessions.values import argument_leaves, normalize

REASONS = ("no result in reach", "named after the last result", "weighed below θ", "made, claimed elsewhere",
           "bound to other arguments", "not weighed")


def responses_in_reach(walk: Walk, call: CallInfo) -> list[int]:
    """The numbers of the responses the engine decided at from which a lookup reaches `call`."""
    episode = walk.episode
    return [n for n, event_index in enumerate(walk.response_events)
            if event_index < call.issued_at and any(c.call_id == call.call_id
                                                    for c in episode.reachable_calls(call.key, event_index))]


def written_after(episode: PreparedEpisode, call: CallInfo, since: int) -> bool:
    """Whether the user first wrote a value of the call's arguments (`value_written`, as the
    mention checks ask it) in a message after event `since`."""
    values = [key for key in (normalize(leaf) for leaf in argument_leaves(call.arguments))
              if key is not None and len(key) >= MIN_WRITTEN]
    if not values:
        return False
    said = [(at, e.text.casefold()) for at, e in enumerate(episode.events[:call.issued_at]) if isinstance(e, UserMessage)]
    before = "\n".join(text for at, text in said if at <= since)
    after = "\n".join(text for at, text in said if at > since)
    return any(written_in(after, key) and not written_in(before, key) for key in values)


def reason_for(walk: Walk, call: CallInfo) -> tuple[str, float | None]:
    """The first reason of `REASONS` that holds for one unanswered read, and its best score if weighed."""
    reach = responses_in_reach(walk, call)
    if not reach:
        return REASONS[0], None
    last = walk.response_events[reach[-1]]
    in_reach = set(reach)
    weighed = [c for c in walk.candidates if c.response in in_reach]
    same = [c for c in weighed if c.key == call.key]
    if same:
        best = max(c.reach * c.binding for c in same)
        return (REASONS[3] if any(c.made for c in same) else REASONS[2]), best
    if written_after(walk.episode, call, last):
        return REASONS[1], None
    if any(c.tool == call.tool for c in weighed):
        return REASONS[4], None
    return REASONS[5], None


def missed_calls(walk: Walk) -> list[CallInfo]:
    """The first unanswered read of each ceiling turn the walk did not save."""
    saved = set(walk.saved_turns)
    out = []
    for n, turn in enumerate(walk.episode.turns):
        if not turn.ceiling or n in saved:
            continue
        calls = [walk.episode.calls[c] for c in turn.call_ids]
        first = next((c for c in calls if c.is_read and c.call_id not in walk.answered), None)
        if first is not None:
            out.append(first)
    return out


@dataclass
class Tally:
    """What a replay missed, by reason (and by reason and tool), with the ceiling it missed it from."""

    reasons: Counter[str] = field(default_factory=Counter)
    by_tool: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    scores: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    ceiling: int = 0
    saved: int = 0
    """Ceiling turns saved."""


def tally_reasons(assignments: Iterable[tuple[Any, Sequence[PreparedEpisode]]], options: ReplayOptions) -> Tally:
    """Replay each (flow, episodes) from the record with every candidate weighed, and tally each
    unsaved ceiling turn under its reason."""
    tally = Tally()
    for model, episodes in assignments:
        engine = build_engine(model, options)
        for episode in episodes:
            walk = Walk(episode, engine, RecordSource(), weigh=True).run()
            tally.ceiling += episode.ceiling_turns
            tally.saved += sum(1 for n in walk.saved_turns if episode.turns[n].ceiling)
            for call in missed_calls(walk):
                reason, score = reason_for(walk, call)
                tally.reasons[reason] += 1
                tally.by_tool[(reason, call.tool)] += 1
                if score is not None:
                    tally.scores[reason].append(score)
    return tally


def main() -> None:
    args = replay_arguments(__doc__)
    corpus = load_corpus(args.sessions)
    v = variant(args.variant)
    options = ReplayOptions(theta=args.theta, policy=v.policy, weigh=True, split="test", processes=1)
    tally = tally_reasons(assignments_for(corpus, args.app, v, VariantFlows()), options)
    reasons, by_tool, scores, ceiling, saved = tally.reasons, tally.by_tool, tally.scores, tally.ceiling, tally.saved
    missed = sum(reasons.values())
    print(f"{args.app}, {args.variant}: {saved} of {ceiling} ceiling turns saved, {missed} missed\n")
    print("| Reason | Turns | Share of missed | Best score (mean) | Tools |\n|---|---:|---:|---:|---|")
    rows: list[dict[str, Any]] = []
    for reason in REASONS:
        n = reasons.get(reason, 0)
        tools = {t: k for (r, t), k in sorted(by_tool.items(), key=lambda kv: -kv[1]) if r == reason}
        mean = sum(scores[reason]) / len(scores[reason]) if scores[reason] else None
        print(f"| {reason} | {n} | {n / max(1, missed):.0%} | {'' if mean is None else f'{mean:.2f}'} | "
              f"{', '.join(f'{t} {k}' for t, k in tools.items())} |")
        rows.append({"reason": reason, "turns": n, "mean_best_score": mean, "tools": tools})
    if args.json is not None:
        args.json.write_text(json.dumps({"app": args.app, "variant": args.variant, "ceiling": ceiling,
                                         "saved": saved, "reasons": rows}, indent=1), encoding="utf-8")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
