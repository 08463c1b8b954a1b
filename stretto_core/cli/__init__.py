"""The `stretto` command: one verb per module in `stretto_core/cli/commands/`, each thin over the core.

Verbs load only when they run (`verbs.VERBS` names them for `--help`), so the CLI starts fast.
Each command module exposes `register(app)`. Errors that users can fix are `StrettoError`s and
print as one line naming what and where, never a traceback.

`--json -` writes a verb's JSON to stdout (its table and messages go to stderr then), for
every verb with a `--json FILE` option. `stretto --version` prints the version; `stretto --show-completion [bash|zsh|fish]` prints the
shell's completion script (click's), which completes verbs and each verb's options, loading a
verb only when its options are asked for.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import Any

from stretto_core.cli.empty import empty_value, has_empty
from stretto_core.cli.verbs import GROUPS, VERBS, group_of
from stretto_core.errors import StrettoError

HELP = "stretto: learn which read-only lookups an agent will make, and make them for it."
COMMANDS = "stretto_core.cli.commands"
COMPLETE_VAR = "_STRETTO_COMPLETE"
"""The environment variable click's completion scripts set when they ask for completions."""
SHELLS = ("bash", "zsh", "fish")


def verb_modules() -> list[str]:
    """The command modules on disk (found without importing them)."""
    package = importlib.util.find_spec(COMMANDS)
    assert package is not None and package.submodule_search_locations is not None
    return sorted(m.name for m in pkgutil.iter_modules(package.submodule_search_locations)
                  if not m.name.startswith("_"))


def verb_app(module: str) -> Any:
    """A typer app with one command module's verbs registered (and a group, so the verb is named)."""
    import typer

    app = typer.Typer(no_args_is_help=True, add_completion=False, help=HELP)
    app.callback()(_group)
    importlib.import_module(f"{COMMANDS}.{module}").register(app)
    return app


def _group() -> None:
    """stretto: learn which read-only lookups an agent will make, and make them for it."""


def load_verb(module: str) -> dict[str, Any]:
    """The commands one command module registers, by name."""
    import typer.main

    group = typer.main.get_group(verb_app(module))
    return dict(group.commands)


def render_help() -> str:
    """`stretto --help`: the verbs and their one-line help, from the table, by group."""
    width = max(len(name) for name in VERBS)
    lines = ["Usage: stretto VERB [OPTIONS] [ARGS]...", "", HELP]
    for group, heading in GROUPS.items():
        lines += ["", f"{heading}:"]
        lines += [f"  {name:<{width}}  {text}" for name, (_, text) in sorted(VERBS.items())
                  if group_of(name) == group]
    lines += ["", "Options:", "  --version                 Print stretto's version.",
              "  --show-completion [SHELL] Print the completion script for bash, zsh or fish.",
              "", "Run `stretto VERB --help` for a verb's options."]
    return "\n".join(lines)


def version() -> str:
    """The installed stretto's version."""
    from stretto_core.version import __version__

    return __version__


def lazy_group() -> Any:
    """Every verb as one click group whose verbs load only when asked for (for shell completion)."""
    import click

    class Verbs(click.Group):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted(VERBS)

        def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
            return load_verb(VERBS[name][0]).get(name) if name in VERBS else None

    return Verbs(name="stretto", help=HELP)


def completion_script(shell: str | None) -> str:
    """The script that makes `shell` complete `stretto` (default: the login shell, $SHELL)."""
    from click.shell_completion import get_completion_class

    shell = shell or os.path.basename(os.environ.get("SHELL", "")) or "bash"
    kind = get_completion_class(shell) if shell in SHELLS else None
    if kind is None:
        raise StrettoError(f"--show-completion: no completion for shell {shell!r}; one of {', '.join(SHELLS)}")
    return kind(lazy_group(), {}, "stretto", COMPLETE_VAR).source()


def _top_options(args: list[str]) -> int | None:
    """`--version` and `--show-completion`, handled before any verb; None when neither was asked."""
    if args[0] == "--version":
        print(f"stretto {version()}")
        return 0
    if args[0] == "--show-completion":
        try:
            print(completion_script(args[1] if len(args) > 1 else None))
        except StrettoError as exc:
            print(f"stretto: {exc}", file=sys.stderr)
            return 2
        return 0
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; a StrettoError prints as `stretto: <message>` and exits 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get(COMPLETE_VAR):  # a completion script asking what to complete
        code = lazy_group().main(args=args, prog_name="stretto", complete_var=COMPLETE_VAR, standalone_mode=False)
        return code if isinstance(code, int) else 0
    if not args or args[0] in ("-h", "--help"):
        print(render_help())
        return 0
    top = _top_options(args)
    if top is not None:
        return top
    module = VERBS[args[0]][0] if args[0] in VERBS else None
    if module is None:
        print(f"stretto: no verb {args[0]!r}; the verbs are {', '.join(sorted(VERBS))}", file=sys.stderr)
        return 2
    if json_to_stdout(args) is not None:
        return run_json_to_stdout(module, args)
    return run_verb(module, args)


def json_to_stdout(args: list[str]) -> int | None:
    """Where `--json -` (or `--json=-`) is among the arguments; None when it is not."""
    for i, arg in enumerate(args):
        if arg == "--":
            return None
        if arg == "--json=-" or (arg == "--json" and i + 1 < len(args) and args[i + 1] == "-"):
            return i
    return None


def run_json_to_stdout(module: str, args: list[str]) -> int:
    """Run a verb with `--json -`: its JSON goes to a private temporary file, everything it prints
    to stderr, then the JSON alone to stdout (so `stretto replay ... --json - | jq` works)."""
    import contextlib
    import tempfile
    from pathlib import Path

    at = json_to_stdout(args)
    assert at is not None
    with tempfile.TemporaryDirectory(prefix="stretto-json-") as folder:
        target = str(Path(folder) / "out.json")
        given = args[:at] + ["--json", target] + args[at + (1 if args[at] == "--json=-" else 2):]
        with contextlib.redirect_stdout(sys.stderr):
            code = run_verb(module, given)
        if code == 0 and os.path.exists(target):
            text = Path(target).read_text(encoding="utf-8")
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
            sys.stdout.flush()
    return code


def run_verb(module: str, args: list[str]) -> int:
    """Run one verb's command module with `args` (the verb first); its exit code."""
    app = verb_app(module)
    if has_empty(args):
        import typer.main

        empty = empty_value(typer.main.get_group(app), args)
        if empty is not None:
            print(empty, file=sys.stderr)
            return 2
    try:
        code = app(args=args, prog_name="stretto", standalone_mode=False)
    except StrettoError as exc:
        print(f"stretto: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Exception as exc:  # noqa: BLE001 - click's usage errors and aborts; anything else re-raised
        said = usage_error(exc, args[0])
        if said is None:
            raise
        if said[0]:
            print(said[0], file=sys.stderr)
        return said[1]
    return code if isinstance(code, int) else 0


def usage_error(exc: BaseException, verb: str) -> tuple[str, int] | None:
    """A click usage error (a bad option value, a missing option) or an abort as one line and its
    exit code; None for any other exception."""
    import typer

    if isinstance(exc, typer.Abort):
        return "stretto: aborted", 1
    message = getattr(exc, "format_message", None)
    code = getattr(exc, "exit_code", None)
    if not callable(message) or not isinstance(code, int):
        return None
    text = " ".join(str(message()).split())
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or f"stretto {verb}"
    if not text:  # a group called bare: its help was printed already
        return "", code
    return f"stretto: {command.removeprefix('stretto ')}: {text} (see `{command} --help`)", code


def __getattr__(name: str) -> Any:
    if name == "app":  # every verb registered on one typer app, for typer's test runner
        import typer

        app = typer.Typer(no_args_is_help=True, add_completion=False, help=HELP)
        for module in verb_modules():
            importlib.import_module(f"{COMMANDS}.{module}").register(app)
        return app
    raise AttributeError(name)


if __name__ == "__main__":
    raise SystemExit(main())
