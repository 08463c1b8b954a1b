"""Which recording a session came from, and what that says about the environment to build.

A session's header names its source file; sessions of one recording share what the recording
harness ran on. For AgentDojo that includes the suite data of the package release that recorded
them (see `agentdojo_data`), which a single episode rarely shows but a whole pipeline does.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Iterable

from stretto_core.evaluate.envs.agentdojo_data import infer_data_revision
from stretto_core.sessions.model import Session, SessionHeader, ToolResult

DATA_LABEL = "agentdojo_data"
"""The header label `open_environment` reads for an AgentDojo session's data revision."""


def source_name(header: SessionHeader) -> str:
    """The recording a session came from: its results file, or for AgentDojo its pipeline.

    AgentDojo keeps one file per episode under `<pipeline>/<suite>/`, so the pipeline is the
    unit that one package release recorded.
    """
    file = header.labels.get("source_file") or (header.source or "").split("#")[0]
    if (header.app or "").startswith("agentdojo/"):
        parts = PurePath(file).parts
        return parts[-3] if len(parts) >= 3 else (parts[0] if parts else header.agent_model or "?")
    return PurePath(file).name or header.agent_model or "?"


def infer_agentdojo_data(sessions: list[Session]) -> str | None:
    """The AgentDojo data revision the recorded results of one pipeline's sessions show."""
    return infer_data_revision(e.content for s in sessions for e in s.events if isinstance(e, ToolResult))


def with_data_revision(session: Session, revision: str | None) -> Session:
    """The session with its header's `agentdojo_data` label set, unless it has one or none is known."""
    if revision is None or DATA_LABEL in session.header.labels:
        return session
    labels = {**session.header.labels, DATA_LABEL: revision}
    return session.model_copy(update={"header": session.header.model_copy(update={"labels": labels})})


def label_agentdojo_data(sessions: Iterable[Session]) -> list[Session]:
    """The sessions, each AgentDojo one labelled with the data revision its pipeline's results show.

    Call it on all sessions to be replayed at once: a pipeline's episodes are read together.
    Sessions that already carry the label, and sessions of other apps, are returned unchanged.
    """
    sessions = list(sessions)
    by_source: dict[str, list[Session]] = {}
    for session in sessions:
        if (session.header.app or "").startswith("agentdojo/"):
            by_source.setdefault(source_name(session.header), []).append(session)
    revisions = {source: infer_agentdojo_data(members) for source, members in by_source.items()}
    return [with_data_revision(s, revisions[source_name(s.header)])
            if (s.header.app or "").startswith("agentdojo/") else s for s in sessions]
