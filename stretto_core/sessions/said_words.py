"""Which of a user's words may be counted, one rule for learning and serving.

The intent counts (`learn/intent.py`) are kept per word the user wrote, and serving
(`serve/intent.py`) looks for the same words: both must cut a message into words the same way,
or a rule learned on one reading is served on another ("Return" at a sentence's start was never
counted, yet a case-folded search found it).
"""

from __future__ import annotations

import re

EDGES = "\"'.,;:!?()[]{}<>*`"
"""Punctuation stripped from the ends of a whitespace-separated token before it is judged."""
MIN_LETTERS, MAX_LETTERS = 3, 20

_CANDIDATE = re.compile(r"(?<!\S)[%s]*([^\W\d_]{%d,%d})[%s]*(?!\S)"
                        % (re.escape(EDGES), MIN_LETTERS, MAX_LETTERS, re.escape(EDGES)))
"""A whitespace-separated token that is letters (3–20) between edge punctuation: every token
`said_words` may count matches it (a letter is a word character, neither digit nor underscore)."""


def said_words(text: str) -> set[str]:
    """The words of a message that may be counted: tokens written in lower case, letters only, 3–20
    long (an email, an id, a number or a capitalized name is never one, nor any part of it).

    The same words as splitting on whitespace, stripping `EDGES` and keeping what is `isalpha`,
    `islower` and 3–20 long (a test holds the two equal), found by one regular expression: a
    quarter of the cost of learning the words was this function."""
    return {word for word in _CANDIDATE.findall(text) if word.islower() and word.isalpha()}
