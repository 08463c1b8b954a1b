"""`stretto ablate`: what each part of the estimators buys, per domain, with intervals over tasks."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.evaluate.variants import VARIANTS, variant
from stretto_core.cli.commands._load import check_draws, load_for_verb
from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.ablation import ablate_domain, render_ablation
from stretto_core.evaluate.measure.bench_data import Corpus
from stretto_core.evaluate.measure.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.serve.option_values import check_fraction
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.jsonfile import output_path
from stretto_core.sessions.splits import load_split_file, make_split_file


def ablate_command(
    sessions: List[Path] = typer.Option(..., "--sessions", help="Session files or folders (train and test)."),
    apps: Optional[str] = typer.Option(None, "--apps", help="Comma-separated domains, e.g. tau2/retail,"
                                       "'tau2/telecom (solo)' (default: every domain with test sessions)."),
    variants: str = typer.Option(",".join(v.name for v in VARIANTS if not v.recalibrate), "--variants",
                                 help="Comma-separated variants (`recalibrated`, which cross-fits every fold, "
                                      "only when named)."),
    theta: float = typer.Option(DEFAULT_THETA, "--theta", help="Threshold every variant replays at."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (stretto split) to use."),
    draws: int = typer.Option(DEFAULT_DRAWS, "--draws", help="Bootstrap draws over tasks."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the rows as JSON."),
) -> None:
    """Learn each domain's flow from its train sessions, replay its test sessions with each variant
    (full, α = 1, no mention classes, simple, result features, next-step), and compare with full."""
    check_draws(draws)
    check_fraction("--theta", theta)
    if json_out is not None:
        output_path(json_out, "JSON rows")
    chosen = [variant(n.strip()) for n in variants.split(",") if n.strip()]
    loaded = load_for_verb(sessions)
    frozen = load_split_file(split_file) if split_file else make_split_file([s.header for s in loaded])
    corpus = Corpus("sessions", loaded, frozen)
    domains = [a.strip() for a in apps.split(",")] if apps else [d for d in corpus.domains() if corpus.on("test", d)]
    rows = []
    for domain in domains:
        if not corpus.on("test", domain):
            raise StrettoError(f"--apps {domain!r}: no test sessions (domains here: {', '.join(corpus.domains())})")
        rows.extend(ablate_domain(corpus, domain, chosen, theta, draws, seed))
    typer.echo(render_ablation(rows))
    typer.echo(f"\nθ = {theta}. Δ: variant − full, 95% intervals from {draws:,} paired bootstrap draws over tasks.")
    if json_out is not None:
        write_json(rows, json_out)
        typer.echo(f"wrote {json_out}")


def register(app: typer.Typer) -> None:
    app.command("ablate")(ablate_command)
