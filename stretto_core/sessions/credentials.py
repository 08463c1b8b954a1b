"""Credentials out of what stretto writes: a server's command line, a URL, a log line.

A proxy names the server it fronts in every session header and in its log, and operators put
keys on command lines (`--api-key sk-…`, `--token=…`, `PASSWORD=…`, `postgres://admin:pw@db`).
Those become `<redacted>` here, before anything is written: the value after a flag whose name
says secret, the value of a `name=value` whose name says secret, a URL's password (and a user
part that looks like a token), a URL query value whose name says secret, and strings shaped like
well-known keys (`sk-…`, `ghp_…`, `xoxb-…`, `AKIA…`, JWTs, `Bearer …`). Paths, names and
ordinary values pass unchanged, so the header still says which server it was.
"""

from __future__ import annotations

import logging
import re
from typing import Sequence

REDACTED = "<redacted>"

_SECRET_WORDS = frozenset({"token", "secret", "password", "passwd", "pwd", "pass", "passphrase", "auth",
                           "authorization", "credential", "credentials", "apikey", "bearer", "cookie", "pat",
                           "dsn"})
"""A flag, variable or parameter with one of these words in its name holds a secret."""

_KEY_OWNERS = frozenset({"api", "access", "private", "secret", "session", "client", "signing", "encryption",
                         "master", "license", "x"})
"""… and so does one with `key` after one of these (`api-key`, `ACCESS_KEY`, `x-api-key`)."""

_SECRET_ENDINGS = ("token", "secret", "password", "apikey")
"""… and one whose word ends so (`accesstoken`, `dbpassword`)."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_SPLIT = re.compile(r"[-_.\s]+")

_TOKEN_SHAPES = re.compile(
    r"\b(sk|pk|rk)[-_](live[-_]|test[-_]|proj[-_]|ant[-_])?[A-Za-z0-9_-]{12,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{16,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\bhf_[A-Za-z0-9]{20,}|\bnpm_[A-Za-z0-9]{20,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
"""Strings shaped like well-known keys, wherever they stand."""

_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s]*)(:(?P<password>[^@/\s]*))?@")
_NAME_VALUE = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<sep>=|:(?!//))(?P<value>[^\s&;,]+)")
_FLAG = re.compile(r"^-{1,2}(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)$")


def is_secret_name(name: str) -> bool:
    """True for a flag, variable or field name that says it holds a secret (`--api-key`,
    `DB_PASSWORD`, `authToken`); `--author` or `--design` do not."""
    words = [w for w in _WORD_SPLIT.split(_CAMEL.sub("_", name).lower()) if w]
    for i, word in enumerate(words):
        if word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS):
            return True
        if word == "key" and i > 0 and words[i - 1] in _KEY_OWNERS:
            return True
    return False


def redact_text(text: str) -> str:
    """`text` with every credential-looking part replaced by `<redacted>` (see the module docstring)."""
    if not text:
        return text
    text = _URL_USERINFO.sub(_userinfo, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _TOKEN_SHAPES.sub(REDACTED, text)
    text = _NAME_VALUE.sub(_name_value, text)
    return _flag_values(text)


def redact_command(argv: Sequence[str]) -> list[str]:
    """A command line with its credentials redacted, word by word: the word after a secret flag
    (`--api-key X`) and every credential inside a word."""
    out: list[str] = []
    secret_next = False
    for word in argv:
        word = str(word)
        if secret_next:
            out.append(word if word.startswith(REDACTED) else REDACTED)
            secret_next = False
            continue
        flag = _FLAG.match(word)
        secret_next = bool(flag and is_secret_name(flag.group("name")))
        out.append(redact_text(word))
    return out


def _userinfo(match: re.Match[str]) -> str:
    user, password = match.group("user"), match.group("password")
    if password is not None:
        return f"{match.group('scheme')}{user}:{REDACTED}@"
    if len(user) >= 16 or _TOKEN_SHAPES.search(user):  # `https://<token>@host`: the user part is the key
        return f"{match.group('scheme')}{REDACTED}@"
    return match.group(0)


def _name_value(match: re.Match[str]) -> str:
    if match.group("value") == REDACTED or not is_secret_name(match.group("name")):
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{REDACTED}"


def _flag_values(text: str) -> str:
    """In a line of words, the word after a secret flag (`--token X`)."""
    words = text.split(" ")
    if len(words) < 2:
        return text
    return " ".join(redact_command(words))


class RedactingFilter(logging.Filter):
    """A log filter that redacts credentials from each record's message (installed on stretto's
    log handlers), so a line that quotes a command or a URL never carries a key."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record whose arguments do not format: leave it to logging
            return True
        clean = redact_text(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True
