"""The CLI sweep: every verb and sub-verb, every option, walked from the CLI itself, each given the
hostile values of its type; each must be refused in one line naming the option or the path (exit 2),
never run on, never a traceback (issue 26, item 8).

Complete by construction: the commands and their options come from `leaf_commands()` (what
docs/cli.md is made from), so a verb or option added later is swept without a line here. A type
the sweep has no hostile values for fails, as does a command with no good invocation below: the
sweep cannot skip one silently. The tables of exceptions say, each line, why a value that looks
hostile is a meaningful one for that option.
"""

from __future__ import annotations

import inspect
import logging
import typing
from enum import Enum
from pathlib import Path
from typing import Any, Callable

import pytest

from cli_sweep_inputs import FOR_INPUTS, FOR_OUTPUT_FILES, FOR_OUTPUT_FOLDERS, TOY_APP, Good, make_good
from stretto_core.cli import main
from stretto_core.cli.reference import leaf_commands

MAX_ERROR_CHARS = 600
LEAST_COMMANDS = 34
"""Commands the CLI had when the sweep was written: fewer means the walk lost some."""

COMMANDS = dict(leaf_commands())

# -- what each option is ----------------------------------------------------------------------------------

OUTPUT_FILES = {"--out", "--json", "--plot", "--split-out", "--trace"}
"""Path options that a verb writes a file to; every other path is read."""
OUTPUT_FOLDERS = {"--home", "--store", ("ingest", "--out"), ("redact", "--out"), ("procedure demonstrate", "--out"),
                  ("bench", "--out")}
"""Path options that name a folder a verb writes into (made when missing)."""
PATHS_AS_TEXT = {("learn", "PATHS"), ("learn", "--prior")}
"""Options typed as text that take paths (or URLs of a shared store)."""

MISSING_OK = {
    ("proxy run", "--flow"): "a flow not learned yet: the proxy records only until it is",
    ("proxy setup", "--flow"): "a flow not learned yet: the proxy records only until it is",
}
"""Input paths that may not exist yet."""

FREE_TEXT = {
    ("proxy run", "--reads"): "tool names the server may list later",
    ("proxy run", "--tools"): "tool names the server may list later",
    ("proxy run", "--deny"): "tool names the server may list later",
    ("proxy run", "--app"): "the name sessions are recorded under, any",
    ("proxy run", "--redact-field"): "a field name sessions may hold later",
    ("proxy setup", "--name"): "the server's name in the host's config, any",
    ("redact", "--field"): "a field name, hashed wherever it occurs",
    ("procedure run", "--ticket"): "a ticket is any text",
}
"""Text options for which any non-empty value means something (so an unknown one is not refused)."""

ZERO_OK = {
    "--seed": "a seed is any whole number",
    "--theta": "θ = 0 looks up every candidate",
    "--site-prior": "a prior weighing nothing",
    "--agent-prior": "a prior weighing nothing",
    "--recalibrate-prior": "a site's own score unshrunk",
    "--workers": "0 counts in this process",
    "--per-call": "0 makes no lookup after a call (record only)",
    "--per-session": "0 makes no lookup in a session (record only)",
    "--holdout": "0 holds no session back",
    "--prior-weight": "a prior weighing nothing",
    "--min-reward": "a reward of 0 or more",
    "--settled": "0 stages every session file",
    "--tolerance": "report every change",
}
"""Numeric options for which 0 means something."""
NEGATIVE_OK = {"--seed": "a seed is any whole number"}
"""Numeric options for which a negative value means something."""
INFINITE_OK = {("flow stage", "--prior-half"): "inf: the prior keeps its weight"}
"""Float options for which infinity means something."""
FRACTIONS = {"--theta", "--holdout", "--test-fraction"}
"""Float options that are a probability or a fraction: above 1 means nothing."""
ABOVE_ONE_OK = {("flow threshold", "--theta"): "above 1 switches the site off"}
"""Fractions for which a value above 1 means something."""

REPORTS = {"doctor"}
"""Verbs that report a bad path in their report and exit 1 (a value refused before it runs, 2)."""


# -- the good invocation of each command -------------------------------------------------------------------

Base = Callable[[Good], dict[str, Any]]
"""A command's good invocation: parameter name -> its values (a flag: True or False); "--": after it."""

GOOD: dict[str, Base] = {
    "ablate": lambda g: {"--sessions": [g.sessions], "--draws": ["10"]},
    "bench": lambda g: {"--data": [g.bench_data], "--out": [g.out("bench")], "--quick": True, "--progress": False},
    "calibrate": lambda g: {"--flow": [g.flow], "--sessions": [g.sessions], "--draws": ["10"]},
    "ceiling": lambda g: {"PATHS": [g.sessions]},
    "costs": lambda g: {"--sessions": [g.sessions], "--replay": [g.replay]},
    "curves": lambda g: {"PATHS": [g.sessions], "--agent": ["scripted"], "--sizes": ["2"]},
    "demo": lambda g: {"--home": [g.out("demo")], "--sessions": ["4"], "--train": ["2"]},
    "doctor": lambda g: {"--home": [g.out("doctor")]},
    "flow commit": lambda g: {"DEPLOYMENT": [g.fresh_deployment()]},
    "flow diff": lambda g: {"OLD": [g.flow], "NEW": [g.flow]},
    "flow log": lambda g: {"DEPLOYMENT": [g.fresh_deployment()]},
    "flow merge": lambda g: {"A": [g.flow], "B": [g.flow], "--out": [g.out("m.flow.json")]},
    "flow promote": lambda g: {"PATH": [g.flow], "--sessions": [g.sessions], "--out": [g.out("p.flow.json")]},
    "flow rollback": lambda g: {"DEPLOYMENT": [g.fresh_deployment()]},
    "flow show": lambda g: {"PATH": [g.flow]},
    "flow stage": lambda g: {"DEPLOYMENT": [g.fresh_deployment()], "--settled": ["0"]},
    "flow threshold": lambda g: {"PATH": [g.flow], "--site": ["start"], "--theta": ["0.5"], "--out": [g.out("t.flow.json")]},
    "harnesses": lambda g: {"PATHS": [g.sessions], "--draws": ["10"]},
    "ingest": lambda g: {"SOURCE": ["tau2"], "PATHS": [g.tau2], "--out": [g.out("ingested")]},
    "learn": lambda g: {"PATHS": [g.sessions], "--out": [g.out("l.flow.json")], "--split": ["all"]},
    "procedure cascade": lambda g: {"PATH": [g.procedure], "--task-id": ["no-task"]},
    "procedure compile": lambda g: {"--sessions": [g.toy_sessions], "--app": [TOY_APP], "--out": [g.out("p.json")]},
    "procedure demonstrate": lambda g: {"--out": [g.out("demos")], "--tasks": ["generated:1"]},
    "procedure run": lambda g: {"PATH": [g.procedure], "--task-id": ["no-task"]},
    "procedure show": lambda g: {"PATH": [g.procedure]},
    "proxy run": lambda g: {"--flow": [g.flow], "--no-record": True, "--": ["true"]},
    "proxy setup": lambda g: {"--host": ["claude-code"], "--name": ["shop"], "--": ["true"]},
    "redact": lambda g: {"PATHS": [g.sessions], "--out": [g.out("redacted")]},
    "replay": lambda g: {"--flow": [g.flow], "--sessions": [g.sessions], "--json": [g.out("r.json")], "--processes": ["1"]},
    "review": lambda g: {"--flow": [g.flow], "--out": [g.out("review.html")]},
    "split": lambda g: {"PATHS": [g.sessions], "--out": [g.out("split.json")]},
    "store prune": lambda g: {"--older-than": ["30d"], "--store": [g.out("store")], "--dry-run": True},
    "sweep": lambda g: {"--flow": [g.flow], "--sessions": [g.sessions], "--thetas": ["0.3"]},
    "userwords": lambda g: {"SESSIONS": [g.bench_sessions], "--split-out": [g.out("split.json")], "--draws": ["10"]},
}

ALTERNATE: dict[tuple[str, str], Base] = {
    ("calibrate", "--replays"): lambda g: {"--replays": [g.next_replay, g.replay], "--draws": ["10"]},
}
"""Options that go with another good invocation than the command's (calibrate reads two replays
instead of a flow and sessions)."""


# -- the hostile values of each type -----------------------------------------------------------------------

def base_type(annotation: Any) -> Any:
    """The type an option's values have: Optional[X], List[X] and list[X] are X."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, list, getattr(__import__("types"), "UnionType", None)):
        return base_type(args[0])
    return annotation


def annotation_of(command: Any, param: Any) -> Any:
    """The Python type the verb's function declares for a parameter (stable across typer versions)."""
    return typing.get_type_hints(inspect.unwrap(command.callback))[param.name]


def path_role(verb: str, name: str) -> str:
    """Whether a path option is read, or names a file or a folder to write."""
    if (verb, name) in OUTPUT_FOLDERS or name in OUTPUT_FOLDERS:
        return "output folder"
    return "output file" if name in OUTPUT_FILES else "input"


def hostile_values(verb: str, param: Any, kind: Any) -> list[tuple[str, Any]]:
    """(label, value) for each hostile value of a parameter; a value is a string, or a path kind's
    name (`("path", kind)`) made afresh for each cell. Raises for a type with none."""
    name = flag(param)
    if kind is bool:
        return []  # a flag takes no value: nothing to be hostile with
    if kind is Path or (verb, name) in PATHS_AS_TEXT:
        kinds = {"input": FOR_INPUTS, "output file": FOR_OUTPUT_FILES,
                 "output folder": FOR_OUTPUT_FOLDERS}[path_role(verb, name)]
        return [(k, ("path", k)) for k in kinds if not (k == "missing" and (verb, name) in MISSING_OK)] \
            + [("empty", "")]
    if kind is float:
        out = [("nan", "nan"), ("not a number", "x")]
        if (verb, name) not in INFINITE_OK:
            out.append(("inf", "inf"))
        if name not in NEGATIVE_OK:
            out.append(("negative", "-1"))
        if name not in ZERO_OK:
            out.append(("zero", "0"))
        if name in FRACTIONS and (verb, name) not in ABOVE_ONE_OK:
            out.append(("above 1", "1.5"))
        return out
    if kind is int:
        out = [("not whole", "1.5")]
        if name not in NEGATIVE_OK:
            out.append(("negative", "-1"))
        if name not in ZERO_OK:
            out.append(("zero", "0"))
        return out
    if kind is str or (isinstance(kind, type) and issubclass(kind, Enum)):
        out = [("empty", "")]
        if (verb, name) not in FREE_TEXT:
            out.append(("unknown", "no-such-value"))
        return out
    raise AssertionError(f"the sweep has no hostile values for {kind!r}, the type of `stretto {verb}` "
                         f"{param.opts}: add them to hostile_values")


def cells() -> list[Any]:
    out = []
    for verb, command in COMMANDS.items():
        for param in command.params:
            kind = base_type(annotation_of(command, param))
            for label, value in hostile_values(verb, param, kind):
                out.append(pytest.param(verb, flag(param), value, id=f"{verb} {flag(param)} <- {label}"))
    return out


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def flag(param: Any) -> str:
    """An option's first flag (`--out`), an argument's name in capitals (`PATHS`)."""
    return param.opts[0] if param.param_type_name == "option" else param.name.upper()


def render(command: Any, values: dict[str, Any]) -> list[str]:
    """The argv of a command with these parameter values: options first, then arguments, then `--`."""
    options: list[str] = []
    arguments: list[str] = []
    for param in command.params:
        if flag(param) not in values:
            continue
        given = values[flag(param)]
        if param.param_type_name == "argument":
            arguments += [str(v) for v in given]
        elif given is True or given is False:
            options.append(param.opts[0] if given else param.secondary_opts[0])
        else:
            for v in given:
                options += [param.opts[0], str(v)]
    rest = ["--", *values["--"]] if "--" in values else []
    return options + arguments + rest


# -- the sweep ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Good:
    return make_good(tmp_path_factory.mktemp("sweep-good"))


@pytest.fixture(autouse=True)
def _no_proxy_serves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The proxy loads its flow and store as it would, but serves nothing (a value it accepted
    would leave it serving stdin): it then exits 0, which the sweep counts as the value accepted.
    Its logging setup is undone after each cell."""
    monkeypatch.setenv("STRETTO_REDACT_KEY", "sweep-key-0123456789abcdef")
    monkeypatch.setenv("STRETTO_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    try:
        import stretto_mcp.run as run
    except ImportError:
        return

    async def loads_only(config: Any, host: Any = None, *, owns_process: bool = False) -> int:
        run.build_stretto(config)
        return 0

    logger = logging.getLogger("stretto")
    for name in ("handlers", "level", "propagate"):
        monkeypatch.setattr(logger, name, list(logger.handlers) if name == "handlers" else getattr(logger, name))
    monkeypatch.setattr(run, "serve", loads_only)
    monkeypatch.setattr(run, "_fast_event_loop", lambda: None)


def test_the_sweep_walks_every_command_and_each_has_a_good_invocation(good: Good) -> None:
    assert len(COMMANDS) >= LEAST_COMMANDS, sorted(COMMANDS)
    assert sorted(COMMANDS) == sorted(GOOD), "a command has no good invocation in GOOD, or GOOD names a gone one"
    for verb, command in COMMANDS.items():
        names = {flag(p) for p in command.params} | {"--"}
        assert set(GOOD[verb](good)) <= names, f"GOOD[{verb!r}] names a parameter {verb} does not have"


def test_every_option_that_takes_a_value_has_hostile_cells() -> None:
    swept = {(values[0], values[1]) for values in (c.values for c in CELLS)}
    for verb, command in COMMANDS.items():
        for param in command.params:
            kind = base_type(annotation_of(command, param))
            if kind is bool:
                continue
            assert (verb, flag(param)) in swept, f"`stretto {verb} {flag(param)}` is not swept"


def test_a_type_without_hostile_values_fails_the_sweep() -> None:
    command = COMMANDS["split"]
    with pytest.raises(AssertionError, match="no hostile values"):
        hostile_values("split", command.params[0], complex)


CELLS = cells()


@pytest.mark.parametrize("verb,name,value", CELLS)
def test_a_hostile_value_is_refused_in_one_line_naming_it(good: Good, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                         verb: str, name: str, value: Any) -> None:
    command = COMMANDS[verb]
    if verb.startswith("proxy"):
        pytest.importorskip("stretto_mcp.run")
    param = next(p for p in command.params if flag(p) == name)
    values = dict(ALTERNATE.get((verb, name), GOOD[verb])(good))
    named = [*param.opts] if param.param_type_name == "option" else [name]
    if isinstance(value, tuple):
        kind = value[1]
        hostile = tmp_path / f"in-{kind.replace(' ', '-')}" / "hostile-value.json"
        if kind != "under a file":
            hostile.parent.mkdir(parents=True, exist_ok=True)
        {**FOR_INPUTS, **FOR_OUTPUT_FILES, **FOR_OUTPUT_FOLDERS}[kind](hostile)
        value = str(hostile)
        named.append("hostile-value")
    elif value and not _number(value):
        named.append(repr(value))  # a word refused by quoting it is named too (`unknown split 'x'`)
    given = values.get(name)
    values[name] = [value] + (given[1:] if isinstance(given, list) else [])  # a repeated option: the first
    argv = verb.split() + render(command, values)
    capsys.readouterr()
    try:
        code = main(argv)
    except BaseException as exc:  # noqa: BLE001 - any escape is the traceback a user would see
        pytest.fail(f"stretto {' '.join(argv)}: raised {type(exc).__name__}: {str(exc)[:300]}")
    captured = capsys.readouterr()
    said = captured.err + captured.out
    expected = (1, 2) if verb in REPORTS else (2,)
    assert code in expected, f"exit {code} (not {expected}); said: {said[-600:]}"
    assert "Traceback" not in said
    if verb in REPORTS and code == 1:
        assert any(n in said for n in named), f"the report does not name {named}: {said[-600:]}"
        return
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert lines, "nothing was said on stderr"
    last = lines[-1]
    assert last.startswith("stretto") and len(last) <= MAX_ERROR_CHARS, last[:MAX_ERROR_CHARS]
    assert any(n in last for n in named), f"the error does not name {' or '.join(named)}: {last[:MAX_ERROR_CHARS]}"
