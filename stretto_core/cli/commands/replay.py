"""`stretto replay`: replay recorded episodes with a flow serving lookups; print what it saved."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.errors import StrettoError
from stretto_core.evaluate.loading import load_manifests
from stretto_core.sessions.jsonfile import output_path
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.inputs import load_episodes, load_flow_model, save_replay
from stretto_core.evaluate.replay.summary import render_summary
from stretto_core.cli.commands._values import check_at_least
from stretto_core.serve.option_values import check_fraction
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.splits import load_split_file


class Policy(str, Enum):
    use = "use"
    next = "next"


class View(str, Enum):
    agent = "agent"
    proxy = "proxy"


def replay(
    flow: Path = typer.Option(..., "--flow", help="The flow file to serve lookups with."),
    sessions: List[Path] = typer.Option(..., "--sessions", help="Session files, or folders searched for *.jsonl "
                                        "(repeat the option for several)."),
    json_out: Path = typer.Option(..., "--json", help="Where to write the replay: totals, then every row."),
    split: str = typer.Option("all", "--split", help="Which sessions: train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (stretto split) to use."),
    policy: Policy = typer.Option(Policy.use, "--policy", help="use: probability of use before the next write; "
                                  "next: the next-step rule, for comparison."),
    theta: float = typer.Option(DEFAULT_THETA, "--theta", help="Threshold θ a lookup's score must reach."),
    env: bool = typer.Option(False, "--env", help="Run every call and lookup in the benchmark's environment "
                             "(τ²-bench, AgentDojo) instead of answering from the record."),
    weigh: bool = typer.Option(False, "--weigh", help="Also log every candidate weighed at every decision."),
    manifest: List[Path] = typer.Option([], "--manifest", help="Tool manifest to use instead of the sessions' own "
                                        "(repeat for several apps; each is matched by its app)."),
    processes: Optional[int] = typer.Option(None, "--processes", help="Processes to replay on (default: up to 2 "
                                            "when there are many episodes)."),
    strict_stand_ins: bool = typer.Option(False, "--strict-stand-ins", help="From the record: a lookup bound from "
                                          "another call's stand-in result never answers a call."),
    view: View = typer.Option(View.agent, "--view", help="agent: each episode as the agent saw it; proxy: as an "
                              "MCP proxy sees it (no user words, no replies), what `stretto proxy` can save."),
    any_app: bool = typer.Option(False, "--any-app", help="Replay sessions of every app, not only the flow's."),
) -> None:
    """Re-run each episode with the flow deciding after every tool response, and count turns saved."""
    output_path(json_out, "replay")
    check_fraction("--theta", theta)
    if processes is not None:
        check_at_least("--processes", processes, 1)
    frozen = load_split_file(split_file) if split_file else None
    model = load_flow_model(flow)  # a bad flow is reported before any session is read
    episodes = load_episodes(sessions, split=split, split_file=frozen, manifests=load_manifests(manifest),
                             view=view.value)
    if not episodes:
        raise StrettoError(f"no sessions to replay in {', '.join(map(str, sessions))} (check --sessions and --split)")
    if not any_app:
        episodes = _of_the_flows_apps(episodes, flow_apps(model), sessions)
    options = ReplayOptions(theta=theta, policy=policy.value, env=env, weigh=weigh, processes=processes,
                            flow=str(flow), split=None if split == "all" else split,
                            strict_stand_ins=strict_stand_ins, view=view.value)
    result = replay_sessions(model, episodes, options)
    typer.echo(render_summary(result))
    save_replay(result, json_out)
    typer.echo(f"wrote {json_out}")


def flow_apps(model: object) -> set[str]:
    """The apps a flow learned from (its sessions' and its manifest's); empty when it does not say."""
    flow = getattr(model, "flow", None)
    if flow is None:
        return set()
    apps = {app for source in flow.provenance.sources for app in source.apps if app}
    if flow.manifest.app:
        apps.add(flow.manifest.app)
    return apps


def _of_the_flows_apps(episodes: list, apps: set[str], sessions: List[Path]) -> list:
    """Only the episodes of the flow's apps: a flow's lookups in another app's sessions, where tool
    names happen to match, measure nothing (`--any-app` replays them all)."""
    if not apps:
        return episodes
    kept = [e for e in episodes if e.header.app in apps]
    skipped = len(episodes) - len(kept)
    if not kept:
        raise StrettoError(f"no sessions of the flow's app ({', '.join(sorted(apps))}) in "
                           f"{', '.join(map(str, sessions))}; --any-app replays other apps' sessions")
    if skipped:
        typer.echo(f"replaying the {len(kept)} sessions of the flow's app ({', '.join(sorted(apps))}); skipped "
                   f"{skipped} of other apps (--any-app replays them too)", err=True)
    return kept


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
