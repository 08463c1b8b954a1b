"""Outcome checks: the read that confirms what the ticket says "resolved" means.

A demonstrator that resolved a ticket read, after its last write, what the ticket's outcome is
about (a speed test, whether a message can be sent, the status bar). A check is learned for
each such read (the probe): the ticket phrase that says when it applies (nearly every resolved
episode whose ticket has the phrase ends with that read, and most that end with it have the
phrase; among equals, the phrase that shares most words with the probe's name and results), the
tokens every final result showed (`contains`, less those every earlier result also
showed), and the tokens earlier results showed that no final one did (`lacks`).
"""

from __future__ import annotations

from collections import defaultdict

from stretto_core.procedures.episodes import Episode
from stretto_core.procedures.ir import Check
from stretto_core.procedures.state import ticket_words

MIN_SUPPORT = 3
"""A check needs at least this many resolved episodes behind it."""

MIN_PRECISION = 0.95
"""Share of the phrase's resolved episodes that must end with the probe."""

MIN_RECALL = 0.5
"""Share of the probe's episodes the phrase must cover."""


def _finals(episode: Episode) -> dict[str, int]:
    last_write = max((i for i, s in enumerate(episode.steps) if s.kind != "read"), default=-1)
    return {s.action: i for i, s in enumerate(episode.steps)
            if i > last_write and s.kind == "read" and not s.error and s.action}


def learn_checks(episodes: list[Episode], vocab: list[str]) -> list[Check]:
    """The checks the resolved (not handed-off) episodes teach."""
    resolved = [e for e in episodes if e.ending != "handoff" and e.steps]
    words = [set(ticket_words(e.ticket)) for e in resolved]
    finals = [_finals(e) for e in resolved]
    probes = sorted({a for f in finals for a in f})
    checks: list[Check] = []
    for probe in probes:
        ending = {i for i, f in enumerate(finals) if probe in f}
        if len(ending) < MIN_SUPPORT:
            continue
        phrase = _phrase(probe, ending, words, vocab, _probe_words(resolved, finals, ending, probe))
        if phrase is None:
            continue
        chosen = [i for i in ending if phrase in words[i]]
        final_tokens = [set(resolved[i].steps[finals[i][probe]].tokens) for i in chosen]
        earlier = [set(s.tokens) for i in range(len(resolved)) for j, s in enumerate(resolved[i].steps)
                   if s.action == probe and not s.error and (i not in ending or j != finals[i][probe])]
        final_tokens = [{t for t in ts if not _composite(t)} for ts in final_tokens]
        earlier = [{t for t in ts if not _composite(t)} for ts in earlier]
        contains = set.intersection(*final_tokens)
        if earlier:
            contains -= set.intersection(*earlier)
        seen_earlier = set().union(*earlier) if earlier else set()
        lacks = seen_earlier - set().union(*final_tokens)
        if not contains and not lacks:
            continue
        checks.append(Check(phrase=phrase, probe=probe, contains=sorted(contains), lacks=sorted(lacks),
                            support=len(chosen)))
    return checks


def _composite(token: str) -> bool:
    """A whole line made of ` | ` pieces: its pieces are tokens of their own, and less strict."""
    return " | " in token


def _probe_words(resolved: list[Episode], finals: list[dict[str, int]], ending: set[int], probe: str) -> set[str]:
    """The words of the probe's name and of what it returned: a phrase sharing them is about it."""
    text = probe.split("{")[0].replace("_", " ")
    for i in sorted(ending)[:20]:
        text += " " + " ".join(t for s in resolved[i].steps if s.action == probe for t in s.tokens)
    return set(ticket_words(text))


def _phrase(probe: str, ending: set[int], words: list[set[str]], vocab: list[str],
            about: set[str]) -> str | None:
    having: dict[str, set[int]] = defaultdict(set)
    for i, ws in enumerate(words):
        for w in ws:
            having[w].add(i)
    best: tuple[float, int, int, str] | None = None
    for phrase in sorted(set(vocab) | {w for ws in words for w in ws}):
        with_phrase = having.get(phrase, set())
        if not with_phrase:
            continue
        hit = len(with_phrase & ending)
        precision = hit / len(with_phrase)
        recall = hit / len(ending)
        if precision < MIN_PRECISION or recall < MIN_RECALL or hit < MIN_SUPPORT:
            continue
        overlap = sum(1 for w in phrase.split() if w in about)
        score = (recall, overlap, len(phrase.split()), phrase)
        if best is None or score[:3] > best[:3]:
            best = score
    return best[3] if best else None


def check_passes(check: Check, tokens: list[str]) -> tuple[bool, str]:
    """Whether a probe's result meets the check, and why not when it does not."""
    have = set(tokens)
    missing = [t for t in check.contains if t not in have]
    present = [t for t in check.lacks if t in have]
    if missing:
        return False, f"{check.probe} does not show {missing[0]!r}"
    if present:
        return False, f"{check.probe} still shows {present[0]!r}"
    return True, f"{check.probe} confirms {check.phrase!r}"
