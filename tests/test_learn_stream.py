"""Learning one session at a time, from a shared store by URL, and in shards on Dask: the same flow."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from shared_data import published_data

from stretto_core.cli import main
from stretto_core.flow.ir import learn, load_flow, merge
from stretto_core.flow.stream import (YOUNG_COLLECTION_AFTER, choose, count_files, fewer_collections, learn_chosen,
                                      shards)
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions

RETAIL = "tau2/trajectories/retail"
REPO = Path(__file__).resolve().parents[1]
TRAVEL = "agentdojo/runs/gpt-4o-2024-05-13/travel"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("store")
    ingest_files("tau2", [data_root() / RETAIL], out / "retail")
    ingest_files("agentdojo", [data_root() / TRAVEL], out / "travel")
    return out


@published_data
def test_learning_one_session_at_a_time_is_learning_them_loaded_at_once(store: Path) -> None:
    sessions = load_sessions([store])
    train = [s for s in sessions if split_of(s.header) == "train"]
    chosen = choose([str(store)], "train")
    assert len(chosen.files) == len(train) > 2
    assert learn_chosen(chosen).to_json() == learn(train).to_json()
    retail = [s for s in train if s.header.app == "tau2/retail"]
    prior = [s for s in train if s.header.app != "tau2/retail"]
    chosen = choose([str(store / "retail")], "train", prior=[str(store / "travel")])
    assert learn_chosen(chosen, prior_weight=3).to_json() == learn(retail, prior=prior, prior_weight=3).to_json()


@published_data
def test_sessions_are_read_from_a_shared_store_by_url(store: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    files = sorted(store.rglob("*.jsonl"))
    for path in files:
        fs.pipe(f"/shared/{path.relative_to(store)}", path.read_bytes())
    remote = choose(["memory://shared"], "train")
    local = choose([str(store)], "train")
    assert [f.rsplit("/", 1)[-1] for f in remote.files] == [Path(f).name for f in local.files]
    assert learn_chosen(remote).to_json() == learn_chosen(local).to_json()


@published_data
def test_shards_counted_apart_add_to_the_same_bytes_in_any_order(store: Path) -> None:
    chosen = choose([str(store)], "train")
    assert chosen.manifest is not None
    whole = learn_chosen(chosen).to_json()
    parts = [count_files(part, chosen.manifest) for part in shards(chosen.files, 3)]
    assert len(parts) == 3
    for order in (parts, parts[::-1], [parts[1], parts[2], parts[0]]):
        total = order[0]
        for part in order[1:]:
            total = merge(total, part)
        assert total.to_json() == whole


@published_data
def test_flows_learned_from_shards_merge_in_either_order_to_the_flow_learned_at_once(store: Path, tmp_path: Path,
                                                                                   capsys) -> None:
    args = ["--split", "train"]
    assert main(["learn", str(store), *args, "--out", str(tmp_path / "all.flow.json")]) == 0
    assert main(["learn", str(store / "retail"), *args, "--out", str(tmp_path / "a.flow.json")]) == 0
    assert main(["learn", str(store / "travel"), *args, "--out", str(tmp_path / "b.flow.json")]) == 0
    for first, second, out in (("a", "b", "ab"), ("b", "a", "ba")):
        assert main(["flow", "merge", str(tmp_path / f"{first}.flow.json"), str(tmp_path / f"{second}.flow.json"),
                     "--out", str(tmp_path / f"{out}.flow.json")]) == 0
    whole = (tmp_path / "all.flow.json").read_bytes()
    assert (tmp_path / "ab.flow.json").read_bytes() == (tmp_path / "ba.flow.json").read_bytes() == whole
    assert load_flow(tmp_path / "all.flow.json").manifest.app == "agentdojo/travel"


@published_data
def test_learning_on_two_dask_workers_writes_the_same_flow_as_one_process(store: Path, tmp_path: Path, capsys) -> None:
    pytest.importorskip("distributed")
    assert main(["learn", str(store), "--split", "train", "--out", str(tmp_path / "here.flow.json")]) == 0
    assert main(["learn", str(store), "--split", "train", "--workers", "2",
                 "--out", str(tmp_path / "dask.flow.json")]) == 0
    assert "on 2 dask workers" in capsys.readouterr().out
    assert (tmp_path / "dask.flow.json").read_bytes() == (tmp_path / "here.flow.json").read_bytes()


COUNT_WITH_THE_COLLECTOR_OFF = """
import gc, sys
from stretto_core.flow.stream import choose, count_files
files = choose([sys.argv[1]], "train")
count_files(files.files, files.manifest, progress=False)  # a first count imports and fills caches once
gc.collect()
gc.disable()
flow = count_files(files.files, files.manifest, progress=False)
print(flow.provenance.sources[0].sessions, len(files.files), gc.collect())
"""


@published_data
def test_counting_json_sessions_leaves_no_reference_cycle_for_the_collector(store: Path) -> None:
    """Why counting may slow the collector (`fewer_collections`): what it frees, reference
    counting frees. τ² sessions counted with the collector off leave nothing for it to find. In a
    process of its own: other tests' threads (a Dask cluster's event loop) make cycles of theirs."""
    done = subprocess.run([sys.executable, "-c", COUNT_WITH_THE_COLLECTOR_OFF, str(store / "retail")],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    counted, files, found = map(int, done.stdout.split())
    assert counted == files > 2
    assert found == 0


def test_the_collectors_pace_is_slowed_while_counting_and_restored_when_the_last_count_ends() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold()[0] >= YOUNG_COLLECTION_AFTER > before[0]
        with fewer_collections():  # another count at the same time (a worker's threads)
            pass
        assert gc.get_threshold()[0] >= YOUNG_COLLECTION_AFTER
    assert gc.get_threshold() == before
