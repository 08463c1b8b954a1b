"""`stretto procedure compile|show|run|cascade|demonstrate`: compiled procedures for solo regimes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from stretto_core.errors import StrettoError

procedure_app = typer.Typer(no_args_is_help=True, help="Compile, review and run procedures where no user speaks.")

APP = "tau2/telecom"

WORKFLOW_MODEL = ("workflow: the demonstrator's written workflow (procedures/tau2/demonstrator.py, a hand-written "
                  "program of the policy) replayed as a scripted model, one call per turn; not an LLM")
"""What `--model workflow` is, said wherever a cascade's figures are printed."""


def compiled_from(procedure: Any) -> str:
    from stretto_core.procedures.show import compiled_from as said

    return said(procedure)


def _tickets(app: str):
    """Tickets of τ²-bench telecom tasks, from the package, read only for a session that carries
    no ticket of its own (demonstrations and other apps' sessions do): so compiling from such
    sessions needs no benchmark environment installed."""
    if app != APP:
        return None

    def ticket(task_id: str) -> str | None:
        from stretto_core.procedures.tau2.env import telecom_tasks

        tasks = telecom_tasks()
        return tasks[task_id].ticket if task_id in tasks else None

    return ticket


@procedure_app.command("compile")
def compile_command(sessions: list[Path] = typer.Option([], "--sessions", help="Session files or folders."),
                    results: list[Path] = typer.Option([], "--results", help="τ²-bench results files (solo runs)."),
                    out: Path = typer.Option(..., "--out", help="Where to write the procedure."),
                    app: str = typer.Option(APP, "--app", help="The app the sessions are of."),
                    min_reward: float = typer.Option(1.0, "--min-reward", help="Compile only from sessions with this reward.")) -> None:
    """Compile a procedure from successful solo sessions of training tasks (test tasks are refused).

    It prints what it compiled from by body: recorded agents' sessions, or the hand-written
    demonstrator's (`procedure demonstrate`), whose figures say nothing of what recorded agents teach.
    """
    from stretto_core.cli.commands._values import check_amount
    from stretto_core.procedures.compile import compile_procedure
    from stretto_core.procedures.ir import save_procedure
    from stretto_core.procedures.sources import SourceReport, read_sessions, training_episodes
    from stretto_core.sessions.jsonfile import output_path

    output_path(out, "procedure")
    check_amount("--min-reward", min_reward)
    found = read_sessions(sessions, results)
    if not found:
        raise StrettoError("no sessions: pass --sessions and/or --results")
    apps = {s.header.app for s in found if s.header.app}
    if apps and app not in apps:
        raise StrettoError(f"--app {app!r}: none of the {len(found)} sessions is of it (they are of "
                           f"{', '.join(sorted(apps))})")
    report = SourceReport()
    episodes = training_episodes(found, app, _tickets(app), min_reward, report)
    if not episodes:
        raise StrettoError(f"none of the {report.read} sessions is a successful solo episode with a ticket")
    procedure = compile_procedure(episodes, app)
    save_procedure(procedure, out)
    typer.echo(f"compiled {out} from {report.kept} sessions of {len(procedure.provenance.tasks)} tasks "
               f"[{compiled_from(procedure)}] "
               f"({report.unsuccessful} unsuccessful left out): {len(procedure.actions)} actions, "
               f"{len(procedure.trees)} sites, {len(procedure.checks)} checks")


@procedure_app.command("show")
def show_command(path: Path = typer.Argument(..., help="A procedure file."),
                 site: Optional[str] = typer.Option(None, "--site", help="Show only this site's tree.")) -> None:
    """Render a procedure as Markdown: provenance, actions, checks, and each site's tree."""
    from stretto_core.procedures.ir import load_procedure
    from stretto_core.procedures.show import show

    procedure = load_procedure(path)
    if site is not None and site not in procedure.trees:
        raise StrettoError(f"--site {site!r}: {path} has no tree there; its sites: {', '.join(procedure.trees)}")
    typer.echo(show(procedure, site), nl=False)


def _task(task_id: str, renamed: bool) -> tuple[Any, Any]:
    from stretto_core.procedures.tau2.env import telecom_tasks

    tasks = telecom_tasks()
    if task_id not in tasks:
        raise StrettoError(f"--task-id: no τ²-bench telecom task {task_id!r}")
    if not renamed:
        return tasks[task_id], None
    from stretto_core.procedures.tau2.rename import renamed_db, renamed_task, renaming

    mapping = renaming()
    return renamed_task(tasks[task_id], mapping), renamed_db(mapping)


def _calls_json(calls) -> list[dict[str, Any]]:
    return [{"tool": c.tool, "arguments": c.arguments, "content": c.content, "error": c.error,
             "purpose": c.purpose, "action": c.action} for c in calls]


@procedure_app.command("run")
def run_command(path: Path = typer.Argument(..., help="A procedure file."),
                task_id: Optional[str] = typer.Option(None, "--task-id", help="A τ²-bench telecom task: run in its solo environment and score it."),
                renamed: bool = typer.Option(False, "--renamed", help="With every identifier of the database renamed."),
                mcp: Optional[str] = typer.Option(None, "--mcp", help="Run against this MCP server command (stdio) instead."),
                ticket: Optional[str] = typer.Option(None, "--ticket", help="The ticket (with --mcp).")) -> None:
    """Run a procedure with no model; print its calls, verdict and (for a task) τ²-bench's reward."""
    from stretto_core.procedures.ir import load_procedure

    procedure = load_procedure(path)
    if ticket is not None and mcp is None:
        raise StrettoError("--ticket goes with --mcp (a task's own ticket is used with --task-id)")
    if mcp is not None:
        import asyncio
        import shlex

        from stretto_core.procedures.mcp import run_on_mcp, stdio_server

        if ticket is None:
            raise StrettoError("--mcp needs --ticket")
        result = asyncio.run(run_on_mcp(procedure, ticket, stdio_server(shlex.split(mcp))))
        typer.echo(json.dumps({"verdict": result.verdict, "reason": result.reason,
                               "calls": _calls_json(result.calls)}, indent=2, ensure_ascii=False))
        return
    if task_id is None:
        raise StrettoError("pass --task-id (a τ²-bench telecom task) or --mcp with --ticket")
    from stretto_core.procedures.runtime import run_procedure
    from stretto_core.procedures.tau2.env import SoloToolSet, env_constructor
    from stretto_core.procedures.tau2.reward import task_reward

    task, db = _task(task_id, renamed)
    result = run_procedure(procedure, task.ticket or "", SoloToolSet(task, db))
    calls = [(c.tool, c.arguments, c.content, c.error) for c in result.calls]
    reward = task_reward(task, calls, env_constructor(db))
    typer.echo(json.dumps({"task_id": task_id, "compiled_from": compiled_from(procedure),
                           "verdict": result.verdict, "reason": result.reason,
                           "reward": reward.reward, "failed": reward.failed_assertions,
                           "calls": _calls_json(result.calls)}, indent=2, ensure_ascii=False))


@procedure_app.command("cascade")
def cascade_command(path: Path = typer.Argument(..., help="A procedure file."),
                    task_id: str = typer.Option(..., "--task-id", help="A τ²-bench telecom task."),
                    model: str = typer.Option("workflow", "--model", help="`workflow` (the hand-written demonstrator's "
                                                                          "written workflow as a scripted model, not an "
                                                                          "LLM) or a JSON file of scripted turns."),
                    renamed: bool = typer.Option(False, "--renamed")) -> None:
    """The procedure, then a model on a hand-back; print the verdicts, LLM turns and reward.

    The output names what the procedure was compiled from and what the model was: with
    `--model workflow` it is the demonstrator's written workflow, scripted, so its turns and
    reward measure the hand-back and resume, not an LLM.
    """
    from stretto_core.procedures.cascade import ScriptedModel, run_cascade
    from stretto_core.procedures.ir import load_procedure
    from stretto_core.procedures.tau2.demonstrator import WorkflowModel
    from stretto_core.procedures.tau2.env import SoloToolSet, env_constructor
    from stretto_core.procedures.tau2.reward import task_reward

    procedure = load_procedure(path)
    scripted = None if model == "workflow" else _scripted_turns(model)
    task, db = _task(task_id, renamed)
    if scripted is None:
        brain: Any = WorkflowModel(task.ticket or "")
        model_said = WORKFLOW_MODEL
    else:
        model_said = f"scripted turns from {model}"
        brain = ScriptedModel(scripted)
    result = run_cascade(procedure, task.ticket or "", SoloToolSet(task, db), brain)
    calls = [(c.tool, c.arguments, c.content, c.error) for c in result.calls]
    reward = task_reward(task, calls, env_constructor(db))
    typer.echo(json.dumps({"task_id": task_id, "compiled_from": compiled_from(procedure), "model": model_said,
                           "procedure_verdict": result.run.verdict, "reason": result.run.reason,
                           "verdict": result.verdict, "llm_turns": result.llm_turns, "reward": reward.reward,
                           "calls": _calls_json(result.calls)}, indent=2, ensure_ascii=False))


def _scripted_turns(model: str) -> list[Any]:
    """`--model FILE`: a JSON list of turns, each `{"calls": [{"tool", "arguments"}], "text"}`."""
    from stretto_core.errors import InputError
    from stretto_core.procedures.cascade import ModelTurn
    from stretto_core.sessions.jsonfile import read_json_file

    try:
        turns = read_json_file(model, "scripted turns")
        if not isinstance(turns, list):
            raise InputError(model, "the scripted turns are not a JSON list of turns")
        return [ModelTurn(calls=[(c["tool"], c.get("arguments", {})) for c in t.get("calls", [])],
                          text=t.get("text", "")) for t in turns]
    except InputError as exc:
        raise StrettoError(f"--model is `workflow` or a file of scripted turns: {exc}") from exc
    except (AttributeError, KeyError, TypeError) as exc:
        raise StrettoError(f"--model {model}: a turn is not {{\"calls\": [{{\"tool\": ...}}], \"text\": ...}} "
                           f"({type(exc).__name__}: {exc})") from exc


@procedure_app.command("demonstrate")
def demonstrate_command(out: Path = typer.Option(..., "--out", help="A folder for the demonstration sessions."),
                        tasks: str = typer.Option("train", "--tasks", help="`train` (the 74 training tasks) or "
                                                                           "`generated:N` (N generated non-test tasks)."),
                        seed: int = typer.Option(0, "--seed")) -> None:
    """Record the written-workflow demonstrator on training or generated tasks (never test tasks).

    The demonstrator is a hand-written program of the written policy, not a recorded agent: a
    procedure compiled from its sessions says so in its provenance (`demonstration`), and its
    figures are a ceiling for the compiler, not what recorded agents' sessions teach.
    """
    from stretto_core.paths import manifest_path
    from stretto_core.procedures.tau2.harness import demonstrations, generated_task_ids, training_task_ids
    from stretto_core.sessions.manifest import load_manifest
    from stretto_core.sessions.store import write_session

    from stretto_core.cli.commands._values import output_folder

    output_folder(out, "--out")
    count = tasks.split(":", 1)[1] if tasks.startswith("generated:") else ""
    if tasks != "train" and not (count.isdigit() and int(count) > 0):
        raise StrettoError(f"--tasks must be `train` or `generated:N` (N at least 1), not {tasks!r}")
    if tasks == "train":
        ids, split = training_task_ids(), "train"
    else:
        ids, split = generated_task_ids(int(count), seed), "generated"
    manifest = load_manifest(manifest_path("tau2", "telecom"))
    sessions, rewards = demonstrations(ids, manifest, split)
    for session in sessions:
        write_session(session, out)
    typer.echo(f"wrote {len(sessions)} demonstrations to {out}: {sum(r >= 1 for r in rewards)} successful")


def register(app: typer.Typer) -> None:
    app.add_typer(procedure_app, name="procedure")
