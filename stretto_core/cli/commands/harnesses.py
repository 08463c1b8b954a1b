"""`stretto harnesses`: which sessions to learn each agent from, across harnesses (the table)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._load import check_draws, load_for_verb
from stretto_core.cli.commands._values import check_at_least
from stretto_core.serve.option_values import check_fraction
from stretto_core.sessions.jsonfile import output_path
from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.bench_data import domain_of
from stretto_core.evaluate.measure.harness_prior import (ORDERS, HarnessAgentCase, best_rule, harness_table,
                                                         render_harness_table, winners)
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.flow.harness import DEFAULT_MATES, DEFAULT_OTHERS, split_for_agent
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.agents import agent_key
from stretto_core.sessions.splits import load_split_file, split_of


def harnesses_command(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders searched for *.jsonl."),
    app: Optional[List[str]] = typer.Option(None, "--app", help="Only these apps, e.g. tau2/airline (repeatable)."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (stretto split)."),
    orders: int = typer.Option(ORDERS, "--orders", help="Random orders of the agent's first n own sessions."),
    draws: int = typer.Option(1000, "--draws", help="Bootstrap draws per interval."),
    seed: int = typer.Option(0, "--seed"),
    theta: float = typer.Option(DEFAULT_THETA, "--theta"),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write every cell as JSON."),
) -> None:
    """For each agent × harness: learn from its own, its harness-mates', other harnesses', all pooled,
    and harness-mates as a prior plus its own; replay each on the agent's test episodes."""
    check_at_least("--orders", orders, 1)
    check_draws(draws)
    check_fraction("--theta", theta)
    if json_out is not None:
        output_path(json_out, "JSON rows")
    sessions = load_for_verb(paths, "all", split_file, apps=app or ())
    frozen = load_split_file(split_file) if split_file else None
    sides = {s.session_id: split_of(s.header, frozen) for s in sessions}
    by_domain = defaultdict(list)
    for s in sessions:
        if not s.header.solo:
            by_domain[domain_of(s.header)].append(s)
    cases = []
    for domain, here in sorted(by_domain.items()):
        train = [s for s in here if sides[s.session_id] == "train"]
        tests = defaultdict(list)
        for s in here:
            if sides[s.session_id] == "test":
                tests[(s.header.harness, agent_key(s.header.agent_model))].append(s)
        for (harness, agent), test in sorted(tests.items()):
            split = split_for_agent(train, agent, harness)
            if split.own or split.mates or split.others:
                cases.append(HarnessAgentCase(domain, split, prepare_sessions(test)))
    if not cases:
        raise StrettoError("no agent has test episodes and train sessions to learn from")
    typer.echo(f"{len(cases)} agent × harness cases in {', '.join(sorted(by_domain))}")
    cells = harness_table(cases, theta=theta, orders=orders, draws=draws, seed=seed,
                          on_case=lambda c: typer.echo(f"  done: {c.domain} {c.label}", err=True))
    typer.echo(render_harness_table(cells))
    typer.echo("\nWins (highest utility, then turns saved, then fewer detours):")
    for where, protocol in winners(cells).items():
        typer.echo(f"  {where}: {protocol}")
    typer.echo(f"best rule over the domains' pools: {best_rule(cells)}; `stretto learn --agent` uses "
               f"harness-mates {DEFAULT_MATES} / other harnesses {DEFAULT_OTHERS}")
    if json_out is not None:
        write_json(cells, json_out)
        typer.echo(f"wrote {json_out}")


def register(app: typer.Typer) -> None:
    app.command("harnesses")(harnesses_command)
