"""A session's fingerprint: a short hash of its content, so a flow can name the sessions it learned from.

`stretto flow promote` must never judge a site on sessions the flow learned from (they would
vouch for the very counts being judged), and a flow file carries no session ids of its own. The
fingerprint hashes the whole session as its format writes it (header and events) except
`header.source`, which says where an ingested episode was read from (an absolute path, so the same
episodes ingested on two machines would name different sessions, and a flow learned on one would not
be the flow learned on the other). The same session read twice, from any path, gives the same
fingerprint, and an edited one another.
"""

from __future__ import annotations

import hashlib

from stretto_core.sessions.model import Session

FINGERPRINT_CHARS = 16
"""Hex characters kept of the SHA-256 (64 bits: no collision among a deployment's sessions)."""


def session_fingerprint(session: Session) -> str:
    """The first `FINGERPRINT_CHARS` hex characters of the SHA-256 of the session's JSON, less its source."""
    body = session.model_dump_json(exclude_none=True, exclude={"header": {"source"}}).encode("utf-8")
    return hashlib.sha256(body).hexdigest()[:FINGERPRINT_CHARS]
