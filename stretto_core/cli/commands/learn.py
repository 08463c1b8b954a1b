"""`stretto learn`: count sessions into a flow file."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.errors import StrettoError
from stretto_core.flow.harness import (ALL, DEFAULT_MATES, DEFAULT_OTHERS, Weight, harnesses_of, learn_split,
                                       parse_weight, split_for_agent)
from stretto_core.flow.ir import learn, save_flow
from stretto_core.learn.bindings.model import BindingOptions
from stretto_core.sessions.jsonfile import output_path
from stretto_core.sessions.user_words import MODES
from stretto_core.sessions.manifest import load_manifest


def learn_command(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders of *.jsonl sessions."),
    out: Path = typer.Option(..., "--out", help="The flow file to write."),
    prior: Optional[List[Path]] = typer.Option(None, "--prior", help="Sessions that enter as a prior (repeatable)."),
    prior_weight: Optional[float] = typer.Option(None, "--prior-weight",
                                                 help="How many sessions the prior weighs in all (default: its own count)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Tool kinds, instead of the sessions' own."),
    split: str = typer.Option("train", "--split", help="Learn from this side of the task split: train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (`stretto split`)."),
    features: bool = typer.Option(False, "--features/--no-features", help="Learn result features (held-out likelihood)."),
    constants: bool = typer.Option(False, "--constants", help="Learn arguments the agent always passes one value for."),
    user_words: Optional[str] = typer.Option(None, "--user-words", help="Bind from the user's words too: `pattern` "
                                             "(the request's only email, date, number or id) or `spans` (by shape "
                                             "and position, counted). Off by default (docs/user-words.md)."),
    app: Optional[List[str]] = typer.Option(None, "--app", help="Learn only from sessions of this app, e.g. tau2/retail (repeatable)."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Learn for this agent (its model): its own sessions are "
                                        "the data, its harness-mates' and other harnesses' enter as priors."),
    harness: Optional[str] = typer.Option(None, "--harness", help="The agent's harness (needed when it ran in several)."),
    prior_mates: Optional[str] = typer.Option(None, "--prior-harness-mates", help="With --agent: what other agents of "
                                              f"its harness weigh, in sessions, or `all` (default {DEFAULT_MATES})."),
    prior_others: Optional[str] = typer.Option(None, "--prior-others", help="With --agent: what other harnesses' "
                                               f"sessions weigh, in sessions, or `all` (default {DEFAULT_OTHERS:g})."),
) -> None:
    """Learn a flow by counting: the habit, the reach, the bindings and the tools' contracts."""
    started = time.perf_counter()
    if prior_weight is not None and not (math.isfinite(prior_weight) and prior_weight >= 0):
        raise StrettoError(f"--prior-weight must be a finite number ≥ 0, not {prior_weight}")
    output_path(out, "flow")
    man = load_manifest(manifest) if manifest else None
    sessions = load_for_verb(paths, split, split_file, apps=app or ())
    prior_sessions = load_for_verb(prior, split, split_file, "prior sessions", apps=app or ()) if prior else []
    if user_words is not None and user_words not in MODES:
        raise StrettoError(f"--user-words is one of {', '.join(MODES)}, not {user_words!r}")
    options = BindingOptions(user_words=user_words)
    if agent is None:
        if prior_mates is not None or prior_others is not None or harness is not None:
            raise StrettoError("--harness, --prior-harness-mates and --prior-others need --agent")
        flow = learn(sessions, man, prior=prior_sessions, prior_weight=prior_weight, features=features,
                     constants=constants, binding_options=options)
        head = f"learned {out} from {len(sessions)} sessions"
        ran = harnesses_of(sessions)
        if len(ran) > 1:
            head += f" of {len(ran)} harnesses, pooled (--agent weighs them apart)"
    else:
        split_ = split_for_agent(sessions, agent, harness)
        mates, others = parse_weight(prior_mates, DEFAULT_MATES), parse_weight(prior_others, DEFAULT_OTHERS)
        extra = [(prior_sessions, prior_weight)] if prior_sessions else []
        flow = learn_split(split_, mates=mates, others=others, manifest=man, features=features,
                           constants=constants, priors=extra, binding_options=options)
        head = (f"learned {out} for {split_.agent} ({split_.harness}) from its {len(split_.own)} sessions, "
                f"{len(split_.mates)} of harness-mates weighing {_weight(mates, split_.mates)} and "
                f"{len(split_.others)} of other harnesses weighing {_weight(others, split_.others)}")
    save_flow(flow, out)
    took = time.perf_counter() - started
    assert flow.alpha is not None
    typer.echo(head
               + (f" and a prior of {len(prior_sessions)} weighing {prior_weight or len(prior_sessions):g}" if prior_sessions else "")
               + f": α = {flow.alpha.alpha:.3g}, {len(flow.manifest.reads())} reads, {took:.2f} s")


def _weight(weight: Weight, body: list) -> str:
    if not body or weight == 0:
        return "nothing"
    return f"{len(body)} (each one)" if weight == ALL else f"{float(weight):g}"


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)
