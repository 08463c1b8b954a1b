"""MCP SDK v2 renamed fields to snake case and keeps the old names as deprecated aliases: stretto
reads the new name where it exists and never touches the old one (whose read warns)."""

from __future__ import annotations

from stretto_core.serve.results import is_error_result
from stretto_core.sessions.renamed import renamed_field


class V2Result:
    is_error = False
    structured_content = None

    @property
    def isError(self) -> bool:  # noqa: N802 - the deprecated alias itself
        raise AssertionError("the deprecated alias was read")


class V1Result:
    isError = True


def test_the_new_name_is_read_and_the_deprecated_alias_never_touched() -> None:
    assert is_error_result(V2Result()) is False
    assert renamed_field(V2Result(), "structured_content", "structuredContent", "none") is None


def test_a_value_of_the_older_era_is_read_by_its_old_name() -> None:
    assert is_error_result(V1Result()) is True
    assert renamed_field(object(), "is_error", "isError", "neither") == "neither"
