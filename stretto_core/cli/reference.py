"""The CLI reference, generated from the CLI itself (`docs/cli.md`; a test fails when it is stale)."""

from __future__ import annotations

from typing import Any, Iterator

from stretto_core.cli import HELP, load_verb
from stretto_core.cli.verbs import VERBS


def _param_row(param: Any) -> str | None:
    opts = list(getattr(param, "opts", [])) + list(getattr(param, "secondary_opts", []))
    if getattr(param, "param_type_name", "") == "argument":
        name = f"`{param.name.upper()}`" + ("..." if getattr(param, "nargs", 1) == -1 else "")
    else:
        if "--help" in opts:
            return None
        name = " / ".join(f"`{o}`" for o in opts)
    text = (getattr(param, "help", None) or "").replace("\n", " ").replace("|", "\\|")
    default = getattr(param, "default", None)
    shown = "" if default in (None, (), [], False) or getattr(param, "required", False) else f" (default: `{default}`)"
    required = " **required**" if getattr(param, "required", False) else ""
    return f"| {name} | {text}{shown}{required} |"


def _command(name: str, command: Any, level: int) -> list[str]:
    lines = [f"{'#' * level} `stretto {name}`", "", (command.help or "").strip().split("\n\n")[0], ""]
    rows = [r for r in (_param_row(p) for p in command.params) if r]
    if rows:
        lines += ["| argument or option | meaning |", "|---|---|", *rows, ""]
    for sub_name, sub in sorted(getattr(command, "commands", {}).items()):
        lines += _command(f"{name} {sub_name}", sub, level + 1)
    return lines


def leaf_commands() -> Iterator[tuple[str, Any]]:
    """Every command a user runs ("learn", "flow show", ...) with its click command, walked from the
    CLI itself (groups opened, not listed), so a sweep over them cannot miss a verb added later."""
    for name in sorted(VERBS):
        yield from _leaves(name, load_verb(VERBS[name][0])[name])


def _leaves(name: str, command: Any) -> Iterator[tuple[str, Any]]:
    subs = getattr(command, "commands", None)
    if not subs:
        yield name, command
        return
    for sub_name, sub in sorted(subs.items()):
        yield from _leaves(f"{name} {sub_name}", sub)


def render_reference() -> str:
    """Every verb with its arguments and options, as Markdown."""
    lines = ["# CLI reference", "", HELP, "",
             "Generated from the CLI by `python -m stretto_core.cli.reference > docs/cli.md`; "
             "`tests/test_docs.py` fails when this page is stale.", ""]
    for name in sorted(VERBS):
        module = VERBS[name][0]
        lines += _command(name, load_verb(module)[name], 2)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render_reference(), end="")
