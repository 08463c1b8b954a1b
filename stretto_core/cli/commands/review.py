"""`stretto review --flow F --out review.html`: one static page to read before trusting a flow."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.flow.ir import load_flow
from stretto_core.flow.page import render_review
from stretto_core.serve.option_values import check_fraction
from stretto_core.sessions.jsonfile import write_text_file


def review(
    flow: Optional[Path] = typer.Option(None, "--flow", help="The committed flow."),
    deployment: Optional[Path] = typer.Option(None, "--deployment", help="An app's deployment folder (`stretto flow "
                                                                        "stage`): its committed and staged flows, "
                                                                        "its sessions and its version log."),
    out: Path = typer.Option(..., "--out", help="The HTML file to write (one file, no server needed)."),
    staged: Optional[Path] = typer.Option(None, "--staged", help="A staged flow: the page shows it, and what "
                                                                "changed from the committed one on top."),
    sessions: List[Path] = typer.Option([], "--sessions", help="Recorded sessions (files or folders): the "
                                                               "evidence, turns per day, the sessions table."),
    theta: float = typer.Option(0.3, "--theta", help="The threshold a lookup's score is served at."),
) -> None:
    """Write the review page: sites and their lookups, evidence, the graph, turns per day, sessions."""
    from stretto_core.errors import StrettoError
    from stretto_core.sessions.store import LoadReport, load_sessions

    check_fraction("--theta", theta)
    log = ""
    if deployment is not None:
        from stretto_core.flow.history import Deployment, render_log

        dep = Deployment.existing(deployment)
        flow = flow or dep.flow
        staged = staged or (dep.staged if dep.staged.is_file() else None)
        sessions = list(sessions) or ([dep.sessions] if dep.sessions.is_dir() else [])
        log = render_log(dep.entries())
    if flow is None:
        raise StrettoError("give the flow to review: --flow FILE, or --deployment DIR")
    committed = load_flow(flow)
    shown = load_flow(staged) if staged is not None else None
    read = load_sessions(list(sessions), LoadReport()) if sessions else []
    if sessions and not read:
        raise StrettoError(f"--sessions: no sessions found in {', '.join(map(str, sessions))}")
    page = render_review(committed, staged=shown, sessions=read, theta=theta, title=f"stretto review: {flow.name}",
                         log=log)
    written = write_text_file(out, page, "review page")
    typer.echo(f"wrote {written} ({len(read)} sessions)")


def register(app: typer.Typer) -> None:
    app.command("review")(review)
