"""`stretto flow promote`: judge each site of a flow on the deployment's own sessions (`flow/promotion.py`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.errors import StrettoError
from stretto_core.flow.promotion import BARS, DEFAULT_PRIOR_WEIGHT
from stretto_core.serve.speculator import DEFAULT_THETA


def promote_command(
    path: Path = typer.Argument(..., help="A flow file, changed in place unless --out."),
    sessions: List[Path] = typer.Option(..., "--sessions", help="The deployment's sessions (files or folders; "
                                        "repeatable). Only clean ones count: recorded, shadowed or held out, "
                                        "and not learned from."),
    bar: str = typer.Option("posterior", "--bar", help="posterior: the site's use rate, with the flow's score as a "
                            "prior of --prior-weight lookups, against θ; strict: used ≥ 0.7, Wilson lower bound "
                            "≥ 0.5, ≥ 3 tasks."),
    theta: float = typer.Option(DEFAULT_THETA, "--theta", help="θ* = δ/(β+δ) from the costs (`stretto costs`): "
                                "the flow serves at it and the posterior bar asks it of a site's use rate."),
    prior_weight: float = typer.Option(DEFAULT_PRIOR_WEIGHT, "--prior-weight", help="How many would-be lookups "
                                       "the flow's own score at a site weighs as (posterior bar)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the promoted flow here instead."),
) -> None:
    """Promote or hold back each site lookup on the agent's own evidence; a held one makes no lookup."""
    if bar not in BARS:
        raise StrettoError(f"--bar is one of {', '.join(BARS)}, not {bar!r}")
    if not (math.isfinite(theta) and 0.0 <= theta <= 1.0):
        raise StrettoError(f"--theta must be a number between 0 and 1, not {theta}")
    if not (math.isfinite(prior_weight) and prior_weight >= 0):
        raise StrettoError(f"--prior-weight must be a finite number ≥ 0, not {prior_weight}")
    from stretto_core.cli.commands._load import load_for_verb
    from stretto_core.evaluate.promotion import promote
    from stretto_core.flow.ir import load_flow, save_flow
    from stretto_core.sessions.jsonfile import output_path

    output_path(out or path, "flow")
    flow = load_flow(path)
    loaded = load_for_verb(sessions)
    promoted, clean = promote(flow, loaded, bar, theta, prior_weight)
    if not clean.sessions:
        raise StrettoError(f"no clean sessions to judge on in {', '.join(map(str, sessions))} "
                           f"({clean.describe()}); nothing written")
    save_flow(promoted, out or path)
    assert promoted.promotion is not None
    sites = promoted.promotion.sites
    held = [s for s in sites if s.state == "held"]
    typer.echo(f"judged on {clean.describe()}; bar {bar} at θ = {theta:g}")
    for s in sites:
        typer.echo(f"  {'HELD ' if s.state == 'held' else 'ok   '} after {s.site}: {s.tool}  "
                   f"{s.used:g}/{s.lookups:g} used in {s.tasks} tasks, posterior {s.posterior or 0:.3f}")
    typer.echo(f"{len(sites) - len(held)} site lookups promoted, {len(held)} held back; "
               f"unjudged ones are {promoted.promotion.unscored}; wrote {out or path}")


def add_promote(flow_app: typer.Typer) -> None:
    """Add `promote` to the `flow` verbs (once, however often the CLI is built)."""
    if not any(c.name == "promote" for c in flow_app.registered_commands):
        flow_app.command("promote")(promote_command)
