"""`stretto proxy [options] -- <server command>` and `stretto proxy setup --host H --name N -- <cmd>`.

The proxy itself lives in `stretto_mcp` (extra `stretto[mcp]`) and is imported only when one of
these commands runs, so `stretto --help` stays fast and works without the extra.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, List, Optional

import click
import typer

from stretto_core.errors import OptionError, StrettoError


class _ProxyGroup(typer.core.TyperGroup):
    """`stretto proxy ...` runs the proxy unless the first word names a subcommand (`setup`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


proxy_app = typer.Typer(cls=_ProxyGroup, no_args_is_help=True,
                        help="An MCP proxy in front of a server: forwards everything, records the session, "
                             "and appends the flow's read-only lookups to the agent's tool results.")

_EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False}


def _stretto_mcp():
    try:
        import stretto_mcp.run as run
    except ImportError as exc:
        raise StrettoError(f"the proxy needs the mcp extra: pip install \"stretto[mcp]\" ({exc})") from exc
    return run


def _names(value: Optional[str]) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


@proxy_app.command("run", context_settings=_EXTRA)
def run_command(
    ctx: typer.Context,
    flow: Optional[Path] = typer.Option(None, "--flow", help="The flow to serve; without one the proxy only records."),
    store: Optional[Path] = typer.Option(None, "--store", help="Where sessions are recorded (default .stretto/sessions)."),
    no_record: bool = typer.Option(False, "--no-record", help="Record nothing."),
    reads: Optional[str] = typer.Option(None, "--reads", help="Tools the server leaves unannotated that you vouch "
                                                              "are read-only (a,b); an annotation always wins."),
    tools: Optional[str] = typer.Option(None, "--tools", help="Allowlist: look up only these tools (a,b)."),
    deny: Optional[str] = typer.Option(None, "--deny", help="Denylist: never look up these tools (a,b)."),
    theta: Optional[float] = typer.Option(None, "--theta", help="The speculator's threshold."),
    per_call: Optional[int] = typer.Option(None, "--per-call", help="At most this many lookups after one call."),
    per_session: Optional[int] = typer.Option(None, "--per-session", help="At most this many lookups a session."),
    lookup_timeout: Optional[float] = typer.Option(None, "--lookup-timeout", help="Seconds one lookup may take."),
    call_budget: Optional[float] = typer.Option(None, "--call-budget", help="Seconds the lookups after one call may take."),
    server_timeout: float = typer.Option(600.0, "--server-timeout", help="Seconds a request may go unanswered "
                                                                        "(without progress) before the server is "
                                                                        "taken as hung."),
    upstream: Optional[str] = typer.Option(None, "--upstream", help="A Streamable HTTP server's URL instead of a command."),
    app: Optional[str] = typer.Option(None, "--app", help="The app name recorded in sessions."),
    solo: bool = typer.Option(False, "--solo", help="No user speaks to the agent: record and serve its sessions "
                                                    "as solo (a flow serves each mode by its own sessions)."),
    log_level: str = typer.Option("INFO", "--log-level", help="stderr verbosity: DEBUG, INFO, WARNING, ERROR."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Also write every message both ways to this file."),
    retain_days: Optional[float] = typer.Option(None, "--retain-days", help="Delete recorded sessions older than "
                                                                            "this many days when the proxy starts."),
    redact_field: List[str] = typer.Option([], "--redact-field", help="Hash the values under this field before a "
                                                                      "session is written (key: STRETTO_REDACT_KEY; "
                                                                      "repeatable)."),
    shadow: bool = typer.Option(False, "--shadow", help="Decide as when serving and record each would-be lookup, "
                                                        "but call and append nothing (a trial to watch)."),
    holdout: float = typer.Option(0.0, "--holdout", help="The fraction of sessions, drawn at random, served "
                                                         "nothing and recorded as mode holdout (e.g. 0.1)."),
) -> None:
    """Serve the proxy on stdio in front of `-- <server command>` (or `--upstream URL`)."""
    command = list(ctx.args)
    _check_paths(store, trace)
    run = _stretto_mcp()
    config = _proxy_config(run, command, ctx.params)
    raise SystemExit(run.run_proxy(config))


def _proxy_config(run: Any, command: list[str], params: dict[str, Any]) -> Any:
    """The proxy's config from the run command's parsed options, or one line naming the bad one.
    `proxy setup` checks its `--proxy-option` words through here too, so what a host would start
    is refused when it is written, not at every start."""
    p = params
    if bool(command) == bool(p["upstream"]):
        raise StrettoError("give the server either as `-- <command>` or as `--upstream URL`, not both or neither")
    if p["tools"] is not None and not _names(p["tools"]):
        raise StrettoError("--tools names no tool; give the tools to look up (a,b), or leave it out to allow "
                           "every read")
    try:
        return run.ProxyConfig.checked(
            command=command, upstream=p["upstream"], flow=p["flow"], store=p["store"], record=not p["no_record"],
            reads=_names(p["reads"]), allow=None if p["tools"] is None else _names(p["tools"]),
            deny=_names(p["deny"]), theta=p["theta"], per_call=p["per_call"], per_session=p["per_session"],
            lookup_timeout=p["lookup_timeout"], call_budget=p["call_budget"], server_timeout=p["server_timeout"],
            app=p["app"], solo=p["solo"], log_level=p["log_level"], trace=p["trace"], shadow=p["shadow"],
            holdout=p["holdout"], retain_days=p["retain_days"], redact_fields=list(p["redact_field"]))
    except OptionError as exc:
        raise StrettoError(_flagged(str(exc))) from None


def _check_proxy_words(ctx: typer.Context, words: list[str], server: list[str]) -> None:
    """The `--proxy-option` words parsed as `stretto proxy` will parse them (types: `--theta abc`)
    and checked as it will check them (values: `--theta 5`, `--per-call -1`)."""
    run_cmd = getattr(ctx.parent.command, "commands", {}).get("run") if ctx.parent is not None else None
    if run_cmd is None or not words:
        return
    try:
        parsed = run_cmd.make_context("run", [*words, "--", "server"], parent=ctx.parent)
    except Exception as exc:  # noqa: BLE001 - the CLI's usage errors (their class is the CLI library's)
        message = getattr(exc, "format_message", None)
        if not callable(message):
            raise
        raise StrettoError("--proxy-option: " + " ".join(str(message()).split())) from None
    try:
        _proxy_config(_stretto_mcp(), server, parsed.params)
    except StrettoError as exc:
        raise StrettoError(f"--proxy-option: {exc}") from None


FLAGS = {"allow": "--tools", "redact_fields": "--redact-field", "record": "--no-record"}
"""The ProxyConfig fields whose option is not `--` and the field's name in kebab case."""


def _flagged(message: str) -> str:
    """A ProxyConfig error with each field it names written as the option a user typed."""
    import re

    return re.sub(r"\b([a-z]+(?:_[a-z]+)*)(?= must| holds)",
                  lambda m: FLAGS.get(m[1], "--" + m[1].replace("_", "-")), message)


def _check_paths(store: Optional[Path], trace: Optional[Path]) -> None:
    """The store is a folder, the trace a file to append to: each checked before the server starts
    (the flow is read, and refused in one line naming it, when the proxy loads it)."""
    from stretto_core.cli.commands._values import output_folder
    from stretto_core.sessions.jsonfile import output_path

    if store is not None:
        output_folder(store, "--store")
    if trace is not None:
        output_path(trace, "trace")


@proxy_app.command("setup", context_settings=_EXTRA)
def setup_command(
    ctx: typer.Context,
    host: str = typer.Option(..., "--host", help="claude-code, claude-desktop, cursor or vscode."),
    name: str = typer.Option(..., "--name", help="The server's name in the host's config."),
    scope: str = typer.Option("project", "--scope", help="project (this folder) or user (your profile)."),
    flow: Optional[Path] = typer.Option(None, "--flow", help="The flow the proxy serves (made absolute)."),
    store: Optional[Path] = typer.Option(None, "--store", help="Where the proxy records sessions (made absolute)."),
    proxy_option: List[str] = typer.Option([], "--proxy-option", help="Another `stretto proxy` option, as you "
                                                                       "would type it (repeatable)."),
    write: bool = typer.Option(False, "--write", help="Write the config file (asks first unless --yes)."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask before writing."),
    replace: bool = typer.Option(False, "--replace", help="Replace a server entry of the same name."),
) -> None:
    """Print (or `--write`) the host config entry that runs the server behind the proxy."""
    try:
        from stretto_mcp import hosts
    except ImportError as exc:
        raise StrettoError(f"setup needs the mcp extra: pip install \"stretto[mcp]\" ({exc})") from exc
    if host not in hosts.HOSTS:
        raise StrettoError(f"--host: unknown host {host!r}; hosts: {', '.join(hosts.HOSTS)}")
    if scope not in ("project", "user"):
        raise StrettoError(f"--scope is project or user, not {scope!r}")
    server = list(ctx.args)
    if not server:
        raise StrettoError("give the server's command after `--`")
    args: list[str] = []
    if flow is not None:
        from stretto_core.flow.ir import load_flow

        if flow.exists():  # one not learned yet is fine: the proxy records only until it is
            load_flow(flow)  # one the proxy cannot read would fail it at every start
        args += ["--flow", str(flow.resolve())]
    if store is not None:
        from stretto_core.cli.commands._values import output_folder

        args += ["--store", str(output_folder(store, "--store").resolve())]
    words = [word for option in proxy_option for word in _proxy_option(ctx, option)]
    _check_proxy_words(ctx, words, server)
    args += words
    try:
        p = hosts.plan(host, name, hosts.proxy_command(server, args), scope=scope, replace=replace)
    except ValueError as exc:
        raise StrettoError(str(exc)) from exc
    typer.echo(f"# {host}: {p.path}")
    typer.echo(p.snippet())
    if not write:
        typer.echo(f"# not written; run again with --write to add it to {p.path}")
        return
    if not yes and not typer.confirm(f"Write server {name!r} into {p.path}?", default=False):
        typer.echo("not written")
        raise SystemExit(1)
    try:
        written = hosts.write_plan(p)
    except (OSError, ValueError) as exc:
        raise StrettoError(f"could not write {p.path}: {exc}") from exc
    typer.echo(f"wrote {written}" + (" (the old file is kept as .bak)" if p.before else "")
               + (f" (replaced the entry {name!r} it had)" if p.replaces is not None else ""))


def _proxy_option(ctx: typer.Context, option: str) -> list[str]:
    """One `--proxy-option`, split as a shell would; refused when it names an option `stretto proxy`
    does not have (the host would start a proxy that exits at once, every time)."""
    try:
        words = shlex.split(option)
    except ValueError as exc:
        raise StrettoError(f"--proxy-option {option!r}: {exc}") from None
    run = getattr(ctx.parent.command, "commands", {}).get("run") if ctx.parent is not None else None
    known = {o: p for p in getattr(run, "params", []) for o in [*p.opts, *getattr(p, "secondary_opts", [])]}
    value_next = False
    for word in words:
        if value_next:
            value_next = False
            continue
        flag = word.split("=", 1)[0]
        if flag not in known:
            raise StrettoError(f"--proxy-option {option!r}: `stretto proxy` has no option {flag!r}")
        value_next = "=" not in word and not getattr(known[flag], "is_flag", False)
    if value_next:
        raise StrettoError(f"--proxy-option {option!r}: {words[-1]} needs a value")
    return words


def register(app: typer.Typer) -> None:
    app.add_typer(proxy_app, name="proxy")
