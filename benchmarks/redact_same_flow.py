"""How far `learn(redact(S))` is from `learn(S)` on shared train sessions (issue 27, item 2).

    .venv/bin/python benchmarks/redact_same_flow.py

For τ² retail (ToolOrchestra's gpt-4.1-mini run) and AgentDojo slack (gpt-4o), train split only:
sessions, words hashed, the fields of the two flows that differ once values are mapped (raw
binding-evidence counters apart from the rest), and the rare values a grep of the copy still finds.
Reads $STRETTO_DATA (default ../shared/data); fails loudly without it.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

from stretto_core.flow.ir import learn_flow
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.redact import MIN_WORD, differences, pseudonyms_for, rare_values, redact_session
from stretto_core.sessions.splits import filter_sessions
from stretto_core.sessions.store import load_sessions

SOURCES = {"tau2 retail": ("tau2", "tau2/trajectories/retail/gpt-4.1-mini-2025-04-14__toolorchestra_nvidia_2025-12-02"
                                    "__toolorchestra_retail_gpt-5_1trial.json"),
           "agentdojo slack": ("agentdojo", "agentdojo/runs/gpt-4o-2024-05-13/slack")}


def main() -> int:
    for name, (harness, rel) in SOURCES.items():
        path = data_root() / rel
        if not path.exists():
            print(f"redact_same_flow: no {path} (set STRETTO_DATA)", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            ingest_files(harness, [path], Path(tmp))
            sessions = list(filter_sessions(load_sessions([Path(tmp)]), "train"))
        names = pseudonyms_for(sessions, b"benchmark key, not a secret")
        copy = [redact_session(s, names) for s in sessions]
        a, b = json.loads(learn_flow(sessions).to_json()), json.loads(learn_flow(copy).to_json())
        diffs = [d for d in differences(a, b, names, limit=10 ** 6) if not d.startswith("/provenance/learned")]
        raw = [d for d in diffs if d.startswith("/bindings/")]
        blob = "\n".join(s.model_dump_json() for s in copy).casefold()
        checked = [v for v in rare_values(sessions)
                   if any(len(w) >= MIN_WORD and w in names.rare for w in re.findall(r"[^\W_]+", v))]
        left = [v for v in checked if re.search(r"(?<![\w])" + re.escape(v) + r"(?![\w])", blob)]
        print(f"{name}: {len(sessions)} train sessions, {len(names.rare)} words hashed; flow fields differing: "
              f"{len(diffs) - len(raw)} (+{len(raw)} raw binding-evidence counters); rare values left: {len(left)} "
              f"of {len(checked)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
