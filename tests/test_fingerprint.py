"""A session's fingerprint names its content, wherever the file was read from.

A flow names the sessions it learned from by fingerprint, and the shipped retail flow is learned
from the published episodes on whatever machine runs the tests: two machines that keep the data
under different folders must learn the same flow, byte for byte.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from shared_data import FIXTURE_DATA, published_data
from stretto_core.paths import data_root
from stretto_core.sessions.fingerprint import session_fingerprint
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.store import load_sessions


def _one_tau2_file() -> Path:
    for root in (data_root(), FIXTURE_DATA):
        found = sorted((root / "tau2" / "trajectories" / "retail").glob("*.json"))
        if found:
            return found[0]
    raise AssertionError("no retail trajectories in the data root or the sample")


def _fingerprints(episodes: Path, out: Path) -> dict[str, str]:
    ingest_files("tau2", [episodes], out)
    return {s.header.session_id: session_fingerprint(s) for s in load_sessions([out])}


@published_data
def test_the_same_episodes_under_two_data_roots_have_the_same_fingerprints(tmp_path: Path) -> None:
    original = _one_tau2_file()
    elsewhere = tmp_path / "another-data-root" / "tau2" / "trajectories" / "retail" / original.name
    elsewhere.parent.mkdir(parents=True)
    shutil.copyfile(original, elsewhere)
    here = _fingerprints(original, tmp_path / "here")
    there = _fingerprints(elsewhere, tmp_path / "there")
    sources = {s.header.source for s in load_sessions([tmp_path / "here"])}
    assert here and here == there
    assert all(str(original) in (src or "") for src in sources), "the sessions do not say where they came from"


@published_data
def test_an_edited_session_has_another_fingerprint(tmp_path: Path) -> None:
    ingest_files("tau2", [_one_tau2_file()], tmp_path)
    session = next(iter(load_sessions([tmp_path])))
    edited = session.model_copy(update={"events": session.events[:-1]})
    relabelled = session.model_copy(update={"header": session.header.model_copy(update={"task_id": "other"})})
    assert len({session_fingerprint(session), session_fingerprint(edited), session_fingerprint(relabelled)}) == 3
