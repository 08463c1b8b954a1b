"""The user's words as one more binding source: a message cut into values by shape and position.

An adapter sees the conversation (a proxy does not). With learning's `user_words` option, each
user message joins the tool state as a result of the pseudo-tool `USER_TOOL`, whose paths are
the message's values by shape and by position, so that provenance, evidence, ρ and serving treat
them as they treat any result's: a source is `(user) $.email[*]`, its pool the latest messages
first, its pick the first value there the tool was not yet passed for the argument.

    pattern  the request's only email, ISO date, number or id (a token with letters and digits),
             at `$.email`, `$.date`, `$.number`, `$.id`: the paper's pattern (Appendix D)
    spans    every email, date, number and id (`$.email[*]` …), quoted text (`$.quoted[*]`),
             file names and URLs (`$.file[*]`, `$.url[*]`), runs of capitalized words
             (`$.name[*]`), and by position the one or two words after each context word, as
             written and capitalized (`$.after.<w>`, `$.after2.<w>`, `$.after_cap.<w>`,
             `$.after2_cap.<w>`: "emails from nadia" puts `nadia` at `$.after.from` and
             `Nadia` at `$.after_cap.from`)

Which of these the agents passed, and for which argument, is counted like any source's
provenance, so learning keeps the paths that name values (`$.after.channel`, `$.quoted[*]`) and
drops those that never did. Paths hold no data: context words are single lower-case tokens.
"""

from __future__ import annotations

import re
from typing import Any

USER_TOOL = "(user)"
"""The pseudo-tool whose results are the user's messages (never looked up: no manifest has it)."""

MODES = ("pattern", "spans")

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
URL = re.compile(r"\b(?:https?://)?(?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|co|edu)(?:/\S*)?",
                 re.IGNORECASE)
FILE = re.compile(r"\b[\w-]+\.(?:xlsx|xls|docx|doc|txt|pdf|csv|json|md|pptx|png|jpg)\b", re.IGNORECASE)
QUOTED = re.compile(r"(?<![\w'])'([^'\n]{1,80}?)'(?![\w])|\"([^\"\n]{1,80}?)\"|“([^”\n]{1,80}?)”")
TOKEN = re.compile(r"[\w@#$][\w@#$.'+/-]*")
NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:[A-Z][\w'-]*|de|la|le|van|von|of))*")
NUMBER = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w-])")

LEADING = frozenset("""i a an the and or but if then also please can could would will shall should may
what which who whom whose how when where why is are was were do does did have has hi hey hello dear my our
your we you it this that these those there here on in at for to of from with by yes no ok okay thanks thank
let make send create find get add delete book perform tell give show check move update""".split())
"""Capitalized words that start a sentence rather than a name: dropped from the front of a run."""

MAX_CONTEXT = 20
"""A context word longer than this is not a context word."""


def _clean(token: str) -> str:
    """A token as a value: trailing punctuation and a possessive `'s` off."""
    token = token.rstrip(".,;:!?)'\"")
    if token.lower().endswith("'s"):
        token = token[:-2]
    return token


def _ids(tokens: list[str]) -> list[str]:
    out = []
    for t in tokens:
        t = _clean(t)
        if any(c.isdigit() for c in t) and any(c.isalpha() for c in t) and "@" not in t and len(t) >= 2:
            out.append(t)
    return out


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


def shapes(text: str) -> dict[str, list[str]]:
    """The values of a message by shape, in order of first appearance."""
    emails = _unique(EMAIL.findall(text))
    dates = _unique(DATE.findall(text))
    rest = DATE.sub(" ", EMAIL.sub(" ", text))
    return {"email": emails, "date": dates, "number": _unique(NUMBER.findall(rest)),
            "id": _unique(_ids(TOKEN.findall(rest)))}


def _name(run: str) -> str:
    """A run of capitalized words without the sentence-starting words in front."""
    words = run.split()
    while words and words[0].lower() in LEADING:
        words = words[1:]
    return _clean(" ".join(words)) if words and len(" ".join(words)) >= 2 else ""


def _capitalized(word: str) -> str:
    return word[:1].upper() + word[1:]


def user_spans(text: str, mode: str) -> dict[str, Any]:
    """The parsed result a user message stands for as a source (module docstring); {} when none."""
    found = shapes(text)
    if mode == "pattern":
        return {shape: values[0] for shape, values in found.items() if len(values) == 1}
    out: dict[str, Any] = {shape: values for shape, values in found.items() if values}
    quoted = _unique([next(g for g in m.groups() if g is not None).strip() for m in QUOTED.finditer(text)])
    if quoted:
        out["quoted"] = quoted
    for shape, pattern in (("file", FILE), ("url", URL)):
        values = _unique(pattern.findall(EMAIL.sub(" ", text)))
        if values:
            out[shape] = values
    names = _unique([_name(m.group(0)) for m in NAME.finditer(text)])
    if names:
        out["name"] = names
    tokens = [_clean(t) for t in TOKEN.findall(text)]
    tokens = [t for t in tokens if t]
    after: dict[str, str] = {}
    after2: dict[str, str] = {}
    for i in range(1, len(tokens)):
        word = tokens[i - 1].lower()
        if not word.isalpha() or len(word) > MAX_CONTEXT:
            continue
        after.setdefault(word, tokens[i])
        if i + 1 < len(tokens):
            after2.setdefault(word, f"{tokens[i]} {tokens[i + 1]}")
    for key, values in (("after", after), ("after2", after2)):
        # flat keys (`after.from`), so the context words are path segments and never values
        out.update({f"{key}.{w}": v for w, v in values.items()})
        for w, v in values.items():
            cap = " ".join(_capitalized(p) for p in v.split(" "))
            if cap != v:
                out[f"{key}_cap.{w}"] = cap
    return out
