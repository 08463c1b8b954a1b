"""stretto: make agents take fewer model turns by making the read-only lookups they will make.

The distribution's own import name: the public API of `stretto_core` (the flow, sessions,
serving), loaded on first use so `import stretto` stays light, and the version.

    import stretto
    runtime = stretto.Stretto("retail.flow.json", reads=["get_order", "get_user"])

Each SDK's one line lives in its adapter package: `stretto_openai_agents.instrument`,
`stretto_adk.StrettoPlugin`, `stretto_langgraph.StrettoMiddleware`, `stretto_claude.claude_hooks`,
`stretto_mcp` (the proxy) and `stretto_mcp.fastmcp_middleware.StrettoFastMCPMiddleware`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import stretto_core
from stretto_core import __version__ as __version__

__all__ = ["__version__", *stretto_core.__all__]

if TYPE_CHECKING:  # the same names, for type checkers and IDEs (kept equal by tests/test_packaging.py)
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
    if name not in stretto_core.__all__:
        raise AttributeError(f"module 'stretto' has no attribute {name!r}")
    value = getattr(stretto_core, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
