"""The review page (issue 27, item 5), rendered by a real browser: headless Chromium (Debian's
`chromium`) loads the one static file, with no server, and its DOM holds every site row, the graph's
arrows, the turns chart and the sessions; `flow show --format mermaid` draws the same graph."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stretto_core.flow.ir import load_flow
from stretto_core.flow.page import mermaid, render_review
from stretto_core.flow.review import site_lookups

FLOW = Path(__file__).resolve().parent / "fixtures" / "flows" / "tau2-retail.flow.json"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def shop_sessions() -> list:
    from stretto_core.sessions.model import LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult
    from datetime import datetime, timezone

    out = []
    for i, mode in enumerate(["served", "holdout", "served", "holdout"]):
        header = SessionHeader(session_id=f"s{i}", harness="t", started_at=datetime(2026, 12, 1 + i // 2, tzinfo=timezone.utc))
        if "mode" in SessionHeader.model_fields:
            header = header.model_copy(update={"mode": mode})
        events = [LLMTurn(calls=[ToolCall(call_id="a", tool="get_order_details", arguments={"order_id": "#W1"})]),
                  ToolResult(call_id="a", tool="get_order_details", content="{}"),
                  Lookup(call_id="stretto-1", tool="get_user_details", after_call_id="a", site="get_order_details",
                         score=0.8),
                  LLMTurn(text="done")]
        out.append(Session(header=header, events=events))
    return out


def test_the_page_holds_every_site_the_graph_and_the_sessions() -> None:
    flow = load_flow(FLOW)
    page = render_review(flow, staged=flow, sessions=shop_sessions())
    rows = site_lookups(flow)
    assert page.count('<tr class="site-row">') == len(rows) > 5
    assert page.count('class="edge"') == len(rows) and 'id="turns-chart"' in page and 's3' in page
    assert "Nothing in the staged flow needs review" in page
    text = mermaid(flow)
    assert text.startswith("flowchart LR") and text.count("-->") + text.count("-.->") == len(rows)


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_headless_chromium_renders_the_page_from_disk(tmp_path: Path) -> None:
    flow = load_flow(FLOW)
    page = tmp_path / "review.html"
    page.write_text(render_review(flow, sessions=shop_sessions()), encoding="utf-8")
    common = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-1000:]
    rows = site_lookups(flow)
    assert dom.stdout.count('class="site-row"') == len(rows)
    assert dom.stdout.count('class="edge"') == len(rows) and 'id="turns-chart"' in dom.stdout
    shot = tmp_path / "review.png"
    done = subprocess.run([*common, f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.stat().st_size > 10_000, done.stderr[-1000:]


def test_review_reads_an_apps_deployment_folder(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from shop_sessions import shop_sessions
    from stretto_core.cli import verb_app
    from stretto_core.flow.history import Deployment
    from stretto_core.flow.ir import learn_flow, save_flow
    from stretto_core.sessions.store import write_session

    dep = Deployment(tmp_path / "shop")
    sessions = shop_sessions(12)
    for s in sessions:
        write_session(s, dep.sessions)
    save_flow(learn_flow(sessions), dep.flow)
    out = tmp_path / "review.html"
    done = CliRunner().invoke(verb_app("review"), ["review", "--deployment", str(dep.root), "--out", str(out)])
    assert done.exit_code == 0, done.output
    page = out.read_text()
    assert "(12 sessions)" in done.output and page.count('class="site-row"') > 0 and 'id="sessions-table"' in page


def test_the_page_shows_each_site_lookups_promotion_posterior_interval_and_state(tmp_path: Path) -> None:
    """`flow promote` judges the sites; the page then shows, per site lookup, its state, evidence,
    95% interval and posterior against θ*, and draws the posteriors against the θ* line."""
    import html
    import re

    from typer.testing import CliRunner

    from shop_sessions import shop_sessions
    from stretto_core.cli import verb_app
    from stretto_core.flow.ir import learn_flow, save_flow
    from stretto_core.flow.page import wilson_interval
    from stretto_core.flow.review import site_of_symbol

    sessions = shop_sessions(40)
    flow_file, out = tmp_path / "shop.flow.json", tmp_path / "review.html"
    save_flow(learn_flow(sessions[:20]), flow_file)
    folder = tmp_path / "clean"
    from stretto_core.sessions.store import write_session
    for s in sessions[20:]:
        write_session(s, folder)
    promoted = CliRunner().invoke(verb_app("flow"), ["flow", "promote", str(flow_file), "--sessions", str(folder),
                                                     "--bar", "strict"])
    assert promoted.exit_code == 0, promoted.output
    done = CliRunner().invoke(verb_app("review"), ["review", "--flow", str(flow_file), "--out", str(out)])
    assert done.exit_code == 0, done.output
    page, flow = out.read_text(), load_flow(flow_file)
    promotion = flow.promotion
    assert promotion is not None and promotion.held() and any(s.state == "promoted" for s in promotion.sites)
    judged = [s for s in promotion.sites if s.lookups > 0]
    assert page.count('<g class="posterior"') == len(judged) > 1 and 'id="theta-star"' in page
    assert page.count('data-state="held"') == sum(1 for s in judged if s.state == "held")
    rows = {(site_of_symbol(m[0]), m[1]): m[2] for m in
            re.findall(r'<tr class="site-row"><td>(.*?)</td><td>(.*?)</td>(.*?)</tr>', page)}
    shown = [s for s in judged if s.key in rows]
    assert shown, "no judged site lookup is among the page's site rows"
    for s in shown:
        row = html.unescape(rows[s.key])
        low, high = wilson_interval(s.used, s.lookups)
        versus = "≥" if (s.posterior or 0) >= promotion.theta_star else "<"
        assert f"{low:.2f}–{high:.2f}" in row and f"{s.posterior or 0:.3f} {versus} {promotion.theta_star:.3g}" in row
        assert ("held back" in row) == (s.state == "held")
        if s.state == "held":
            assert '<span class="no">no</span>' in row  # a held site lookup is not served, whatever its score


def test_the_wilson_interval_holds_the_rate_and_matches_the_promotions_lower_bound() -> None:
    from stretto_core.flow.page import wilson_interval
    from stretto_core.flow.promotion import wilson_lower

    low, high = wilson_interval(3, 10)
    assert low == pytest.approx(wilson_lower(3, 10)) and low < 0.3 < high
    assert (round(low, 3), round(high, 3)) == (0.108, 0.603)  # the textbook 95% Wilson interval of 3/10
    assert wilson_interval(0, 0) == (0.0, 1.0)
