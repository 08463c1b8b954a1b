"""An empty value (`--out ""`, `--app=`, a `""` argument) means nothing to any stretto verb: it is
refused before the verb runs, naming the option.

Without this an empty path is `Path("")`, the current folder (`--out ""` wrote into `.`), and an
empty name matches nothing, silently. One check covers every verb and every option added later.
Words after `--` (a server's command line for `stretto proxy`) are the server's, never checked.
"""

from __future__ import annotations

from typing import Any


def has_empty(args: list[str]) -> bool:
    """Whether any word before `--` is empty or an empty `--option=` (cheap: no command is built)."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "" or (arg.startswith("--") and arg.endswith("=")):
            return True
    return False


def leaf(group: Any, args: list[str]) -> tuple[Any, list[str], int]:
    """The command `args` (the verb first) run, the words naming it, and where its own words start.
    A group that runs a default command (`stretto proxy [options]` is `proxy run`) goes to it."""
    command, words, at = group, [], 0
    while getattr(command, "commands", None):
        subs = command.commands
        if at < len(args) and args[at] in subs:
            command, at = subs[args[at]], at + 1
            words.append(args[at - 1])
        elif "run" in subs:
            command, words = subs["run"], words + ["run"]
        else:
            break
    return command, words, at


def empty_value(group: Any, args: list[str]) -> str | None:
    """The one-line error for the first empty value in `args`, None when there is none."""
    command, words, at = leaf(group, args)
    path = " ".join(words)
    options = {o: p for p in getattr(command, "params", []) if p.param_type_name == "option"
               for o in [*p.opts, *getattr(p, "secondary_opts", [])]}
    previous = ""
    for arg in args[at:]:
        if arg == "--":
            return None
        if arg.startswith("--") and arg.endswith("=") and arg[:-1] in options:
            return f"stretto: {path}: {arg[:-1]} is empty; give it a value (see `stretto {path} --help`)"
        if arg == "":
            taker = options.get(previous)
            if taker is not None and not getattr(taker, "is_flag", False):
                return f"stretto: {path}: {previous} is empty; give it a value (see `stretto {path} --help`)"
            names = [p.name.upper() for p in getattr(command, "params", []) if p.param_type_name == "argument"]
            return f"stretto: {path}: an argument is empty; give {' and '.join(names) or 'none'} a value"
        previous = arg
    return None
