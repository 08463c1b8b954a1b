"""Good inputs for the CLI sweep (`test_cli_sweep.py`): small files every verb accepts, so that each
cell of the sweep breaks exactly one option with a hostile value, and the kinds of hostile path."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from shop_sessions import TAU2_RUN, shop_flow, write_shop_files
from test_procedure_world import KINDS, customer, demonstrate
from stretto_core.evaluate.replay.inputs import save_replay
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.history import Deployment
from stretto_core.procedures.compile import compile_procedure
from stretto_core.procedures.episodes import TICKET_LABEL, episodes_of
from stretto_core.procedures.ir import save_procedure
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult
from stretto_core.sessions.store import write_session

TOY_APP = "toy/lamp"


@dataclass
class Good:
    """Files a verb accepts: sessions, a flow, a replay, τ² results, a procedure, a deployment."""

    root: Path
    sessions: Path
    flow: Path
    manifest: Path
    replay: Path
    next_replay: Path
    tau2: Path
    toy_sessions: Path
    procedure: Path
    deployment: Path
    bench_data: Path
    bench_sessions: Path

    def out(self, name: str) -> str:
        """A fresh place to write to."""
        return str(self.root / "out" / name)

    def fresh_deployment(self) -> Path:
        """A copy of the deployment (sessions and a staged flow), for a verb that may change it."""
        copy = Path(tempfile.mkdtemp(prefix="deployment-", dir=self.root))
        shutil.copytree(self.deployment, copy, dirs_exist_ok=True)
        return copy


def toy_session(n: int) -> Session:
    """A solo session of the toy lamp world that carries its ticket, as a demonstration does."""
    world = customer(n)
    events: list = []
    for i, (tool, args, content, error) in enumerate(demonstrate(world)):
        events += [LLMTurn(calls=[ToolCall(call_id=f"c{i}", tool=tool, arguments=args)]),
                   ToolResult(call_id=f"c{i}", tool=tool, content=content, error=error)]
    events.append(LLMTurn(text="done"))
    manifest = ToolManifest.declare(TOY_APP, reads=[t for t, k in KINDS.items() if k == "read"],
                                    writes=[t for t, k in KINDS.items() if k == "write"])
    header = SessionHeader(session_id=f"toy-{n}", harness="toy", app=TOY_APP, manifest=manifest, task_id=f"task-{n}",
                           reward=1.0, solo=True, labels={TICKET_LABEL: world.ticket()})
    return Session(header=header, events=events)


def make_good(root: Path) -> Good:
    """Write the good inputs under `root`."""
    recorded, sessions, flow, manifest = write_shop_files(root)
    replay = root / "replay.json"
    save_replay(replay_sessions(FlowRuntime(shop_flow(12)), recorded, ReplayOptions(processes=1, weigh=True)), replay)
    next_replay = root / "next.replay.json"
    save_replay(replay_sessions(FlowRuntime(shop_flow(12)), recorded, ReplayOptions(processes=1, weigh=True,
                                                                                     policy="next")), next_replay)
    tau2 = root / "tau2.json"
    tau2.write_text(json.dumps(TAU2_RUN))
    toy = [toy_session(n) for n in range(1, 5)]
    toy_sessions = root / "toy-sessions"
    for s in toy:
        write_session(s, toy_sessions)
    procedure = root / "toy.procedure.json"
    save_procedure(compile_procedure(episodes_of(toy), TOY_APP), procedure)
    deployment = root / "deployment"
    for s in recorded[:4]:
        write_session(s, deployment / "sessions")
    Deployment(deployment).stage_flow(shop_flow(4), [])
    bench_data = root / "bench-data"
    (bench_data / "tau2" / "trajectories").mkdir(parents=True)
    bench_sessions = root / "bench-sessions"
    for s in recorded:
        write_session(s, bench_sessions / "tau2")
    return Good(root, sessions, flow, manifest, replay, next_replay, tau2, toy_sessions, procedure, deployment,
                bench_data, bench_sessions)


def _missing(p: Path) -> None:
    pass


def _folder(p: Path) -> None:
    p.mkdir()


def _binary(p: Path) -> None:
    p.write_bytes(bytes(range(256)) * 16)


def _deep(p: Path) -> None:
    p.write_text("[" * 100_000 + "]" * 100_000 + "\n")


def _file(p: Path) -> None:
    p.write_text("a file, not a folder\n")


def _under_a_file(p: Path) -> None:
    p.parent.write_text("a file where a folder is wanted\n")


InputKind = Callable[[Path], None]
"""Makes (or leaves out) the hostile path: the value given is that path."""

FOR_INPUTS: dict[str, InputKind] = {"missing": _missing, "empty folder": _folder, "binary": _binary,
                                    "deep json": _deep}
"""Hostile paths where a file or folder is read."""

FOR_OUTPUT_FILES: dict[str, InputKind] = {"a folder": _folder, "under a file": _under_a_file}
"""Hostile paths where a file is written."""

FOR_OUTPUT_FOLDERS: dict[str, InputKind] = {"a file": _file, "under a file": _under_a_file}
"""Hostile paths where a folder is written (made when missing)."""
