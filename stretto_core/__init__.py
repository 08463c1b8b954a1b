"""stretto: learn from recorded sessions which read-only lookups an agent will make, and make them.

The public API: everything a harness, an SDK adapter, the proxy or a script needs. Names load on
first use, so `import stretto_core` stays light (no plots, statistics or benchmark packages).

    from stretto_core import Stretto
    stretto = Stretto("retail.flow.json", reads=["get_order", "get_user"])   # serve and record
    live = stretto.session()
    appended = await live.after_tool(call_id, tool, args, result, call_tool)  # text to append
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from stretto_core.version import __version__ as __version__

_WHERE = {
    # serve a flow live (what adapters and the proxy use)
    "Stretto": "stretto_core.serve.live",
    "LiveSession": "stretto_core.serve.live",
    "Engine": "stretto_core.serve.engine",
    "EngineConfig": "stretto_core.serve.engine",
    "EngineSession": "stretto_core.serve.engine",
    "FlowRuntime": "stretto_core.serve.runtime",
    "result_text": "stretto_core.serve.results",
    "contract_still_holds": "stretto_core.serve.speculator",
    # the flow file
    "Flow": "stretto_core.flow.ir",
    "learn_flow": "stretto_core.flow.ir",
    "merge_flows": "stretto_core.flow.ir",
    "load_flow": "stretto_core.flow.ir",
    "save_flow": "stretto_core.flow.ir",
    "learn_for_agent": "stretto_core.flow.harness",
    "BindingOptions": "stretto_core.learn.bindings.model",
    # sessions and tool kinds
    "SessionRecorder": "stretto_core.sessions.recorder",
    "SessionStore": "stretto_core.sessions.store",
    "load_sessions": "stretto_core.sessions.store",
    "read_session": "stretto_core.sessions.store",
    "Session": "stretto_core.sessions.model",
    "SessionHeader": "stretto_core.sessions.model",
    "ToolCall": "stretto_core.sessions.model",
    "Usage": "stretto_core.sessions.model",
    "Lookup": "stretto_core.sessions.model",
    "Refusal": "stretto_core.sessions.model",
    "ingest_files": "stretto_core.sessions.ingest",
    "ToolManifest": "stretto_core.sessions.manifest",
    "ToolKind": "stretto_core.sessions.manifest",
    "load_manifest": "stretto_core.sessions.manifest",
    "manifest_from_mcp_tools": "stretto_core.sessions.manifest",
    "kind_from_mcp_annotations": "stretto_core.sessions.manifest",
    # measure on recorded sessions
    "ReplayOptions": "stretto_core.evaluate.replay.run",
    "replay_sessions": "stretto_core.evaluate.replay.run",
    "StrettoError": "stretto_core.errors",
}

__all__ = sorted(_WHERE)

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time names load on first use (`_WHERE`)
    from stretto_core.errors import StrettoError as StrettoError
    from stretto_core.evaluate.replay.run import (
        ReplayOptions as ReplayOptions, replay_sessions as replay_sessions
    )
    from stretto_core.flow.harness import learn_for_agent as learn_for_agent
    from stretto_core.flow.ir import (
        Flow as Flow, learn_flow as learn_flow, load_flow as load_flow, merge_flows as merge_flows,
        save_flow as save_flow
    )
    from stretto_core.learn.bindings.model import BindingOptions as BindingOptions
    from stretto_core.serve.engine import (
        Engine as Engine, EngineConfig as EngineConfig, EngineSession as EngineSession
    )
    from stretto_core.serve.live import LiveSession as LiveSession, Stretto as Stretto
    from stretto_core.serve.results import result_text as result_text
    from stretto_core.serve.runtime import FlowRuntime as FlowRuntime
    from stretto_core.serve.speculator import contract_still_holds as contract_still_holds
    from stretto_core.sessions.ingest import ingest_files as ingest_files
    from stretto_core.sessions.manifest import (
        ToolKind as ToolKind, ToolManifest as ToolManifest,
        kind_from_mcp_annotations as kind_from_mcp_annotations, load_manifest as load_manifest,
        manifest_from_mcp_tools as manifest_from_mcp_tools
    )
    from stretto_core.sessions.model import (
        Lookup as Lookup, Refusal as Refusal, Session as Session, SessionHeader as SessionHeader,
        ToolCall as ToolCall, Usage as Usage
    )
    from stretto_core.sessions.recorder import SessionRecorder as SessionRecorder
    from stretto_core.sessions.store import (
        SessionStore as SessionStore, load_sessions as load_sessions, read_session as read_session
    )


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'stretto_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
