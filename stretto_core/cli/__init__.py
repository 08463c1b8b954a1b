"""The `stretto` command: one verb per module in `stretto_core/cli/commands/`, each thin over the core.

Verbs load only when they run (`verbs.VERBS` names them for `--help`), so the CLI starts fast.
Each command module exposes `register(app)`. Errors that users can fix are `StrettoError`s and
print as one line naming what and where, never a traceback.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Any

import click

from stretto_core.cli.verbs import VERBS
from stretto_core.errors import StrettoError

HELP = "stretto: learn which read-only lookups an agent will make, and make them for it."
COMMANDS = "stretto_core.cli.commands"


def verb_modules() -> list[str]:
    """The command modules on disk (found without importing them)."""
    package = importlib.util.find_spec(COMMANDS)
    assert package is not None and package.submodule_search_locations is not None
    return sorted(m.name for m in pkgutil.iter_modules(package.submodule_search_locations)
                  if not m.name.startswith("_"))


def load_verb(module: str) -> dict[str, click.Command]:
    """The click commands one command module registers."""
    import typer
    import typer.main

    holder = typer.Typer(add_completion=False)
    importlib.import_module(f"{COMMANDS}.{module}").register(holder)
    group = typer.main.get_group(holder)
    return dict(group.commands)


class LazyGroup(click.Group):
    """A click group whose verbs import on first use; help lists them from `VERBS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        unlisted = [m for m in verb_modules() if m not in {mod for mod, _ in VERBS.values()}]
        return sorted(set(VERBS) | set(unlisted))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = VERBS[name][0] if name in VERBS else (name if name in verb_modules() else None)
        if module is None:
            return None
        return load_verb(module).get(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in VERBS:
                rows.append((name, VERBS[name][1]))
            else:
                command = self.get_command(ctx, name)
                rows.append((name, command.get_short_help_str(80) if command else ""))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


cli = LazyGroup(name="stretto", help=HELP, no_args_is_help=True,
                context_settings={"help_option_names": ["--help", "-h"]})


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; a StrettoError prints as `stretto: <message>` and exits 2."""
    try:
        cli.main(args=argv, prog_name="stretto", standalone_mode=True)
    except StrettoError as exc:
        print(f"stretto: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


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
