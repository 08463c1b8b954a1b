"""The `stretto` command: one verb per module in `stretto_core/commands/`, each thin over the core.

Each command module exposes `register(app)`; this file only gathers them, so that verbs can be
added without touching a shared file. Errors that users can fix are `StrettoError`s and print as
one line naming what and where, never a traceback.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from stretto_core.cli import commands
from stretto_core.errors import StrettoError

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="stretto: learn which read-only lookups an agent will make, and make them for it.")


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_all()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; a StrettoError prints as `stretto: <message>` and exits 2."""
    try:
        app(args=argv, standalone_mode=True)
    except StrettoError as exc:
        print(f"stretto: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
