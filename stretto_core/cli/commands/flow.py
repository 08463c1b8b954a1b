"""`stretto flow show|merge|diff|threshold`: read, combine and review flow files; and
`stretto flow stage|commit|rollback|log`: a deployment's versions (`flow/history.py`)."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from stretto_core.errors import StrettoError
from stretto_core.flow.history import PRIOR_NAME, SETTLED_SECONDS
from stretto_core.flow.ir import Flow, load_flow, merge, save_flow
from stretto_core.cli.commands._values import check_amount
from stretto_core.flow.review import diff, flow_sites, show
from stretto_core.serve.option_values import check_fraction
from stretto_core.learn.served import DEFAULT_PRIOR_HALF, DEFAULT_PRIOR_SESSIONS, DEFAULT_RULE, RULES, prior_weight_at
from stretto_core.sessions.jsonfile import output_path
from stretto_core.sessions.manifest import ToolManifest, load_manifest

flow_app = typer.Typer(no_args_is_help=True, help="Read, merge and review flow files.")


@flow_app.command("show")
def show_command(path: Path = typer.Argument(..., help="A flow file."),
                 theta: float = typer.Option(0.3, "--theta", help="Mark the lookups that clear this threshold."),
                 format: str = typer.Option("markdown", "--format", help="markdown (tables) or mermaid (the "
                                                                         "flow as a graph)."),
                 ) -> None:
    """Render a flow as Markdown: sites, lookups, scores and binding sources."""
    check_fraction("--theta", theta)
    if format == "mermaid":
        from stretto_core.flow.page import mermaid

        typer.echo(mermaid(load_flow(path), theta), nl=False)
        return
    if format != "markdown":
        raise StrettoError(f"--format is markdown or mermaid, not {format!r}")
    typer.echo(show(load_flow(path), theta), nl=False)


@flow_app.command("merge")
def merge_command(a: Path = typer.Argument(...), b: Path = typer.Argument(...),
                  out: Path = typer.Option(..., "--out"),
                  weight: float = typer.Option(1.0, "--weight", help="Multiply B's counts by this.")) -> None:
    """Add two flows' counts (B weighted) and derive again: the flow of both bodies of sessions."""
    if not (math.isfinite(weight) and weight > 0):
        raise StrettoError(f"--weight must be a finite number above 0, not {weight}")
    output_path(out, "flow")
    first, second = load_flow(a), load_flow(b)
    apps_a, apps_b = _apps(first), _apps(second)
    if apps_a and apps_b and apps_a != apps_b:
        typer.echo(f"note: {a} is a flow of {', '.join(sorted(apps_a))} and {b} of {', '.join(sorted(apps_b))}: "
                   "the merged flow serves both apps' tools as one app", err=True)
    merged = merge(first, second, weight)
    save_flow(merged, out)
    typer.echo(f"wrote {out}")


def _apps(flow: Flow) -> set[str]:
    """The apps a flow learned from (its sessions' and its manifest's)."""
    apps = {app for source in flow.provenance.sources for app in source.apps if app}
    return apps | ({flow.manifest.app} if flow.manifest.app else set())


@flow_app.command("diff")
def diff_command(old: Path = typer.Argument(...), new: Path = typer.Argument(...),
                 theta: float = typer.Option(0.3, "--theta"),
                 tolerance: float = typer.Option(0.05, "--tolerance", help="Report score changes beyond this.")) -> None:
    """Say what changed; exit 1 when a change needs review (a new read, lookup or binding source)."""
    check_fraction("--theta", theta)
    check_amount("--tolerance", tolerance)
    d = diff(load_flow(old), load_flow(new), theta, tolerance)
    typer.echo(d.render(), nl=False)
    if d.needs_review:
        raise typer.Exit(1)


@flow_app.command("threshold")
def threshold_command(path: Path = typer.Argument(..., help="A flow file, changed in place unless --out."),
                      site: str = typer.Option(..., "--site", help="The site: the tool whose result the lookups "
                                                                   "follow, e.g. `get_user_details`, "
                                                                   "`get_user_details (failed)`, or `start`."),
                      theta: float = typer.Option(..., "--theta", help="θ at that site; above 1 switches it off."),
                      out: Path = typer.Option(None, "--out", help="Write the changed flow here instead.")) -> None:
    """Set θ at one site (the speculator's threshold there), e.g. to hold back a site that detours."""
    if not (math.isfinite(theta) and theta >= 0):
        raise StrettoError(f"--theta must be a finite number ≥ 0 (above 1 switches the site off), not {theta}")
    output_path(out or path, "flow")
    flow = load_flow(path)
    sites = flow_sites(flow)
    if site not in sites:
        shown = sorted(sites)
        raise StrettoError(f"--site {site!r}: {path} has no such site; its sites: {', '.join(shown[:12])}"
                           + (f" and {len(shown) - 12} more" if len(shown) > 12 else ""))
    flow.thresholds = {**flow.thresholds, site: theta}
    save_flow(flow, out or path)
    typer.echo(f"θ at {site} is {theta:g} in {out or path}")


@flow_app.command("stage")
def stage_command(deployment: Path = typer.Argument(..., help="The app's deployment folder (sessions/, flow.json, "
                                                         "flow.staged.json, history/)."),
                  manifest: Path = typer.Option(None, "--manifest", help="Tool kinds, instead of the sessions' own."),
                  settled: float = typer.Option(SETTLED_SECONDS, "--settled", help="Leave session files written to "
                                                "in the last this many seconds (still recording) for next time."),
                  rule: str = typer.Option(DEFAULT_RULE, "--served-rule", "--rule", help="What a served session teaches: "
                                           "said (a lookup counts as the agent's call when a value only it showed "
                                           "is passed on or said before the next write), weighed (as said, and at "
                                           "a site where that caught some lookups, as many more of the rest as the "
                                           "test's recall says it missed), used (passed on only), all, drop, or "
                                           "holdout (served sessions teach nothing); docs/promotion.md."),
                  prior_weight: float = typer.Option(DEFAULT_PRIOR_SESSIONS, "--prior-weight", help="With "
                                                     "DEPLOYMENT/prior.flow.json: what the other agents' sessions "
                                                     "weigh as, in sessions, before any of the app's own (w0)."),
                  prior_half: float = typer.Option(DEFAULT_PRIOR_HALF, "--prior-half", help="With a prior: after "
                                                   "this many of the app's own sessions it weighs half of w0 "
                                                   "(w(n) = w0·k/(k+n); inf: fixed).")) -> None:
    """Count the sessions no version counted yet into the staged flow (counts add: exact); with
    DEPLOYMENT/prior.flow.json, other agents' counts join at a weight that falls as the app's own arrive."""
    if rule not in RULES:
        raise StrettoError(f"--served-rule is one of {', '.join(RULES)}, not {rule!r}")
    if not (math.isfinite(settled) and settled >= 0):
        raise StrettoError(f"--settled must be a finite number of seconds ≥ 0, not {settled}")
    from stretto_core.flow.history import Deployment

    dep = Deployment(deployment)
    if not dep.sessions.is_dir():
        raise StrettoError(f"{dep.sessions}: no sessions folder (record the app's sessions there: "
                           f"store={str(dep.sessions)!r})")
    man = load_manifest(manifest) if manifest else None
    for name, value in (("--prior-weight", prior_weight), ("--prior-half", prior_half)):
        half = name == "--prior-half"
        if math.isnan(value) or value < 0 or (half and value == 0) or (not half and math.isinf(value)):
            raise StrettoError(f"{name} must be a number {'above 0 (inf: fixed)' if half else '≥ 0'}, not {value}")
    prior_path = dep.root / PRIOR_NAME
    if prior_path.exists():
        from stretto_core.flow.online import Staged

        prior = load_flow(prior_path)
        counted: list[int] = []

        def with_prior(files: list[Path]) -> Flow | None:
            own = count_session_files(files, man, rule)
            staged = Staged(own=own, prior=prior, w0=prior_weight, half=prior_half)
            counted.append(staged.sessions)
            return staged.flow() if own is not None else None

        entry = dep.stage(with_prior, settled=settled, recount=True,
                          command_note=f"rule {rule}; prior {PRIOR_NAME} w0 {prior_weight:g} k {prior_half:g}")
        if entry is not None:
            n = counted[-1]
            typer.echo(f"prior {prior_path}: other agents' sessions weigh "
                       f"{prior_weight_at(n, prior_weight, prior_half):.1f} sessions beside the app's own {n}")
    else:
        entry = dep.stage(lambda files: count_session_files(files, man, rule), settled=settled,
                          command_note=f"rule {rule}")
    if entry is None:
        typer.echo(f"nothing new to stage in {dep.sessions}")
        return
    typer.echo(f"staged {dep.staged}: {len(entry.sessions_added)} new sessions added "
               f"(on version {entry.parent if entry.parent is not None else '-'})")
    for line in entry.diff[:20]:
        typer.echo(line)
    typer.echo(f"next: `stretto flow commit {deployment}` serves it from the app's next session")


@flow_app.command("commit")
def commit_command(deployment: Path = typer.Argument(..., help="The app's deployment folder."),
                   app: str = typer.Option(None, "--app", help="Refuse unless the staged flow is of this app.")) -> None:
    """Make the staged flow the next version: the app serves it from its next session."""
    from stretto_core.flow.history import Deployment

    entry = Deployment.existing(deployment).commit(app)
    typer.echo(f"committed version {entry.version} (on {entry.parent if entry.parent is not None else 'no version'}): "
               f"{len(entry.sessions_added)} sessions added, sha256 {entry.sha256}")


@flow_app.command("rollback")
def rollback_command(deployment: Path = typer.Argument(..., help="The app's deployment folder.")) -> None:
    """Put the previous committed version back, byte for byte."""
    from stretto_core.flow.history import Deployment

    entry = Deployment.existing(deployment).rollback()
    typer.echo(f"rolled back: {entry.note}; sha256 {entry.sha256}")


@flow_app.command("log")
def log_command(deployment: Path = typer.Argument(..., help="The app's deployment folder."),
                as_json: bool = typer.Option(False, "--json", help="The log's JSON lines as stored.")) -> None:
    """The deployment's history: each stage, commit and rollback, when, and what it changed."""
    from stretto_core.flow.history import Deployment, log_json, render_log

    entries = Deployment.existing(deployment).entries()
    typer.echo(log_json(entries) if as_json else render_log(entries), nl=False)


def count_session_files(files: list[Path], manifest: ToolManifest | None, rule: str = DEFAULT_RULE) -> Flow | None:
    """The counts of just these session files, as `stretto learn` would count them (split auto),
    each served session as `rule` teaches it (`learn/served.py`): underived, as what they are
    added to is derived once the sum is made (`Deployment.stage`, `Staged.flow`)."""
    from stretto_core.flow.stream import choose, learn_chosen

    chosen = choose([str(f) for f in files], "auto", manifest=manifest)
    if not chosen.files:
        return None
    return learn_chosen(chosen, rule=rule, derive=False)


def register(app: typer.Typer) -> None:
    from stretto_core.cli.commands._promote import add_promote

    add_promote(flow_app)
    app.add_typer(flow_app, name="flow")
