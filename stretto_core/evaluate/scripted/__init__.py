"""Scripted agents over recorded episodes, with the real environments behind their tools.

What the adapters' and the proxy's end-to-end runs share: `EpisodePlayer` (the scripted model's
turns), `Tau2Toolset` (the real τ²-bench tools of an episode), the episodes and flow to run, and
`replay_turns` (what `stretto replay --env` counts on the same episodes).
"""

from stretto_core.evaluate.scripted.episodes import (fixture_data, fixture_flow, load_episodes,
                                                     load_fixture_episodes, replay_turns)
from stretto_core.evaluate.scripted.player import EpisodePlayer, ScriptTurn, Segment
from stretto_core.evaluate.scripted.toolset import Tau2Toolset, ToolInfo

__all__ = ["EpisodePlayer", "ScriptTurn", "Segment", "Tau2Toolset", "ToolInfo", "fixture_data", "fixture_flow",
           "load_episodes", "load_fixture_episodes", "replay_turns"]
