"""`stretto flow promote`: judge each site of a flow on the deployment's own sessions (`flow/promotion.py`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.errors import StrettoError
from stretto_core.flow.promotion import BARS, DEFAULT_PRIOR_WEIGHT
from stretto_core.flow.use_evidence import DEFAULT_AGENT_PRIOR, DEFAULT_SITE_PRIOR
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
                                       "the flow's own score at a site weighs as (strict bar's table only)."),
    site_prior: float = typer.Option(DEFAULT_SITE_PRIOR, "--site-prior", help="Posterior bar: how many candidates "
                                     "the flow's own score at a site weighs as."),
    agent_prior: float = typer.Option(DEFAULT_AGENT_PRIOR, "--agent-prior", help="Posterior bar: how many expected "
                                      "uses the flow's scores weigh as against the agent's own (its back-off)."),
    train_sessions: Optional[List[Path]] = typer.Option(None, "--train-sessions", help="Posterior bar: the sessions "
                                                        "the flow learned from; each agent's are weighed by a flow "
                                                        "learned from the others', and the counts join the evidence."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the promoted flow here instead."),
) -> None:
    """Judge each site lookup on the agent's own evidence: posterior (default) scales each score to its chance of
    use there; strict switches a site off."""
    if bar not in BARS:
        raise StrettoError(f"--bar is one of {', '.join(BARS)}, not {bar!r}")
    if not (math.isfinite(theta) and 0.0 <= theta <= 1.0):
        raise StrettoError(f"--theta must be a number between 0 and 1, not {theta}")
    for name, value in (("--prior-weight", prior_weight), ("--site-prior", site_prior),
                        ("--agent-prior", agent_prior)):
        if not (math.isfinite(value) and value >= 0):
            raise StrettoError(f"{name} must be a finite number ≥ 0, not {value}")
    from stretto_core.cli.commands._load import load_for_verb
    from stretto_core.evaluate.promotion import promote, train_evidence
    from stretto_core.flow.ir import load_flow, save_flow
    from stretto_core.sessions.jsonfile import output_path

    output_path(out or path, "flow")
    flow = load_flow(path)
    loaded = load_for_verb(sessions)
    train = train_evidence(load_for_verb(train_sessions), theta) if train_sessions and bar == "posterior" else None
    promoted, clean = promote(flow, loaded, bar, theta, prior_weight, site_prior=site_prior,
                              agent_prior=agent_prior, train=train)
    if not clean.sessions:
        raise StrettoError(f"no clean sessions to judge on in {', '.join(map(str, sessions))} "
                           f"({clean.describe()}); nothing written")
    save_flow(promoted, out or path)
    assert promoted.promotion is not None
    sites = promoted.promotion.sites
    held = [s for s in sites if s.state == "held"]
    typer.echo(f"judged on {clean.describe()}; bar {bar} at θ = {theta:g}")
    evidence = promoted.promotion.evidence
    if evidence is not None:
        typer.echo(f"  the agent's back-off g = {evidence.agent_factor():.3f} (every score times its site's f ≤ 1; "
                   f"a site the evidence never reached times g)")
    for s in sites:
        what = "weighed candidates" if evidence is not None else "would-be lookups"
        typer.echo(f"  {'HELD ' if s.state == 'held' else 'ok   '} after {s.site}: {s.tool}  "
                   f"{s.used:g} of {s.lookups:g} {what} used, in {s.tasks} tasks; posterior {s.posterior or 0:.3f}")
    if not sites:
        typer.echo("  no candidate was weighed on those sessions")
    typer.echo(f"{len(sites) - len(held)} site lookups promoted, {len(held)} held back; "
               f"unjudged ones are {promoted.promotion.unscored}; wrote {out or path}")


def add_promote(flow_app: typer.Typer) -> None:
    """Add `promote` to the `flow` verbs (once, however often the CLI is built)."""
    if not any(c.name == "promote" for c in flow_app.registered_commands):
        flow_app.command("promote")(promote_command)
