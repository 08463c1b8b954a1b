"""Read a field that a library renamed, without touching the old name where the new one exists.

MCP SDK v2 renamed `inputSchema`, `structuredContent`, `isError` and others to snake case, and
keeps the old names as deprecated aliases (FastMCP's shim warns on every read of one). A value of
either era is read by its new name where it has it, else by the old one.
"""

from __future__ import annotations

from typing import Any

_ABSENT = object()


def renamed_field(value: Any, name: str, old_name: str, default: Any = None) -> Any:
    """`value.name` where the value has it, else `value.old_name`, else `default`."""
    found = getattr(value, name, _ABSENT)
    if found is not _ABSENT:
        return found
    return getattr(value, old_name, default)
