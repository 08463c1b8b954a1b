"""Serving's default numbers, in a module that imports nothing: `Stretto(...)`'s signature reads
them when `stretto_core.serve.live` is imported, before any of the serving machinery loads."""

from __future__ import annotations

DEFAULT_THETA = 0.3
"""The paper's cost-derived threshold θ* = δ/(β+δ) ≈ 0.30 (retail, and live)."""

MAX_LOOKUPS_PER_CALL = 8
"""At most this many lookups ride on one tool result."""

MAX_LOOKUPS_PER_SESSION = 40
"""At most this many lookups in one session."""

LOOKUP_TIMEOUT = 5.0
"""Seconds one lookup may take before it is abandoned and recorded as failed."""

CALL_BUDGET = 10.0
"""Seconds all the lookups riding on one tool result may take together."""
