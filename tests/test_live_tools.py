"""A live session whose tools change mid-session (an MCP server re-listing them): the guard follows,
and a session opened before any tool was known to be a read starts serving once one is."""

from __future__ import annotations

from pathlib import Path

from shop_sessions import MANIFEST, serve_recorded, shop_flow, shop_sessions, shop_tools
from stretto_core import Stretto, ToolManifest


def lookups_made(live, session) -> int:
    serve_recorded(live, session, shop_tools())
    return len(live.lookups)


def test_a_session_opened_before_its_tools_were_listed_serves_once_they_are(tmp_path: Path) -> None:
    stretto = Stretto(shop_flow(), store=tmp_path, theta=0.0)
    episode = shop_sessions(30)[20]
    unlisted = stretto.session("never-listed", tools=ToolManifest(tools={}))
    assert lookups_made(unlisted, episode) == 0, "no authority, no lookup"
    late = stretto.session("listed-late", tools=ToolManifest(tools={}))
    late.update_tools(MANIFEST)
    assert late.engine_session is not None and lookups_made(late, episode) > 0


def test_a_tool_no_longer_read_after_a_relisting_is_not_looked_up(tmp_path: Path) -> None:
    stretto = Stretto(shop_flow(), store=tmp_path, theta=0.0)
    episode = shop_sessions(30)[20]
    served = stretto.session("served", tools=MANIFEST)
    made = lookups_made(served, episode)
    looked_up = {lk.tool for lk in served.lookups}
    assert made > 0 and looked_up
    relisted = stretto.session("relisted", tools=MANIFEST)
    relisted.update_tools(ToolManifest.declare(reads=[t for t in MANIFEST.reads() if t not in looked_up],
                                               writes=sorted(looked_up)))
    lookups_made(relisted, episode)
    assert not {lk.tool for lk in relisted.lookups} & looked_up


def test_a_live_session_keeps_its_lookups_text_but_not_their_parsed_results(tmp_path: Path) -> None:
    stretto = Stretto(shop_flow(), store=tmp_path, theta=0.0)
    served = stretto.session("kept", tools=MANIFEST)
    assert lookups_made(served, shop_sessions(30)[20]) > 0
    assert all(lk.parsed is None for lk in served.lookups)
    assert any(lk.content.startswith(("{", "[")) for lk in served.lookups)
