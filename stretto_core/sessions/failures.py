"""Which recorded results are transient failures: the service failed, not the call.

A lookup made earlier than the agent's own call of the same read, with no write between, gets
what that call got: the replay counts it as answered. That holds for what the tool's state
decides ("Error: Order not found" comes back again), but not for a failure of the moment
(`Error: 503`, a timeout): a lookup made at another time would not have met it, and an agent that
met it calls again. So a call whose result is a transient failure is never counted as saved;
the replay reports the lookups that matched one apart (`LookupRow.transient`).

A result is a transient failure when it is an error (its `error` flag, or text that starts with
`Error`) and either
  1. its text says the service failed: an HTTP status 408, 425, 429 or 5xx given as a status
     (`Error: 503`, `HTTP 502`, `status code 504`, `503 Service Unavailable`), or words such as
     timeout, timed out, rate limit, too many requests, temporarily unavailable, service
     unavailable, overloaded, connection reset / refused / aborted, try again later; or
  2. the record shows it did not last: the agent made the same call again (same tool and
     arguments) before its next write and got another result.
Errors that name the call's own fault (not found, invalid argument, a validation error) are not
transient: the same call gets them again.
"""

from __future__ import annotations

import re

MAX_SCANNED = 2_000
"""Only this many leading characters of a result are read for the markers (a result is untrusted text)."""

_STATUS = r"(?:408|425|429|5\d\d)"
_STATUS_AT_START = re.compile(
    rf"^\s*(?:[\w.]*(?:error|exception)\b\s*:?\s*)?(?:http\s*)?(?:status(?:\s*code)?\s*:?\s*)?{_STATUS}\b",
    re.IGNORECASE)
_STATUS_NAMED = re.compile(rf"\b(?:http(?:/\d(?:\.\d)?)?|status(?:\s*code)?|error\s*code|code)\s*[:=]?\s*{_STATUS}\b",
                           re.IGNORECASE)
_STATUS_PHRASE = re.compile(
    rf"\b{_STATUS}\s+(?:service unavailable|bad gateway|gateway time-?out|internal server error|too many requests|"
    r"request time-?out|server error)\b", re.IGNORECASE)
_WORDS = re.compile(
    r"\b(?:time[d]?\s*-?out|timed out|rate[- ]limit(?:ed)?|too many requests|temporar(?:il)?y unavailable|"
    r"service unavailable|server (?:is )?(?:busy|overloaded)|overloaded|connection (?:reset|refused|aborted|error)|"
    r"try again later|internal server error|bad gateway|gateway time-?out)\b", re.IGNORECASE)


def is_error_text(content: str) -> bool:
    """Whether a result's text reads as an error (some harnesses flag none)."""
    return content.lstrip()[:5].lower() == "error"


def says_service_failed(content: str) -> bool:
    """Rule 1: the text of an error result names a failure of the service, not of the call."""
    head = content[:MAX_SCANNED]
    return bool(_STATUS_AT_START.search(head) or _STATUS_NAMED.search(head) or _STATUS_PHRASE.search(head)
                or _WORDS.search(head))


def is_failure(content: str, error: bool) -> bool:
    """Whether a result is an error at all: flagged so, or text that says so."""
    return error or is_error_text(content)


def is_transient_failure(content: str, error: bool, retried_otherwise: bool = False) -> bool:
    """Whether a result is a transient failure (see the module docstring).

    `retried_otherwise`: the agent made the same call again before its next write and got
    another result (rule 2), which only the record can say.
    """
    if not is_failure(content, error):
        return False
    return retried_otherwise or says_service_failed(content)
