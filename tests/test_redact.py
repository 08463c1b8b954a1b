"""`stretto redact` (issue 27, item 2): the copy teaches the same flow, site for site and binding
for binding, and holds none of the values fewer than k sessions held; its key is never written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from real_corpora import DOJO, RETAIL_TOOLORCHESTRA
from shared_data import FULL_DATA, published_data
from stretto_core.errors import StrettoError
from stretto_core.flow.ir import learn_flow
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.redact import (KEY_ENV, MIN_WORD, differences, key_from_env, pseudonyms_for,
                                          rare_values, redact_session)
from stretto_core.sessions.splits import filter_sessions
from stretto_core.sessions.store import load_sessions

KEY = b"a test key, never a real one"


def train_sessions(name: str, out: Path) -> list:
    source = {"retail": ("tau2", RETAIL_TOOLORCHESTRA if FULL_DATA else str(Path(RETAIL_TOOLORCHESTRA).parent)),
              "slack": ("agentdojo", f"{DOJO}/slack")}[name]
    ingest_files(source[0], [data_root() / source[1]], out)
    return [s for s in filter_sessions(load_sessions([out]), "train")
            if name != "retail" or s.header.app == "tau2/retail"]


def longer(difference: str) -> bool:
    """A contract's longest string grown by a few characters in the copy: a short rare word whose
    shape was full (every pseudonym of it taken) gets a pseudonym one character longer (docs)."""
    match = re.fullmatch(r"/contracts/shapes/[^:]+/longest: '(\d+)', '(\d+)' in the copy's", difference)
    return match is not None and 0 < int(match.group(2)) - int(match.group(1)) <= 16


@published_data
@pytest.mark.parametrize("corpus", ["retail", "slack"])
def test_the_redacted_copy_teaches_the_same_flow_and_holds_no_rare_value(corpus: str, tmp_path: Path) -> None:
    sessions = train_sessions(corpus, tmp_path / "in")
    assert len(sessions) >= 5
    names = pseudonyms_for(sessions, KEY)
    copy = [redact_session(s, names) for s in sessions]
    original, redacted = json.loads(learn_flow(sessions).to_json()), json.loads(learn_flow(copy).to_json())
    # every site, count and compiled binding equal once values are mapped; only the raw evidence
    # counters of `bindings` may differ (a value the learner found inside a longer word: see the docs),
    # and the provenance, which names the sessions learned by their contents' hashes
    found = differences(original, redacted, names, limit=10 ** 6)
    assert [d for d in found if not d.startswith(("/bindings/", "/provenance/learned")) and not longer(d)] == []
    assert differences(original["table"], redacted["table"], names) == []
    assert differences(original["counts"], redacted["counts"], names) == []
    hashed = sum(1 for a, b in zip(sessions, copy) if a.model_dump_json() != b.model_dump_json())
    assert hashed == len(sessions), "some session was left as it was: the test would prove nothing"
    blob = "\n".join(s.model_dump_json() for s in copy).casefold()
    rare = rare_values(sessions)
    checked = [v for v in rare if any(len(w) >= MIN_WORD and w in names.rare for w in re.findall(r"[^\W_]+", v))]
    assert len(checked) >= 0.9 * len([v for v in rare if re.search(r"[^\W_]{2}", v)]) > 10
    left = [v for v in checked if re.search(r"(?<![\w])" + re.escape(v) + r"(?![\w])", blob)]
    assert left == []


def test_without_a_key_nothing_is_redacted_and_the_message_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(StrettoError, match=KEY_ENV):
        key_from_env()
    monkeypatch.setenv(KEY_ENV, "short")
    with pytest.raises(StrettoError, match="at least 16"):
        key_from_env()


def test_a_pseudonym_keeps_the_values_shape_and_differs_with_the_key() -> None:
    from stretto_core.sessions.redact import Pseudonyms

    one, two = Pseudonyms(key=KEY, rare={"w2575533", "smith"}), Pseudonyms(key=b"another key of enough bytes", rare={"w2575533"})
    assert re.fullmatch(r"#[A-Z]\d{7}", one.text("#W2575533")) and one.text("#W2575533") != "#W2575533"
    assert one.text("Smith and smith") == one.text("Smith") + " and " + one.text("smith").lower()
    assert one.text("W2575533") != two.text("W2575533")
    assert one.value(12345) == 12345 and one.value(True) is True


def test_the_cli_writes_a_copy_without_the_key_and_refuses_without_one(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from stretto_core.cli import main  # noqa: F401 - the entry point exists
    from stretto_core.cli import verb_app
    from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult
    from stretto_core.sessions.store import write_session

    for i in range(4):
        calls = [ToolCall(call_id="c", tool="get_user", arguments={"email": f"person{i}@example.org"})]
        write_session(Session(header=SessionHeader(session_id=f"s{i}", harness="t"), events=[
            LLMTurn(calls=calls), ToolResult(call_id="c", tool="get_user", content=json.dumps({"name": f"Zorblax{i}"}))]),
            tmp_path / "in")
    runner = CliRunner()
    monkeypatch.delenv(KEY_ENV, raising=False)
    refused = runner.invoke(verb_app("redact"), ["redact", str(tmp_path / "in"), "--out", str(tmp_path / "out")])
    assert refused.exit_code != 0 and not (tmp_path / "out").exists()
    secret = "correct horse battery staple"
    monkeypatch.setenv(KEY_ENV, secret)
    done = runner.invoke(verb_app("redact"), ["redact", str(tmp_path / "in"), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    text = "".join(p.read_text() for p in (tmp_path / "out").glob("*.jsonl"))
    assert len(list((tmp_path / "out").glob("*.jsonl"))) == 4
    assert "zorblax" not in text.casefold() and "person0" not in text and secret not in text
