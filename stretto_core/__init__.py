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
from typing import Any

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


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'stretto_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
