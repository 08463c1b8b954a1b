"""Start a proxy: the server (a child or a URL), the host on stdio, the served flow, the relay.

`run_proxy(ProxyConfig(...))` is what `stretto proxy` calls; it returns the exit status
(`relay.ExitStatus`). Everything the proxy says goes to stderr, which MCP hosts keep as the
server's log; stdout is the wire and nothing else writes to it.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stretto_core.errors import OptionError, StrettoError
from stretto_core.serve.option_values import (check_choice, check_count, check_days, check_fraction, check_names,
                                              check_seconds)

log = logging.getLogger("stretto.proxy")

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
"""What `--log-level` takes (in any case)."""


class ProxyConfig(BaseModel):
    """What `stretto proxy` was asked to do."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] = Field(default_factory=list)
    """The downstream stdio server's command line (empty when `upstream` is given)."""
    upstream: str | None = None
    """A Streamable HTTP server's URL instead of a command."""
    flow: Path | None = None
    store: Path | None = None
    record: bool = True
    reads: list[str] = Field(default_factory=list)
    allow: list[str] | None = None
    deny: list[str] = Field(default_factory=list)
    theta: float | None = None
    per_call: int | None = None
    per_session: int | None = None
    lookup_timeout: float | None = None
    call_budget: float | None = None
    server_timeout: float = 600.0
    app: str | None = None
    session_id: str | None = None
    task_id: str | None = None
    solo: bool = False
    """No user speaks to the agent behind the host: its sessions are recorded and served as solo
    (a flow serves each mode by the sessions of that mode it learned, `flow/modes.py`)."""
    labels: dict[str, str] = Field(default_factory=dict)
    log_level: str = "INFO"
    trace: Path | None = None
    """Write every message both ways to this file (JSON lines), for debugging."""
    retain_days: float | None = None
    """Delete recorded sessions older than this many days when the proxy starts."""
    redact_fields: list[str] = Field(default_factory=list)
    """Hash the values under these fields before a session is written (key: STRETTO_REDACT_KEY)."""
    shadow: bool = False
    """Decide as when serving and record each would-be lookup, calling and appending nothing."""
    holdout: float = 0.0
    """The fraction of sessions, drawn at random, served nothing (recorded as mode `holdout`)."""

    @field_validator("reads", "deny", mode="before")
    @classmethod
    def _names(cls, value: Any, info: Any) -> list[str]:
        return list(check_names(info.field_name, value))

    @field_validator("allow", mode="before")
    @classmethod
    def _allowed(cls, value: Any) -> list[str] | None:
        return None if value is None else list(check_names("allow", value))

    @field_validator("theta", "holdout", mode="before")
    @classmethod
    def _fraction(cls, value: Any, info: Any) -> float | None:
        return None if value is None else check_fraction(info.field_name, value)

    @field_validator("per_call", "per_session", mode="before")
    @classmethod
    def _budget(cls, value: Any, info: Any) -> int | None:
        return None if value is None else check_count(info.field_name, value)

    @field_validator("lookup_timeout", "call_budget", "server_timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any, info: Any) -> float | None:
        return None if value is None else check_seconds(info.field_name, value)

    @field_validator("retain_days", mode="before")
    @classmethod
    def _days(cls, value: Any, info: Any) -> float | None:
        return None if value is None else check_days(info.field_name, value)

    @field_validator("log_level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> str:
        level = value.upper() if isinstance(value, str) else value
        check_choice("log_level", level, LOG_LEVELS)
        return level

    @classmethod
    def checked(cls, **fields: Any) -> "ProxyConfig":
        """The config, or an `OptionError` naming the first bad option on one line."""
        from stretto_core.serve.options import one_line

        try:
            return cls(**fields)
        except ValidationError as exc:
            raise OptionError(one_line(exc, cls)) from None


def build_stretto(config: ProxyConfig) -> Any:
    """The served flow and recorder (no flow: record only), with the operator's limits."""
    from stretto_core import Stretto

    kwargs: dict[str, Any] = {}
    for name in ("theta", "per_call", "per_session", "lookup_timeout", "call_budget"):
        value = getattr(config, name)
        if value is not None:
            kwargs[name] = value
    store: Any = config.store if config.record else False
    return Stretto(config.flow, store=store, harness="mcp-proxy", app=config.app, allow=config.allow,
                   deny=config.deny, shadow=config.shadow, holdout=config.holdout, retain_days=config.retain_days,
                   redact_fields=config.redact_fields, **kwargs)


async def open_server(config: ProxyConfig) -> Any:
    from stretto_mcp.channels import HttpServer, spawn_server

    if config.upstream:
        return await HttpServer(config.upstream).start()
    return await spawn_server(list(config.command))


async def serve(config: ProxyConfig, host: Any = None, *, owns_process: bool = False) -> int:
    """Run one proxy until the host or the server goes; the exit status. `owns_process`: this
    process does nothing else (`stretto proxy`), so the garbage collector runs between replies,
    never inside one (`serve/pauses.py`)."""
    from stretto_mcp.channels import open_host_stdio
    from stretto_mcp.listing import Listing
    from stretto_mcp.relay import ExitStatus, Relay, RelayOptions
    from stretto_mcp.served import Served

    stretto = build_stretto(config)
    if owns_process:  # the flow settled; collections between replies, not inside them
        from stretto_core.serve.pauses import serve_without_pauses

        serve_without_pauses()
    listing = Listing(stretto.flow, reads=config.reads, allow=config.allow, deny=config.deny)
    served = Served(stretto, listing, session_id=config.session_id, task_id=config.task_id, solo=config.solo,
                    labels={"proxy.server": _describe(config), **config.labels})
    try:
        server = await open_server(config)
    except Exception as exc:  # noqa: BLE001 - a server that cannot start is reported, not raised
        what = _describe(config)
        log.error("stretto proxy: cannot start the server %s: %s", what, exc)
        return int(ExitStatus.SERVER_GONE)
    if host is None:
        host = await open_host_stdio()
    if config.trace is not None:
        from stretto_mcp.channels import Traced

        from stretto_core.private import append_private

        trace = append_private(config.trace)
        host, server = Traced(host, trace), Traced(server, trace)
    relay = Relay(host, server, served, RelayOptions(server_timeout=config.server_timeout))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        try:
            loop.add_signal_handler(sig, relay.stop, ExitStatus.CLEAN, f"stopped by {sig.name}")
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    status = await relay.run()
    if served.live is not None and served.live.recorder is not None:
        log.info("stretto proxy: session recorded in %s", served.live.recorder.path)
    return int(status)


def _describe(config: ProxyConfig) -> str:
    """The server as the header and the log name it: its URL or command, credentials redacted."""
    from stretto_core.sessions.credentials import redact_command, redact_text

    return redact_text(config.upstream) if config.upstream else " ".join(redact_command(config.command))[:200]


def configure_logging(level: str) -> None:
    """stretto's loggers (the proxy's and the core's) print plain lines to stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    from stretto_core.sessions.credentials import RedactingFilter

    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("stretto")
    logger.handlers[:] = [handler]
    logger.setLevel(getattr(logging, level.upper(), logging.INFO))
    logger.propagate = False


def run_proxy(config: ProxyConfig) -> int:
    """The blocking entry point: configure stderr logging and serve."""
    configure_logging(config.log_level)
    _fast_event_loop()
    try:
        return asyncio.run(serve(config, owns_process=True))
    except KeyboardInterrupt:
        return 0
    except StrettoError as exc:  # a bad flow, option or path: the operator's to fix, in one line
        log.error("stretto proxy: %s", exc)
        return 2
    except Exception:  # noqa: BLE001 - a bug of the proxy: say so, with the traceback, on stderr
        log.exception("stretto proxy: internal error")
        return 1


def _fast_event_loop() -> None:
    """uvloop's event loop where it is installed (the `mcp` extra installs it, except on Windows), unless
    `STRETTO_PROXY_LOOP=asyncio`: with a flow making one lookup per call it takes a third off the
    proxy's CPU per call (`benchmarks/proxy_cpu.py --flow --loop uvloop`), most of which is the
    loop's own work. Only where stdin and stdout are pipes or sockets, as a host starts the
    proxy: uvloop aborts on a regular file as stdin."""
    import os
    import stat

    asked = os.environ.get("STRETTO_PROXY_LOOP", "").lower()
    if asked == "asyncio":
        return
    try:
        modes = [os.fstat(fd).st_mode for fd in (0, 1)]
        import uvloop
    except (OSError, ImportError):
        if asked == "uvloop":
            log.warning("stretto proxy: STRETTO_PROXY_LOOP=uvloop, but uvloop is not installed; asyncio's loop it is")
        return
    if all(stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) for mode in modes):
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def split_names(value: str | None) -> list[str]:
    """`a,b , c` -> ['a', 'b', 'c']."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m stretto_mcp [--flow F] -- <server command>` (the CLI verb is the usual way)."""
    import argparse

    parser = argparse.ArgumentParser(prog="stretto_mcp")
    parser.add_argument("--flow")
    parser.add_argument("--store")
    parser.add_argument("--upstream")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else list(args.command)
    return run_proxy(ProxyConfig(command=command, upstream=args.upstream, flow=args.flow, store=args.store))
