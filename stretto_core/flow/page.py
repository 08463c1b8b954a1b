"""The review page: one static HTML file to read before trusting a flow (`stretto review`).

Everything is inline (styles, the SVG graph and charts): the file opens from disk with no server
and no network. It shows, top first: what needs review (the committed flow against a staged
one), each site's lookups with their reach, binding chance and score against θ, the evidence the
recorded sessions give (lookups made, used, repeated, refused), each site lookup's promotion
(`stretto flow promote`: would-be lookups, used, tasks, the 95% interval of its use rate, its
posterior use rate drawn against θ*, promoted or held back), LLM turns per day on served
sessions against the holdout arm, the sessions themselves, and the flow drawn as a graph (after
tool X → lookup Y, bound from Z). `mermaid(flow)` is the same graph as Mermaid text.
"""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Sequence

from stretto_core.flow.ir import Flow
from stretto_core.flow.promotion import Promotion, SitePromotion, wilson_lower
from stretto_core.flow.review import SiteLookup, diff, site_lookups, site_of_symbol
from stretto_core.sessions.model import LLMTurn, Lookup, Refusal, Session, ToolResult

_STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ddd}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #eee;padding:3px 8px;text-align:left}td.n{text-align:right}
.review{background:#fff3cd;padding:.5em 1em}.ok{color:#2a7}.no{color:#b33}svg text{font:12px sans-serif}"""


def _e(value: Any) -> str:
    return html.escape(str(value))


@dataclass
class Evidence:
    """What recorded sessions say of one (site tool, lookup tool): made, used again, refused."""

    made: int = 0
    repeated: int = 0
    failed: int = 0


def evidence(sessions: Sequence[Session]) -> dict[tuple[str, str], Evidence]:
    """Per (triggering tool, looked-up tool): lookups made, repeated by the agent (a detour), failed."""
    out: dict[tuple[str, str], Evidence] = defaultdict(Evidence)
    for session in sessions:
        tool_of = {e.call_id: e.tool for e in session.events if isinstance(e, ToolResult)}
        repeated = {e.repeats for e in session.events if isinstance(e, ToolResult) and e.repeats}
        for e in session.events:
            if isinstance(e, Lookup):
                cell = out[(tool_of.get(e.after_call_id or "", "?"), e.tool)]
                cell.made += 1
                cell.repeated += e.call_id in repeated
                cell.failed += bool(e.error)
    return out


def turns_by_day(sessions: Sequence[Session]) -> dict[str, dict[str, tuple[int, int]]]:
    """day -> mode (served / holdout / …) -> (sessions, LLM turns)."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for s in sessions:
        day = s.header.started_at.date().isoformat() if s.header.started_at else "undated"
        mode = str(getattr(s.header, "mode", None) or "record")
        cell = out[day][mode]
        cell[0] += 1
        cell[1] += sum(1 for e in s.events if isinstance(e, LLMTurn))
    return {d: {m: (v[0], v[1]) for m, v in modes.items()} for d, modes in sorted(out.items())}


def graph_svg(rows: Sequence[SiteLookup], theta: float) -> str:
    """The flow as a graph: each site (a tool result) on the left, an arrow to each lookup it may
    make on the right, labelled with the score; arrows at or above θ drawn solid."""
    sites = sorted({r.site for r in rows})
    tools = sorted({r.tool for r in rows})
    height = 40 + 28 * max(len(sites), len(tools), 1)
    y_site = {s: 30 + 28 * i for i, s in enumerate(sites)}
    y_tool = {t: 30 + 28 * i for i, t in enumerate(tools)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="flow-graph" width="900" height="{height}" '
             f'role="img" aria-label="the flow as a graph">']
    for r in rows:
        solid = r.score >= theta
        colour, dash = ("#2a7", "") if solid else ("#bbb", ' stroke-dasharray="4 3"')
        parts.append(f'<line class="edge" x1="300" y1="{y_site[r.site]}" x2="600" y2="{y_tool[r.tool]}" '
                     f'stroke="{colour}" stroke-width="{1 + 3 * r.score:.2f}"{dash}><title>after {_e(r.site)}: '
                     f'{_e(r.tool)} score {r.score:.2f}</title></line>')
    for s, y in y_site.items():
        parts.append(f'<text class="site" x="290" y="{y + 4}" text-anchor="end">after {_e(s)}</text>')
    for t, y in y_tool.items():
        parts.append(f'<text class="lookup" x="610" y="{y + 4}">{_e(t)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def bars_svg(days: dict[str, dict[str, tuple[int, int]]]) -> str:
    """LLM turns per session, per day, each mode a bar (served against the holdout arm)."""
    modes = sorted({m for v in days.values() for m in v})
    colours = {"served": "#2a7", "holdout": "#888", "shadow": "#c90", "record": "#57a"}
    rates = [(d, m, v[m][1] / v[m][0]) for d, v in days.items() for m in modes if m in v and v[m][0]]
    top = max((r for _, _, r in rates), default=1.0) or 1.0
    width = max(300, 40 + 24 * len(rates))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="turns-chart" width="{width}" height="200" role="img" '
             f'aria-label="LLM turns per session by day and arm">']
    for i, (day, mode, rate) in enumerate(rates):
        h = 150 * rate / top
        parts.append(f'<rect class="bar" x="{30 + 24 * i}" y="{170 - h:.1f}" width="18" height="{h:.1f}" '
                     f'fill="{colours.get(mode, "#999")}"><title>{_e(day)} {_e(mode)}: {rate:.2f} turns a session'
                     f'</title></rect>')
    parts.append('<line x1="25" y1="170" x2="%d" y2="170" stroke="#333"/>' % (width - 5))
    legend = " ".join(f'<tspan fill="{colours.get(m, "#999")}">■ {_e(m)}</tspan>' for m in modes)
    parts.append(f'<text x="30" y="192">{legend}</text></svg>')
    return "".join(parts)


def wilson_interval(used: float, n: float) -> tuple[float, float]:
    """The 95% Wilson interval of a use rate: the promotion's lower bound, and the upper one by
    symmetry (the upper bound of used in n is 1 minus the lower bound of the unused)."""
    if n <= 0:
        return 0.0, 1.0
    return wilson_lower(used, n), 1.0 - wilson_lower(n - used, n)


def promotion_svg(promotion: Promotion) -> str:
    """Each judged site lookup's posterior use rate (dot) and 95% interval (whisker) against θ*
    (the vertical line): a held one is red, a promoted one green."""
    judged = [s for s in promotion.sites if s.lookups > 0]
    height = 40 + 22 * max(len(judged), 1)
    x0, width = 330, 500

    def x(rate: float) -> float:
        return x0 + width * min(max(rate, 0.0), 1.0)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="posterior-chart" width="900" height="{height}" role="img" '
             f'aria-label="each site lookup\'s posterior use rate against theta star">']
    for i, s in enumerate(judged):
        y = 28 + 22 * i
        low, high = wilson_interval(s.used, s.lookups)
        colour = "#b33" if s.state == "held" else "#2a7"
        parts.append(f'<g class="posterior" data-state="{s.state}"><title>after {_e(s.site)}: {_e(s.tool)} posterior '
                     f'{s.posterior or 0:.3f}, 95% interval {low:.2f}–{high:.2f}, {s.used:g}/{s.lookups:g} used in '
                     f'{s.tasks} tasks: {s.state}</title>'
                     f'<text x="{x0 - 10}" y="{y + 4}" text-anchor="end">{_e(s.site)} → {_e(s.tool)}</text>'
                     f'<line x1="{x(low):.1f}" y1="{y}" x2="{x(high):.1f}" y2="{y}" stroke="{colour}" stroke-width="2"/>'
                     f'<circle cx="{x(s.posterior or 0):.1f}" cy="{y}" r="5" fill="{colour}"/></g>')
    theta = x(promotion.theta_star)
    parts.append(f'<line id="theta-star" x1="{theta:.1f}" y1="12" x2="{theta:.1f}" y2="{height - 18}" stroke="#333" '
                 f'stroke-dasharray="5 3"/><text x="{theta:.1f}" y="{height - 4}" text-anchor="middle">'
                 f'θ* = {promotion.theta_star:.3g}</text>')
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 4}" text-anchor="middle" fill="#888">{tick:g}</text>')
    parts.append("</svg>")
    return "".join(parts)


def promotion_cells(flow: Flow, row: SiteLookup) -> str:
    """A sites-table row's promotion cells: state, would-be, used, tasks, 95% interval, posterior vs θ*."""
    p = flow.promotion
    if p is None:
        return '<td class="state">not judged</td>' + "<td class=n>–</td>" * 5
    key = (site_of_symbol(row.site), row.tool)
    judged: SitePromotion | None = next((s for s in p.sites if s.key == key), None)
    state = judged.state if judged is not None else p.unscored
    label = f'<span class="{"no" if state == "held" else "ok"}">{"held back" if state == "held" else "promoted"}</span>'
    if judged is None:
        return f'<td class="state">{label} (no evidence)</td>' + "<td class=n>–</td>" * 5
    low, high = wilson_interval(judged.used, judged.lookups)
    post = judged.posterior or 0.0
    versus = "≥" if post >= p.theta_star else "<"
    return (f'<td class="state">{label}</td><td class=n>{judged.lookups:g}</td><td class=n>{judged.used:g}</td>'
            f"<td class=n>{judged.tasks}</td><td class=n>{low:.2f}–{high:.2f}</td>"
            f'<td class="n posterior">{post:.3f} {versus} {p.theta_star:.3g}</td>')


def promotion_summary(p: Promotion) -> str:
    """One paragraph: the bar, what it judged on, how many site lookups it held back."""
    held = sum(1 for s in p.sites if s.state == "held")
    bar = (f"posterior use rate (the flow's score weighs as {p.prior_weight:g} lookups) ≥ θ* = {p.theta_star:.3g}"
           if p.bar == "posterior" else "strict (used ≥ 0.7, Wilson lower bound ≥ 0.5, ≥ 3 tasks)")
    return (f'<p id="promotion-summary">Promotion (<code>stretto flow promote</code>): bar {_e(bar)}; judged on '
            f"{p.sessions} clean sessions; {held} of {len(p.sites)} site lookups held back (they make no lookup); "
            f"a site lookup with no evidence is {_e(p.unscored)}.</p>")


def mermaid(flow: Flow, theta: float = 0.3) -> str:
    """The flow's graph as Mermaid text (`stretto flow show --format mermaid`)."""
    lines = ["flowchart LR"]
    ids: dict[str, str] = {}

    def node(name: str, prefix: str) -> str:
        key = f"{prefix}:{name}"
        if key not in ids:
            ids[key] = f"{prefix}{len(ids)}"
        return ids[key]

    for r in site_lookups(flow):
        a, b = node(r.site, "s"), node(r.tool, "l")
        arrow = "-->" if r.score >= theta else "-.->"
        lines.append(f'  {a}["after {r.site}"] {arrow}|{r.score:.2f}| {b}["{r.tool}"]')
    return "\n".join(lines) + "\n"


def render_review(flow: Flow, *, staged: Flow | None = None, sessions: Sequence[Session] = (),
                  theta: float = 0.3, title: str = "stretto review", log: str = "") -> str:
    """The whole page as one HTML string."""
    shown = staged or flow
    rows = site_lookups(shown)
    seen = evidence(sessions)
    body = [f"<h1>{_e(title)}</h1>", f"<p>θ = {theta:g}; {len(rows)} site lookups; {len(sessions)} sessions read.</p>"]
    if staged is not None:
        d = diff(flow, staged, theta)
        body.append('<h2 id="needs-review">Needs review</h2>')
        body.append('<div class="review"><ul>' + "".join(f"<li>{_e(x)}</li>" for x in d.review) + "</ul></div>"
                    if d.review else "<p class=ok>Nothing in the staged flow needs review.</p>")
        if d.info:
            body.append("<ul>" + "".join(f"<li>{_e(x)}</li>" for x in d.info) + "</ul>")
    body.append('<h2 id="graph">The flow as a graph</h2>' + graph_svg(rows, theta))
    if shown.promotion is not None:
        body.append('<h2 id="promotion">Promotion: posterior use rate against θ*</h2>'
                    + promotion_summary(shown.promotion) + promotion_svg(shown.promotion))
    body.append('<h2 id="sites">Sites and their lookups</h2><table id="sites-table"><tr><th>after</th><th>lookup</th>'
                "<th>reach</th><th>ρ</th><th>score</th><th>served</th><th>bound from</th><th>made</th>"
                "<th>repeated</th><th>failed</th><th>promotion</th><th>would-be</th><th>used</th><th>tasks</th>"
                "<th>95% interval</th><th>posterior vs θ*</th></tr>")
    for r in rows:
        ev = seen.get((r.site.split("/")[0], r.tool), Evidence())
        serves = r.score >= shown.thresholds.get(site_of_symbol(r.site), theta) and \
            (shown.promotion is None or shown.promotion.state_of(site_of_symbol(r.site), r.tool) != "held")
        served = '<span class="ok">yes</span>' if serves else '<span class="no">no</span>'
        body.append(f'<tr class="site-row"><td>{_e(r.site)}</td><td>{_e(r.tool)}</td><td class=n>{r.reach:.2f}</td>'
                    f"<td class=n>{r.rho:.2f}</td><td class=n>{r.score:.2f}</td><td>{served}</td>"
                    f"<td>{_e('; '.join(r.sources))}</td><td class=n>{ev.made}</td><td class=n>{ev.repeated}</td>"
                    f"<td class=n>{ev.failed}</td>{promotion_cells(shown, r)}</tr>")
    body.append("</table>")
    days = turns_by_day(sessions)
    if days:
        body.append('<h2 id="turns">LLM turns per session, by day and arm</h2>' + bars_svg(days))
    if sessions:
        body.append('<h2 id="sessions">Sessions</h2><table id="sessions-table"><tr><th>session</th><th>mode</th>'
                    "<th>LLM turns</th><th>lookups</th><th>repeats</th><th>refusals</th></tr>")
        for s in sessions[:500]:
            kinds = Counter(e.kind for e in s.events)
            repeats = sum(1 for e in s.events if isinstance(e, ToolResult) and e.repeats)
            refusals = sum(1 for e in s.events if isinstance(e, Refusal))
            body.append(f"<tr><td>{_e(s.session_id)}</td><td>{_e(getattr(s.header, 'mode', None) or '')}</td>"
                        f"<td class=n>{kinds['llm_turn']}</td><td class=n>{kinds['lookup']}</td>"
                        f"<td class=n>{repeats}</td><td class=n>{refusals}</td></tr>")
        body.append("</table>")
    if log:
        body.append(f'<h2 id="versions">Versions</h2><pre>{_e(log)}</pre>')
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>\n")
