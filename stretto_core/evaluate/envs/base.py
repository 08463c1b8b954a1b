"""What every benchmark environment shares: the protocol, the error, the install hint."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from stretto_core.errors import StrettoError

Requestor = str
"""Who makes a call: "agent" (the default) or "user" (τ² telecom's customer on their phone)."""


class EnvironmentUnavailable(StrettoError):
    """No environment can be built: the app has none, or its package is not installed."""


@runtime_checkable
class ToolEnvironment(Protocol):
    """One episode's live environment: each call changes it as the benchmark's own would."""

    def call(
        self, tool: str, arguments: dict[str, Any], requestor: Requestor = "agent"
    ) -> tuple[str, bool]:
        """Execute one call; return the text the agent would see and whether it is an error."""
        ...


def split_app(app: str | None) -> tuple[str, str]:
    """`"tau2/retail"` -> `("tau2", "retail")`; an app without a `/` has an empty domain."""
    benchmark, _, domain = (app or "").partition("/")
    return benchmark, domain


def missing_package(package: str, pip_name: str, exc: ImportError) -> EnvironmentUnavailable:
    """The error for an environment whose package cannot be imported, saying how to install it."""
    return EnvironmentUnavailable(
        f"the {package} environment needs the {pip_name!r} package, which cannot be imported "
        f"({exc}); install it with scripts/install-envs.sh (see requirements-envs.txt)"
    )
