"""A flow, for a person: `flow show` renders it as Markdown, `flow diff` says what changed.

A site is the decision point after a tool result (its step symbol). For each site the flow
would serve, `show` lists the reads whose reach clears a floor, with the reach r, the plain
binding chance ρ, the score r·ρ, and where the arguments come from. `diff` flags the changes a
reviewer must see before a new flow serves: a new read tool, a lookup that now clears θ at a
site, a new binding source, a kind that changed; score drifts beyond a tolerance are listed too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stretto_core.learn.bindings.model import site_name
from stretto_core.learn.counts import START
from stretto_core.flow.ir import Flow
from stretto_core.flow.modes import describe_modes, mode_notes, served_modes
from stretto_core.flow.promotion import describe as describe_promotion
from stretto_core.learn.bindings import describe_table
from stretto_core.learn.steps import FAILED, parse_symbol

SHOW_FLOOR = 0.05
"""`flow show` lists reads whose reach at a site is at least this."""


def site_of_symbol(symbol: str) -> str:
    """The serving site (what per-site thresholds are keyed by) of a step symbol."""
    step = parse_symbol(symbol)
    return site_name(step.action, step.outcome == FAILED)


@dataclass
class SiteLookup:
    site: str
    tool: str
    reach: float
    rho: float
    sources: list[str]

    @property
    def score(self) -> float:
        return self.reach * self.rho


def plain_rho(flow: Flow, tool: str) -> tuple[float, list[str]]:
    """The binding chance of a lookup with no mention in play, and its first sources."""
    assert flow.table is not None
    lk = flow.table.lookups.get(tool)
    if lk is None or lk.kind == "unbound":
        return 0.0, []
    if lk.kind == "bare":
        return float(lk.bare_rho if lk.bare_rho is not None else 1.0), ["(no arguments)"]
    rhos: list[float] = []
    sources: list[str] = []
    for name, arg in sorted(lk.args.items()):
        by_class = arg.rho.get("*", {})
        rhos.append(by_class.get("plain", min(by_class.values()) if by_class else 0.0))
        if arg.mode == "constant":
            sources.append(f"{name} = {arg.constant!r}")
        elif arg.sources:
            sources.append(f"{name} ← {arg.sources[0]}")
    rho = min(rhos) if rhos else 0.0
    return rho, sources


def flow_sites(flow: Flow) -> set[str]:
    """The sites a per-site θ can be set at: `start`, each tool result the flow counted a step
    after (ok or failed), and any site the flow already has a θ for."""
    counts = flow.step_counts()
    counted = {site_of_symbol(ctx[-1]) for ctx in counts.habit_level(1)
               if ctx and ctx[-1] != START and not parse_symbol(ctx[-1]).is_reply}
    return {"start"} | counted | set(flow.thresholds)


def site_lookups(flow: Flow, floor: float = SHOW_FLOOR) -> list[SiteLookup]:
    """Every (site, read) whose reach after that single step clears `floor`, best first per site."""
    model = flow.backoff()
    counts = flow.step_counts()
    sites = sorted({ctx[-1] for ctx in counts.habit_level(1)
                    if ctx and ctx[-1] != START and not parse_symbol(ctx[-1]).is_reply})  # decisions follow tool results
    rows: list[SiteLookup] = []
    tools = flow.lookup_tools()  # once, not per site: each call rebuilds the counts and the manifest
    for site in sites:
        for tool in tools:
            r = model.reach([site], tool)
            if r < floor:
                continue
            rho, sources = plain_rho(flow, tool)
            rows.append(SiteLookup(site, tool, r, rho, sources))
    rows.sort(key=lambda x: (x.site, -x.score, x.tool))
    return rows


def show(flow: Flow, theta: float = 0.3, floor: float = SHOW_FLOOR) -> str:
    """The flow as Markdown: provenance, α, then per site its lookups with scores and sources."""
    lines = ["# Flow", ""]
    for src in flow.provenance.sources:
        lines.append(f"- {src.role}: {src.sessions} sessions (each weighs {src.weight:g}); agents "
                     f"{', '.join(src.agents) or '-'}; harnesses {', '.join(src.harnesses) or '-'}; "
                     f"apps {', '.join(src.apps) or '-'}")
    lines.append(f"- sessions per mode: {describe_modes(flow)}")
    lines += [f"- note: {note}" for note in mode_notes(flow, served_modes(flow))]
    if flow.alpha is not None:
        lines.append(f"- α = {flow.alpha.alpha:.3g} (90% interval {flow.alpha.lower:.3g}–{flow.alpha.upper:.3g})")
    if flow.reach_alpha is not None:
        ra = flow.reach_alpha
        lines.append(f"- the reach's α = {ra.alpha:.3g} (90% interval {ra.lower:.3g}–{ra.upper:.3g})")
    reads = flow.manifest.reads()
    lines += [f"- reads: {', '.join(reads) or 'none'}", f"- features: "
              f"{', '.join(f'{t}: ' + ', '.join(f.name for f in fs) for t, fs in sorted(flow.features.fields.items())) if flow.features and flow.features.fields else 'none'}",
              "", f"Lookups a site would make at θ = {theta:g} are marked ✓ (score r·ρ with the plain ρ).", ""]
    current = None
    for row in site_lookups(flow, floor):
        if row.site != current:
            current = row.site
            th = flow.thresholds.get(site_of_symbol(row.site))
            lines += ["", f"## after `{row.site}`" + (f" (θ = {th:g})" if th is not None else ""), "",
                      "| lookup | reach r | ρ | score | sources |", "|---|---|---|---|---|"]
        mark = " ✓" if row.score >= flow.thresholds.get(site_of_symbol(row.site), theta) else ""
        if flow.promotion is not None and flow.promotion.state_of(site_of_symbol(row.site), row.tool) == "held":
            mark = (" (held back: backed off to its chance of use)" if flow.promotion.evidence is not None
                    else " (held back: no lookup)")
        lines.append(f"| `{row.tool}`{mark} | {row.reach:.3f} | {row.rho:.3f} | {row.score:.3f} | "
                     f"{'; '.join(row.sources) or '-'} |")
    lines += calibration_lines(flow)
    if flow.promotion is not None:
        lines += describe_promotion(flow.promotion)
    if flow.table is not None:
        lines += ["", "## Bindings", "", "```", describe_table(flow.table).rstrip(), "```"]
    return "\n".join(lines) + "\n"


def calibration_lines(flow: Flow, moved: float = 0.05) -> list[str]:
    """The sites whose ρ the flow's calibration scales by `moved` or more (`flow/site_calibration.py`)."""
    cal = flow.site_calibration
    if cal is None:
        return []
    rows = [(s, s.factor(cal.prior)) for s in cal.sites]
    shown = sorted(((s, f) for s, f in rows if abs(f - 1.0) >= moved), key=lambda sf: -sf[0].weighed)
    lines = ["", "## Site calibration", "",
             f"{len(cal.sites)} sites counted over {cal.folds} folds, prior {cal.prior:g}; "
             f"{len(shown)} scale ρ by {moved:.0%} or more (scores above are as learned).", ""]
    if shown:
        lines += ["| lookup | site | source | class | weighed | used | mean score | factor |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| `{s.tool}` | `{s.site}` | {s.source} | {s.mention} | {s.weighed:g} | {s.used:g} | "
                  f"{s.score / s.weighed:.3f} | {f:.2f} |" for s, f in shown]
    return lines


@dataclass
class Diff:
    review: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)

    @property
    def needs_review(self) -> bool:
        return bool(self.review)

    def render(self) -> str:
        out = [f"! {x}" for x in self.review] + [f"  {x}" for x in self.info]
        return "\n".join(out) + ("\n" if out else "no changes\n")


def diff(old: Flow, new: Flow, theta: float = 0.3, tolerance: float = 0.05) -> Diff:
    """What changed from `old` to `new`; `review` holds the changes a person must approve."""
    d = Diff()
    for tool in sorted(set(old.manifest.tools) | set(new.manifest.tools)):
        a, b = old.manifest.kind(tool), new.manifest.kind(tool)
        if a != b:
            (d.review if b.value == "read" else d.info).append(f"{tool}: kind {a.value} → {b.value}")
    for tool in sorted(set(new.manifest.reads()) - set(old.manifest.reads())):
        d.review.append(f"new read tool {tool}")
    before = {(r.site, r.tool): r for r in site_lookups(old, 0.0)}
    after = {(r.site, r.tool): r for r in site_lookups(new, 0.0)}
    for key in sorted(set(before) | set(after)):
        a_row, b_row = before.get(key), after.get(key)
        a_score = a_row.score if a_row else 0.0
        b_score = b_row.score if b_row else 0.0
        a_on = a_score >= old.thresholds.get(site_of_symbol(key[0]), theta)
        b_on = b_score >= new.thresholds.get(site_of_symbol(key[0]), theta)
        if b_on and not a_on:
            d.review.append(f"after {key[0]}: now looks up {key[1]} (score {a_score:.3f} → {b_score:.3f})")
        elif a_on and not b_on:
            d.info.append(f"after {key[0]}: no longer looks up {key[1]} (score {a_score:.3f} → {b_score:.3f})")
        elif abs(a_score - b_score) > tolerance and (a_on or b_on):
            d.info.append(f"after {key[0]}: {key[1]} score {a_score:.3f} → {b_score:.3f}")
    for tool in sorted(set(new.manifest.reads()) | set(old.manifest.reads())):
        old_src = set(plain_rho(old, tool)[1]) if old.table and tool in old.table.lookups else set()
        new_src = set(plain_rho(new, tool)[1]) if new.table and tool in new.table.lookups else set()
        for src in sorted(new_src - old_src):
            d.review.append(f"{tool}: new binding source {src}")
    for site in sorted(set(old.thresholds) | set(new.thresholds)):
        if old.thresholds.get(site) != new.thresholds.get(site):
            d.review.append(f"threshold at {site}: {old.thresholds.get(site)} → {new.thresholds.get(site)}")
    _calibration_diff(old, new, tolerance, d)
    _promotion_diff(old, new, d)
    return d


def _promotion_diff(old: Flow, new: Flow, d: Diff) -> None:
    """A site lookup newly promoted is for review (it will make lookups); one held back, for information."""
    if old.promotion is None and new.promotion is None:
        return
    keys = {s.key for p in (old.promotion, new.promotion) if p is not None for s in p.sites}
    for site, tool in sorted(keys):
        was = old.promotion.state_of(site, tool) if old.promotion is not None else "promoted"
        now = new.promotion.state_of(site, tool) if new.promotion is not None else "promoted"
        if was == now:
            continue
        if now == "promoted":
            d.review.append(f"after {site}: {tool} newly promoted (it makes lookups again)")
        else:
            scaled = new.promotion is not None and new.promotion.evidence is not None
            d.info.append(f"after {site}: {tool} held back ({'backed off' if scaled else 'no lookup'})")


def _calibration_diff(old: Flow, new: Flow, tolerance: float, d: Diff) -> None:
    """A site's factor raised is for review (it can make more lookups); lowered, for information."""
    a = old.site_calibration.factors() if old.site_calibration else {}
    b = new.site_calibration.factors() if new.site_calibration else {}
    for key in sorted(set(a) | set(b)):
        fa, fb = a.get(key, 1.0), b.get(key, 1.0)
        if abs(fa - fb) > tolerance:
            (d.review if fb > fa else d.info).append(
                f"after {key[1]}: {key[0]} from {key[2]} ({key[3]}) calibrated ×{fa:.2f} → ×{fb:.2f}")
