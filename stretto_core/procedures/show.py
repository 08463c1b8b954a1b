"""A procedure as Markdown a person can review: provenance, actions, trees as nested rules, checks."""

from __future__ import annotations

from stretto_core.procedures.ir import Leaf, Node, Procedure, Split

MAX_OPTIONS_SHOWN = 3

SOURCE_NOTES = {"recorded": " (recorded agents' sessions)",
                "demonstration": " (the hand-written demonstrator's sessions, not an agent's)"}
"""What each kind of source is, said beside its counts: a reviewer must not take one for the other."""


def compiled_from(procedure: Procedure) -> str:
    """What a procedure was compiled from, by body: recorded agents' sessions or the demonstrator's."""
    parts = []
    for s in procedure.provenance.sources:
        who = {"recorded": "recorded agents", "demonstration": "the hand-written demonstrator"}.get(s.kind, s.kind)
        agents = f" ({', '.join(s.agents)})" if s.agents and s.kind == "recorded" else ""
        parts.append(f"{s.sessions} sessions of {s.tasks} tasks by {who}{agents}")
    return "; ".join(parts) or "no recorded source"


def _leaf_text(leaf: Leaf) -> str:
    shown = [f"{o.action} ×{o.count}" for o in leaf.options[:MAX_OPTIONS_SHOWN]]
    more = len(leaf.options) - MAX_OPTIONS_SHOWN
    return " → " + ("; else ".join(shown) if shown else "(nothing: hand back)") + (f"; +{more} more" if more > 0 else "")


def _node_lines(node: Node, indent: int, out: list[str]) -> None:
    pad = "  " * indent
    if isinstance(node, Split):
        out.append(f"{pad}- if `{node.feature}`:")
        _node_lines(node.yes, indent + 1, out)
        out.append(f"{pad}- else:")
        _node_lines(node.no, indent + 1, out)
    else:
        out.append(f"{pad}-{_leaf_text(node)}")


def show(procedure: Procedure, site: str | None = None) -> str:
    """The whole procedure (or one site's tree) as Markdown."""
    p = procedure
    out = [f"# Procedure for {p.domain} (stretto_procedure {p.stretto_procedure})", ""]
    if site is None:
        out.append("## Provenance")
        for s in p.provenance.sources:
            agents = f" ({', '.join(s.agents)})" if s.agents else ""
            out.append(f"- {s.kind}{SOURCE_NOTES.get(s.kind, '')}: {s.sessions} sessions of {s.tasks} tasks{agents}")
        out.append(f"- {len(p.provenance.sessions)} sessions, {len(p.provenance.tasks)} tasks in all "
                   "(listed in the file's `provenance`)")
        out += ["", "## Run", f"- at most {p.max_calls} calls; handoff tool: `{p.handoff}`",
                f"- guard: no read again before a write ({p.guard.no_repeated_read}), "
                f"no write again before another write ({p.guard.no_repeated_write})",
                f"- fallback within the procedure: {p.fallback} (writes of precision ≥ {p.fallback_precision}, "
                f"then probes: {', '.join(f'`{a}`' for a in p.probes) or 'none'})", "",
                f"## Actions ({len(p.actions)})"]
        for key, action in p.actions.items():
            needs = ""
            if action.requires:
                needs = (f"; only where {', '.join(f'`{f}`' for f in action.requires)}"
                         f" (precision {action.precision})")
            out.append(f"- `{key}` ×{action.count}{needs}")
        out += ["", f"## Checks ({len(p.checks)})"]
        for c in p.checks:
            out.append(f"- when the ticket says `{c.phrase}`: `{c.probe}` must show {c.contains or 'anything'}"
                       f" and none of {len(c.lacks)} lines ({c.support} episodes)")
        out += ["", f"## Trees ({len(p.trees)} sites)"]
    for name, tree in p.trees.items():
        if site is not None and name != site:
            continue
        accuracy = "n/a" if tree.cv_accuracy is None else f"{tree.cv_accuracy:.3f}"
        out += ["", f"### after `{name}`: {tree.examples} steps of {tree.tasks} tasks, depth {tree.depth}, "
                    f"held-out accuracy {accuracy}"]
        _node_lines(tree.root, 0, out)
    return "\n".join(out) + "\n"
