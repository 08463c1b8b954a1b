"""What the replay and cost commands read: session folders (one side of a split), flows, replays.

Errors name the file and what is wrong; a malformed event line is skipped and counted, as
everywhere sessions are read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence, TextIO

from pydantic import ValidationError

from stretto_core.errors import InputError
from stretto_core.sessions.jsonfile import read_json_file, write_text_file
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.evaluate.loading import sessions_with_manifests
from stretto_core.evaluate.replay.episode import PreparedEpisode, prepare_session
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.serve.speculator import FlowModel
from stretto_core.sessions.splits import SplitFile


def load_episodes(paths: Sequence[str | Path], split: str = "all", split_file: SplitFile | None = None,
                  manifests: Sequence[ToolManifest] = (), warn: TextIO | None = sys.stderr,
                  view: str = "agent") -> list[PreparedEpisode]:
    """Every session under the paths on the chosen side of the split, indexed for replay in a view
    (`agent`, or `proxy`: as an MCP proxy sees it).

    A manifest given for a session's app wins over its header's; a session with neither is an
    InputError naming its file.
    """
    return [prepare_session(session, manifest, view=view)
            for session, manifest in sessions_with_manifests(paths, split, split_file, manifests, warn)]

def load_flow_model(path: str | Path) -> FlowModel:
    """A flow file, ready to serve."""
    from stretto_core.flow.ir import load_flow
    from stretto_core.serve.runtime import FlowRuntime

    return FlowRuntime(load_flow(path))


def load_replay(path: str | Path) -> ReplayResult:
    """A replay's JSON, as `stretto replay --json` writes it."""
    p = Path(path)
    data = read_json_file(p, "replay")
    try:
        return ReplayResult.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ()))
        raise InputError(str(p), f"not a stretto replay: {where + ': ' if where else ''}{err.get('msg')}") from exc


def save_replay(result: ReplayResult, path: str | Path) -> Path:
    """Write a replay as JSON (totals first, then the rows)."""
    return write_text_file(path, result.model_dump_json(indent=1) + "\n", "replay")
