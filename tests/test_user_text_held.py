"""Which values the user wrote (`UserText.holding`: a full state keeps each value's answer between
questions, a served one keeps none) is what a scan of every message kept finds, whenever asked."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from stretto_core.sessions.user_text import UserText
from stretto_core.sessions.value_written import written_in


@pytest.mark.parametrize("limit", [None, 400])
def test_the_values_the_user_wrote_are_those_a_scan_of_each_message_finds(limit) -> None:
    rng = random.Random(17)
    pieces = ["w123", "#w123", "order", "blue", "mia", "@mia", "zip 80202", "x", "lap", "top"]
    values = ["#w123", "w123", "@mia", "mia", "blue", "laptop", "lap top", "80202", "order", "p\nl", "absent"]
    text, said = UserText(limit, filter_from=10**9), []  # never a filter: the plain reading throughout
    branches: Counter[str] = Counter()
    for _ in range(250):
        message = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        text.add(message)
        said.append(message)
        for _ in range(rng.randint(0, 3)):  # asked a few times between two messages, or not at all
            keys = rng.sample(values, rng.randint(1, len(values)))
            for key in keys:
                got = text._held.get(key)
                branches["fresh" if got is None else
                         "same message" if got[0] == text.count else
                         "written before" if got[1] else
                         "sigil or line break" if "\n" in key or not key[0].isalnum() else "messages since"] += 1
            kept = said[text.dropped:]
            assert text.holding(keys) == [k for k in keys if any(written_in(m, k) for m in kept)]
    assert (text.dropped > 0) == (limit is not None)
    if limit is None:
        assert min(branches.values()) >= 10 and len(branches) == 5, branches  # every way of answering was taken
    else:
        assert not text._held  # a served state's memory does not grow with what was asked
