"""The train/test split: fixed, deterministic, and never putting a test task in train."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stretto_core.errors import InputError, StrettoError
from stretto_core.sessions.model import Session, SessionHeader
from stretto_core.sessions.splits import (SplitFile, filter_sessions, hashed_side, load_split_file, make_split_file,
                                 split_of)


def header(app: str, task: str | None, **labels: str) -> SessionHeader:
    return SessionHeader(session_id=f"{app}-{task}", harness=app.split("/")[0], app=app, task_id=task,
                         labels=dict(labels))


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    """A data folder holding τ²-bench's retail split: tasks 0-2 train, 3-4 test."""
    folder = tmp_path / "tau2" / "domains" / "retail"
    folder.mkdir(parents=True)
    (folder / "split_tasks.json").write_text(json.dumps({"train": ["0", "1", "2"], "test": ["3", "4"],
                                                         "base": ["0", "1", "2", "3", "4"]}))
    return tmp_path


def test_the_hash_split_gives_the_same_side_every_time_and_in_every_process() -> None:
    sides = [hashed_side("agentdojo/travel", f"user_task_{i}") for i in range(50)]
    assert sides == [hashed_side("agentdojo/travel", f"user_task_{i}") for i in range(50)]
    # pinned: a change of the hash would silently move tasks between train and test
    assert [hashed_side("agentdojo/travel", f"user_task_{i}") for i in range(6)] == \
        ["train", "train", "test", "test", "train", "test"]


def test_the_hash_split_holds_out_about_the_asked_fraction_of_tasks() -> None:
    held = sum(hashed_side("workbench/email", str(i)) == "test" for i in range(2000))
    assert 0.37 < held / 2000 < 0.43


def test_another_seed_gives_another_split() -> None:
    tasks = [str(i) for i in range(100)]
    assert [hashed_side("a", t, seed=0) for t in tasks] != [hashed_side("a", t, seed=1) for t in tasks]


def test_a_task_is_on_the_same_side_for_every_agent_that_ran_it() -> None:
    gpt = SessionHeader(session_id="1", harness="agentdojo", app="agentdojo/slack", task_id="user_task_3",
                        agent_model="gpt-4o")
    claude = gpt.model_copy(update={"session_id": "2", "agent_model": "claude-3-opus"})
    assert split_of(gpt) == split_of(claude)


def test_tau2_sessions_follow_the_official_split(data_root: Path) -> None:
    assert split_of(header("tau2/retail", "1"), root=data_root) == "train"
    assert split_of(header("tau2/retail", "4"), root=data_root) == "test"
    assert split_of(header("tau2/retail", "99"), root=data_root) == "none"


def test_tau2_is_recognized_by_its_harness_when_the_app_is_a_bare_domain(data_root: Path) -> None:
    bare = SessionHeader(session_id="x", harness="tau2", app="retail", task_id="3")
    assert split_of(bare, root=data_root) == "test"


def test_unverified_tau2_episodes_belong_to_neither_side(data_root: Path) -> None:
    assert split_of(header("tau2/retail", "unverified-3"), root=data_root) == "none"


def test_a_session_without_a_task_belongs_to_neither_side() -> None:
    assert split_of(header("agentdojo/travel", None)) == "none"


def test_a_sessions_own_split_label_wins() -> None:
    assert split_of(header("agentdojo/travel", "user_task_0", split="test")) == "test"


def test_a_split_label_that_is_not_a_side_is_a_clear_error() -> None:
    with pytest.raises(StrettoError, match="labels.split"):
        split_of(header("agentdojo/travel", "user_task_0", split="holdout"))


def test_a_missing_official_split_is_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="split_tasks.json"):
        split_of(header("tau2/airline", "1"), root=tmp_path)


def test_filtering_to_train_never_keeps_a_test_task(data_root: Path) -> None:
    sessions = [Session(header=header(app, str(t))) for app in ("tau2/retail", "agentdojo/travel") for t in range(5)]
    train = list(filter_sessions(sessions, "train", root=data_root))
    test = list(filter_sessions(sessions, "test", root=data_root))
    assert {s.session_id for s in train}.isdisjoint({s.session_id for s in test})
    assert all(split_of(s.header, root=data_root) == "train" for s in train)
    assert {s.header.task_id for s in train if s.header.app == "tau2/retail"} == {"0", "1", "2"}


def test_filtering_to_all_keeps_every_session() -> None:
    sessions = [Session(header=header("agentdojo/travel", str(t))) for t in range(4)]
    assert list(filter_sessions(sessions, "all")) == sessions


def test_an_unknown_split_name_is_a_clear_error() -> None:
    with pytest.raises(StrettoError, match="unknown split"):
        list(filter_sessions([], "dev"))


def test_a_written_split_file_agrees_with_the_rule_it_froze(tmp_path: Path, data_root: Path) -> None:
    headers = [header(app, str(t)) for app in ("tau2/retail", "workbench/email") for t in range(30)]
    frozen = make_split_file(headers, root=data_root)
    path = tmp_path / "split.json"
    path.write_text(frozen.model_dump_json())
    loaded = load_split_file(path)
    for h in headers:
        assert loaded.side(h.app, h.task_id) == split_of(h, root=data_root)
        assert split_of(h, loaded) == split_of(h, root=data_root)


def test_a_split_file_may_be_flat_or_keyed_by_app(tmp_path: Path) -> None:
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"train": [0, 1], "test": [2]}))
    assert load_split_file(flat).side("any/app", "2") == "test"
    keyed = tmp_path / "keyed.json"
    keyed.write_text(json.dumps({"agentdojo/travel": {"train": ["user_task_0"], "test": ["user_task_1"]}}))
    split = load_split_file(keyed)
    assert split.side("agentdojo/travel", "user_task_1") == "test"
    assert split.side("agentdojo/slack", "user_task_1") == "none"


def test_a_split_file_listing_a_task_on_both_sides_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"apps": {"a": {"train": ["7"], "test": ["7"]}}}))
    with pytest.raises(InputError, match="bad.json.*'7'.*both"):
        load_split_file(path)


def test_a_split_file_that_is_not_json_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    path.write_text("train: [1]")
    with pytest.raises(InputError, match="split.json"):
        load_split_file(path)


def test_a_task_a_split_file_does_not_list_is_on_neither_side() -> None:
    assert SplitFile(train=["1"], test=["2"]).side("x", "3") == "none"


def test_an_exact_split_holds_out_exactly_the_fraction_of_each_apps_tasks() -> None:
    headers = [header("agentdojo/travel", f"user_task_{t}") for t in range(27)]
    frozen = make_split_file(headers, exact=True).apps["agentdojo/travel"]
    assert len(frozen.test) == round(0.4 * 27) and set(frozen.train).isdisjoint(frozen.test)


def test_an_exact_split_holds_out_the_tasks_the_hash_split_holds_out_first() -> None:
    headers = [header("workbench/email", str(t)) for t in range(200)]
    exact = make_split_file(headers, exact=True).apps["workbench/email"]
    loose = make_split_file(headers).apps["workbench/email"]
    smaller, larger = sorted((set(exact.test), set(loose.test)), key=len)
    assert smaller <= larger


def test_an_exact_split_leaves_an_official_split_as_it_is(data_root: Path) -> None:
    headers = [header("tau2/retail", str(t)) for t in range(5)]
    assert make_split_file(headers, exact=True, root=data_root).apps["tau2/retail"].test == ["3", "4"]


def test_a_split_file_given_for_an_app_wins_over_a_sessions_label() -> None:
    frozen = SplitFile(apps={"agentdojo/travel": {"train": ["user_task_0"], "test": []}})
    assert split_of(header("agentdojo/travel", "user_task_0", split="test"), frozen) == "train"


def test_a_split_file_for_other_apps_leaves_a_sessions_own_split_alone(data_root: Path) -> None:
    frozen = SplitFile(apps={"agentdojo/travel": {"train": ["3"], "test": []}})
    assert split_of(header("tau2/retail", "3"), frozen, root=data_root) == "test"
