"""Compile a procedure from successful solo episodes: actions, one tree per site, checks.

1. Every call is named by its action (`actions.assign_actions`): its tool and the provenance of
   each argument.
2. Every step of every episode is an example at its site (the tool that just returned, marked
   failed on an error, or `start`): the state's features and the action taken next, or `stop`
   after the last call of an episode that ended without handing off.
3. Each site's tree is grown by ID3 to the depth cross-validation over tasks chooses.
4. The checks are learned from what resolved episodes read after their last write.
5. Each write gets a precondition (`conditions.learn_preconditions`): what every state it was
   demonstrated in showed; the run makes it nowhere else, and (with `fallback`) makes a write
   whose precondition holds, or tests the outcome, where a leaf has nothing it may make.

Only the episodes given are used: the caller decides which are successful and never passes one
of a test task (`stretto procedure compile` refuses them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from stretto_core.procedures.actions import assign_actions
from stretto_core.procedures.checks import learn_checks
from stretto_core.procedures.conditions import learn_preconditions, precision
from stretto_core.procedures.episodes import Episode
from stretto_core.procedures.ir import STOP, Procedure, Provenance, Source, Tree
from stretto_core.procedures.state import RunState, ticket_words
from stretto_core.procedures.tree import FOLDS, MAX_DEPTH, Example, choose_depth, grow

CALL_HEADROOM = 2
"""A run may make this many times the longest training episode's calls before it hands back."""


@dataclass
class CompileOptions:
    """How deep trees may grow, how many folds choose the depth, the handoff tool, and whether
    arguments are bound by provenance (the default) or as constants."""

    max_depth: int = MAX_DEPTH
    folds: int = FOLDS
    handoff: str | None = None
    constants_only: bool = False
    """Bind every argument to the value demonstrated (an ablation of provenance)."""
    preconditions: bool = True
    """Learn each write's precondition (False: a leaf's write is made in any state)."""
    ticket_preconditions: bool = False
    """Also require the ticket words every demonstration of a write had (train CV chose False)."""
    fallback: bool = True
    """Where a leaf has nothing it may make, fall back within the procedure before handing back."""
    fallback_precision: float = 0.5
    """The least precision of a write's precondition for the fallback to make it."""


def find_handoff(episodes: list[Episode]) -> str | None:
    """A tool neither read nor write that, whenever it was called, was the episode's last call."""
    last_only: dict[str, bool] = {}
    for e in episodes:
        for i, step in enumerate(e.steps):
            if step.kind in ("read", "write"):
                continue
            last_only[step.tool] = last_only.get(step.tool, True) and i == len(e.steps) - 1
    found = sorted(t for t, ok in last_only.items() if ok)
    return found[0] if len(found) == 1 else None


def ticket_vocab(episodes: list[Episode]) -> list[str]:
    """Ticket words and pairs some but not all training tickets have: only they can split."""
    tickets = sorted({e.ticket for e in episodes})
    counts: Counter[str] = Counter(w for t in tickets for w in set(ticket_words(t)))
    return sorted(w for w, c in counts.items() if c < len(tickets))


def examples_by_site(episodes: list[Episode], vocab: list[str]) -> dict[str, list[Example]]:
    """The training examples of each site (steps' action keys must already be assigned)."""
    words = set(vocab)
    by_site: dict[str, list[Example]] = defaultdict(list)
    for e in episodes:
        state = RunState(e.ticket, e.steps)
        for t in range(len(e.steps) + 1):
            if t == len(e.steps) and e.ending == "handoff":
                break
            prefix = state.prefix(t)
            label = e.steps[t].action if t < len(e.steps) else STOP
            by_site[prefix.site()].append(Example(frozenset(prefix.features(words)), label or STOP, e.task_id))
    return by_site


def compile_procedure(episodes: list[Episode], domain: str, options: CompileOptions | None = None) -> Procedure:
    """The procedure of these episodes (pass only successful ones, of training tasks)."""
    options = options or CompileOptions()
    if not episodes:
        raise ValueError("no episodes to compile from")
    handoff = options.handoff or find_handoff(episodes)
    for e in episodes:
        if handoff and e.steps and e.steps[-1].tool == handoff:
            e.ending = "handoff"
    actions, _ = assign_actions(episodes, options.constants_only)
    vocab = ticket_vocab(episodes)
    trees: dict[str, Tree] = {}
    for site, examples in sorted(examples_by_site(episodes, vocab).items()):
        depth, accuracy = choose_depth(examples, options.max_depth, options.folds)
        trees[site] = Tree(site=site, examples=len(examples), tasks=len({x.group for x in examples}),
                           depth=depth, cv_accuracy=None if accuracy is None else round(accuracy, 4),
                           root=grow(examples, depth))
    kinds: dict[str, str] = {}
    for e in episodes:
        for step in e.steps:
            kinds.setdefault(step.tool, step.kind)
    writes = {t for t, k in kinds.items() if k == "write"}
    requires = learn_preconditions(episodes, vocab, writes, options.ticket_preconditions) if options.preconditions else {}
    if options.preconditions:
        for e in episodes:
            for key, n in Counter(s.action for s in e.steps if s.action).items():
                actions[key].most_per_run = max(actions[key].most_per_run, n)
    shares = precision(episodes, vocab, requires) if requires else {}
    for key, needed in requires.items():
        actions[key].requires = needed
        actions[key].precision = shares.get(key)
    used = _used_words(trees) | {f[len("ticket: "):] for needed in requires.values() for f in needed
                                 if f.startswith("ticket: ")}
    return Procedure(
        domain=domain,
        provenance=_provenance(episodes),
        reads=sorted(t for t, k in kinds.items() if k == "read"),
        writes=sorted(t for t, k in kinds.items() if k == "write"),
        handoff=handoff,
        max_calls=CALL_HEADROOM * max(len(e.steps) for e in episodes) + 2,
        fallback=options.fallback,
        fallback_precision=options.fallback_precision,
        probes=_probes(episodes, writes) if options.fallback else [],
        vocab=sorted(used),
        actions=dict(sorted(actions.items())),
        trees=trees,
        checks=learn_checks(episodes, vocab),
    )


def _probes(episodes: list[Episode], writes: set[str]) -> list[str]:
    """What a run looks at when it is stuck: reads made after some write (they see what a write
    changed), then reads only some episodes made (they look into one kind of problem), each
    most often first. Reads every episode made before any write (the customer's records) are
    not probes: the run has made them already."""
    after: Counter[str] = Counter()
    some: Counter[str] = Counter()
    episodes_with: Counter[str] = Counter()
    for e in episodes:
        wrote = False
        for step in e.steps:
            wrote = wrote or step.tool in writes
            if step.tool not in writes and step.kind == "read" and step.action:
                (after if wrote else some)[step.action] += 1
        episodes_with.update({s.action for s in e.steps if s.action})
    ranked = [a for a, _ in sorted(after.items(), key=lambda kv: (-kv[1], kv[0]))]
    ranked += [a for a, _ in sorted(some.items(), key=lambda kv: (-kv[1], kv[0]))
               if a not in after and episodes_with[a] < len(episodes)]
    return ranked


def _used_words(trees: dict[str, Tree]) -> set[str]:
    words: set[str] = set()

    def walk(node) -> None:
        if getattr(node, "kind", "") == "split":
            if node.feature.startswith("ticket: "):
                words.add(node.feature[len("ticket: "):])
            walk(node.yes)
            walk(node.no)

    for tree in trees.values():
        walk(tree.root)
    return words


def _provenance(episodes: list[Episode]) -> Provenance:
    by_source: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        by_source[e.source].append(e)
    sources = [Source(kind=kind, sessions=len(es), tasks=len({e.task_id for e in es}),
                      agents=sorted({e.agent for e in es if e.agent}))
               for kind, es in sorted(by_source.items())]
    return Provenance(sources=sources, sessions=sorted(e.session_id for e in episodes),
                      tasks=sorted({e.task_id for e in episodes}))
