"""Every verb, given a bad file or a bad option, says so in one line naming it, exits non-zero and
shows no traceback: missing, empty, a folder, truncated, the wrong shape, binary, UTF-16, nested
too deeply, one huge line, NaN values."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from shop_sessions import TAU2_RUN, shop_flow, write_shop_files
from stretto_core.cli import main
from stretto_core.evaluate.replay.inputs import save_replay
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.splits import make_split_file, save_split_file

MAX_ERROR_CHARS = 600
"""The error line's length at most: a snippet of what was read, never the file."""


@dataclass
class Good:
    """Good inputs every verb accepts, so that each case breaks exactly one."""

    root: Path
    sessions: Path
    session_file: Path
    flow: Path
    manifest: Path
    split: Path
    replay: Path
    tau2: Path
    agentdojo: Path
    workbench: Path


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Good:
    root = tmp_path_factory.mktemp("good")
    recorded, sessions, flow, manifest = write_shop_files(root)
    split = root / "split.json"
    save_split_file(make_split_file([s.header for s in recorded]), split)
    replay = root / "replay.json"
    save_replay(replay_sessions(FlowRuntime(shop_flow(12)), recorded, ReplayOptions(processes=1)), replay)
    tau2 = root / "tau2.json"
    tau2.write_text(json.dumps(TAU2_RUN))
    agentdojo = root / "agentdojo.json"
    agentdojo.write_text(json.dumps({"suite_name": "travel", "user_task_id": "user_task_0", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}))
    workbench = root / "workbench.csv"
    workbench.write_text('query,function_calls,full_response,error\nhi,[],"{\'input\': \'hi\', \'output\': '
                         '\'hello\', \'intermediate_steps\': []}",\n')
    return Good(root, sessions, sorted(sessions.glob("*.jsonl"))[0], flow, manifest, split, replay, tau2,
                agentdojo, workbench)


# -- the bad files ------------------------------------------------------------------------------

NAN_KEYS = ("reward", "alpha", "theta", "test_fraction", "stretto_manifest")


def _with_nan(text: str) -> str:
    """The text with a number made NaN (JSON as Python writes it): a reward, α, θ, a version."""
    try:
        data, rest = json.loads(text), ""  # a JSON file
    except ValueError:
        first, _, rest = text.partition("\n")  # a session: its header
        data = json.loads(first)
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            hit = next((k for k in NAN_KEYS if isinstance(node.get(k), (int, float))), None)
            if hit is not None:
                node[hit] = float("nan")
                break
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    else:
        raise AssertionError("no number to make NaN")
    return json.dumps(data) + ("\n" + rest if rest else "")


BAD: dict[str, Callable[[Path, str], None]] = {
    "missing": lambda p, good: None,
    "empty": lambda p, good: p.write_text(""),
    "folder": lambda p, good: p.mkdir(),
    "truncated": lambda p, good: p.write_text(good.split("\n", 1)[0][: max(1, len(good.split("\n", 1)[0]) // 2)]),
    "wrong shape": lambda p, good: p.write_text("[1, 2, 3]\n"),
    "binary": lambda p, good: p.write_bytes(bytes(range(256)) * 64),
    "utf-16": lambda p, good: p.write_bytes(good.encode("utf-16")),
    "deep": lambda p, good: p.write_text("[" * 100_000 + "]" * 100_000 + "\n"),
    "huge line": lambda p, good: p.write_text('{"x": "' + "y" * 3_000_000 + "\n"),
    "nan": lambda p, good: p.write_text(_with_nan(good)),
}


@dataclass(frozen=True)
class Slot:
    """One file a verb reads: how to call the verb with a bad one there, and what a good one is."""

    name: str
    argv: Callable[[Good, Path], list[str]]
    good: Callable[[Good], Path]
    suffix: str = ".json"
    kinds: tuple[str, ...] = tuple(BAD)


NUMBERLESS = tuple(k for k in BAD if k != "nan")
"""The kinds for a format with no number whose NaN would be wrong (AgentDojo runs, WorkBench CSVs)."""


def out(g: Good, name: str) -> str:
    return str(g.root / "out" / name)


SLOTS = [
    Slot("ingest tau2", lambda g, b: ["ingest", "tau2", str(b), "--out", out(g, "i1")], lambda g: g.tau2),
    Slot("ingest agentdojo", lambda g, b: ["ingest", "agentdojo", str(b), "--out", out(g, "i2")], lambda g: g.agentdojo,
         kinds=NUMBERLESS),
    Slot("ingest workbench", lambda g, b: ["ingest", "workbench", str(b), "--out", out(g, "i3")], lambda g: g.workbench,
         ".csv", kinds=NUMBERLESS),
    Slot("ingest --manifest", lambda g, b: ["ingest", "tau2", str(g.tau2), "--out", out(g, "i4"), "--manifest", str(b)],
         lambda g: g.manifest),
    Slot("learn", lambda g, b: ["learn", str(b), "--out", out(g, "l.flow.json"), "--split", "all"],
         lambda g: g.session_file, ".jsonl"),
    Slot("learn --manifest", lambda g, b: ["learn", str(g.sessions), "--out", out(g, "l.flow.json"), "--manifest",
                                           str(b)], lambda g: g.manifest),
    Slot("learn --split-file", lambda g, b: ["learn", str(g.sessions), "--out", out(g, "l.flow.json"), "--split-file",
                                             str(b)], lambda g: g.split),
    Slot("learn --prior", lambda g, b: ["learn", str(g.sessions), "--out", out(g, "l.flow.json"), "--split", "all",
                                        "--prior", str(b)], lambda g: g.session_file, ".jsonl"),
    Slot("flow show", lambda g, b: ["flow", "show", str(b)], lambda g: g.flow),
    Slot("flow diff", lambda g, b: ["flow", "diff", str(g.flow), str(b)], lambda g: g.flow),
    Slot("flow merge", lambda g, b: ["flow", "merge", str(g.flow), str(b), "--out", out(g, "m.flow.json")],
         lambda g: g.flow),
    Slot("flow threshold", lambda g, b: ["flow", "threshold", str(b), "--site", "start", "--theta", "0.5", "--out",
                                         out(g, "t.flow.json")], lambda g: g.flow),
    Slot("replay --flow", lambda g, b: ["replay", "--flow", str(b), "--sessions", str(g.sessions), "--json",
                                        out(g, "r.json")], lambda g: g.flow),
    Slot("replay --sessions", lambda g, b: ["replay", "--flow", str(g.flow), "--sessions", str(b), "--json",
                                            out(g, "r.json")], lambda g: g.session_file, ".jsonl"),
    Slot("replay --manifest", lambda g, b: ["replay", "--flow", str(g.flow), "--sessions", str(g.sessions),
                                            "--manifest", str(b), "--json", out(g, "r.json")], lambda g: g.manifest),
    Slot("replay --split-file", lambda g, b: ["replay", "--flow", str(g.flow), "--sessions", str(g.sessions),
                                              "--split-file", str(b), "--json", out(g, "r.json")], lambda g: g.split),
    Slot("ceiling", lambda g, b: ["ceiling", str(b)], lambda g: g.session_file, ".jsonl"),
    Slot("ceiling --manifest", lambda g, b: ["ceiling", str(g.sessions), "--manifest", str(b)], lambda g: g.manifest),
    Slot("costs --replay", lambda g, b: ["costs", "--sessions", str(g.sessions), "--replay", str(b)],
         lambda g: g.replay),
    Slot("costs --sessions", lambda g, b: ["costs", "--sessions", str(b), "--replay", str(g.replay)],
         lambda g: g.session_file, ".jsonl"),
    Slot("calibrate --replays", lambda g, b: ["calibrate", "--replays", str(b), "--replays", str(g.replay)],
         lambda g: g.replay),
    Slot("calibrate --flow", lambda g, b: ["calibrate", "--flow", str(b), "--sessions", str(g.sessions)],
         lambda g: g.flow),
    Slot("sweep --flow", lambda g, b: ["sweep", "--flow", str(b), "--sessions", str(g.sessions)], lambda g: g.flow),
    Slot("sweep --sessions", lambda g, b: ["sweep", "--flow", str(g.flow), "--sessions", str(b)],
         lambda g: g.session_file, ".jsonl"),
    Slot("curves", lambda g, b: ["curves", str(b), "--agent", "scripted"], lambda g: g.session_file, ".jsonl"),
    Slot("curves --split-file", lambda g, b: ["curves", str(g.sessions), "--agent", "scripted", "--split-file", str(b)],
         lambda g: g.split),
    Slot("ablate", lambda g, b: ["ablate", "--sessions", str(b)], lambda g: g.session_file, ".jsonl"),
    Slot("ablate --split-file", lambda g, b: ["ablate", "--sessions", str(g.sessions), "--split-file", str(b)],
         lambda g: g.split),
    Slot("split", lambda g, b: ["split", str(b), "--out", out(g, "s.json")], lambda g: g.session_file, ".jsonl"),
    Slot("bench --data", lambda g, b: ["bench", "--data", str(b), "--out", out(g, "bench"), "--no-progress"],
         lambda g: g.tau2),
    Slot("demo --home", lambda g, b: ["demo", "--home", str(b), "--sessions", "4", "--train", "2"], lambda g: g.tau2,
         kinds=tuple(k for k in BAD if k not in ("missing", "folder"))),  # a new or empty folder is a fine home
]

CASES = [pytest.param(slot, kind, id=f"{slot.name} <- {kind}") for slot in SLOTS for kind in slot.kinds]


def assert_one_line_error(code: int, captured: pytest.CaptureResult, names: str) -> None:
    assert code != 0, f"exit code {code}; stderr: {captured.err[-500:]}"
    assert "Traceback" not in captured.err + captured.out
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert lines, "nothing was said on stderr"
    last = lines[-1]
    assert last.startswith("stretto: "), last[:MAX_ERROR_CHARS]
    assert names in last, f"the error does not name {names}: {last[:MAX_ERROR_CHARS]}"
    assert len(last) <= MAX_ERROR_CHARS, f"an error line of {len(last):,} characters"
    assert len(captured.err) + len(captured.out) < 20_000, "the output echoes what it read"


@pytest.mark.parametrize("slot,kind", CASES)
def test_a_bad_file_is_one_line_naming_it(good: Good, tmp_path: Path, capsys: pytest.CaptureFixture,
                                          slot: Slot, kind: str) -> None:
    bad = tmp_path / f"bad-{kind.replace(' ', '-')}{slot.suffix}"
    BAD[kind](bad, slot.good(good).read_text(encoding="utf-8"))
    capsys.readouterr()
    code = main(slot.argv(good, bad))
    assert_one_line_error(code, capsys.readouterr(), bad.name)


OPTIONS = [
    ("learn --prior-weight nan", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"), "--prior",
                                            str(g.sessions), "--prior-weight", "nan"], "--prior-weight"),
    ("learn --prior-weight inf", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"), "--prior",
                                            str(g.sessions), "--prior-weight", "inf"], "--prior-weight"),
    ("learn --prior-weight -1", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"), "--prior",
                                           str(g.sessions), "--prior-weight", "-1"], "--prior-weight"),
    ("learn --recalibrate --agent", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"),
                                               "--recalibrate", "--agent", "someone"], "--recalibrate"),
    ("learn --recalibrate-prior nan", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"),
                                                 "--recalibrate", "--recalibrate-prior", "nan"], "--recalibrate-prior"),
    ("learn --out a folder", lambda g: ["learn", str(g.sessions), "--out", str(g.sessions)], "sessions"),
    ("learn --out under a file", lambda g: ["learn", str(g.sessions), "--out", str(g.flow / "x.flow.json")],
     "x.flow.json"),
    ("learn --manifest missing", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"), "--manifest",
                                            str(g.root / "nope.json")], "nope.json"),
    ("flow threshold --theta nan", lambda g: ["flow", "threshold", str(g.flow), "--site", "start", "--theta", "nan",
                                              "--out", out(g, "o.flow.json")], "--theta"),
    ("flow threshold --theta inf", lambda g: ["flow", "threshold", str(g.flow), "--site", "start", "--theta", "inf",
                                              "--out", out(g, "o.flow.json")], "--theta"),
    ("flow merge --weight 1e308", lambda g: ["flow", "merge", str(g.flow), str(g.flow), "--weight", "1e308",
                                             "--out", out(g, "o.flow.json")], "1e+308"),
    ("flow merge --weight nan", lambda g: ["flow", "merge", str(g.flow), str(g.flow), "--weight", "nan",
                                           "--out", out(g, "o.flow.json")], "--weight"),
    ("flow merge --weight -1", lambda g: ["flow", "merge", str(g.flow), str(g.flow), "--weight", "-1",
                                          "--out", out(g, "o.flow.json")], "--weight"),
    ("flow merge --out a folder", lambda g: ["flow", "merge", str(g.flow), str(g.flow), "--out", str(g.sessions)],
     "sessions"),
    ("replay --theta nan", lambda g: ["replay", "--flow", str(g.flow), "--sessions", str(g.sessions), "--theta", "nan",
                                      "--json", out(g, "o.json")], "--theta"),
    ("replay --json a folder", lambda g: ["replay", "--flow", str(g.flow), "--sessions", str(g.sessions), "--json",
                                          str(g.sessions)], "sessions"),
    ("calibrate --draws -1", lambda g: ["calibrate", "--replays", str(g.replay), "--replays", str(g.replay),
                                        "--draws", "-1"], "--draws"),
    ("ablate --draws -1", lambda g: ["ablate", "--sessions", str(g.sessions), "--draws", "-1"], "--draws"),
    ("ablate --variants bogus", lambda g: ["ablate", "--sessions", str(g.sessions), "--variants", "bogus"], "bogus"),
    ("sweep --thetas nan", lambda g: ["sweep", "--flow", str(g.flow), "--sessions", str(g.sessions), "--thetas",
                                      "nan"], "nan"),
    ("split --test-fraction nan", lambda g: ["split", str(g.sessions), "--out", out(g, "o.json"), "--test-fraction",
                                             "nan"], "--test-fraction"),
    ("split --test-fraction 2", lambda g: ["split", str(g.sessions), "--out", out(g, "o.json"), "--test-fraction",
                                           "2"], "--test-fraction"),
    ("curves --orders 0", lambda g: ["curves", str(g.sessions), "--agent", "scripted", "--orders", "0"], "--orders"),
    ("demo --sessions -1", lambda g: ["demo", "--home", out(g, "demo"), "--sessions", "-1"], "--sessions"),
    ("demo --train 0", lambda g: ["demo", "--home", out(g, "demo"), "--sessions", "4", "--train", "0"], "--train"),
    ("ingest --out a file", lambda g: ["ingest", "tau2", str(g.tau2), "--out", str(g.flow)], "shop.flow.json"),
    ("learn --workers -1", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"), "--workers", "-1"],
     "--workers"),
    ("learn --workers 1000", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"), "--workers",
                                        "1000"], "--workers"),
    ("learn --scheduler without --workers", lambda g: ["learn", str(g.sessions), "--out", out(g, "o.flow.json"),
                                                       "--scheduler", "tcp://127.0.0.1:1"], "--scheduler"),
    ("userwords a missing folder", lambda g: ["userwords", str(g.root / "nowhere"), "--split-out",
                                              out(g, "split.json")], "nowhere"),
    ("userwords --theta nan", lambda g: ["userwords", str(g.sessions), "--split-out", out(g, "split.json"),
                                         "--theta", "nan"], "--theta"),
    ("userwords --draws -1", lambda g: ["userwords", str(g.sessions), "--split-out", out(g, "split.json"),
                                        "--draws", "-1"], "--draws"),
]


@pytest.mark.parametrize("argv,names", [pytest.param(a, n, id=i) for i, a, n in OPTIONS])
def test_a_bad_option_or_output_is_one_line_naming_it(good: Good, capsys: pytest.CaptureFixture,
                                                      argv: Callable[[Good], list[str]], names: str) -> None:
    capsys.readouterr()
    code = main(argv(good))
    assert_one_line_error(code, capsys.readouterr(), names)


def test_the_doctor_given_a_file_for_a_home_says_what_to_fix(good: Good, capsys: pytest.CaptureFixture) -> None:
    capsys.readouterr()
    assert main(["doctor", "--home", str(good.tau2)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and f"{good.tau2} is a file" in captured.out
