"""The same calls through two commits' proxies: the bytes the host sees and the session recorded
must be the same (issue 30, goal 5: a faster proxy forwards and records nothing differently).

Each checkout's `stretto proxy` serves the toy flow (learned by this checkout) in front of
`shop_server.py`; a raw host sends `initialize`, `tools/list` and `--calls` `get_order` calls (a
third of them new orders, the rest repeats of seven, so some calls make a lookup and some do not),
one at a time. Compared: every line the host read, byte for byte, and every recorded line as
JSON, with what differs from run to run by design made alike (the session's random appendix
fence, its id, and the times). Exits 1 when they differ, printing the first difference.

    python benchmarks/proxy_same_bytes.py [--before HEAD~1] [--calls 60]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from side_by_side import HERE, checkout, describe
from proxy_throughput import toy_flow_file

FENCE = re.compile(r"stretto [0-9a-f]{16}")
"""A session's appendix fence (drawn at random per session)."""


def through(code: Path, flow: Path, calls: int) -> tuple[list[str], list[dict]]:
    """The host's lines and the recorded session's lines, through `code`'s proxy."""
    store = tempfile.mkdtemp(prefix="stretto-same-bytes-")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), str(code / "adapters")])}
    command = [sys.executable, "-m", "stretto_core", "proxy", "--store", store, "--log-level", "ERROR",
               "--flow", str(flow), "--", sys.executable, str(HERE / "benchmarks" / "shop_server.py")]
    proxy = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=env, cwd=code)
    assert proxy.stdin is not None and proxy.stdout is not None
    seen: list[str] = []

    def send(message: dict) -> None:
        proxy.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proxy.stdin.flush()  # type: ignore[union-attr]

    def ask(number: int, method: str, params: dict) -> None:
        send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        while True:
            line = proxy.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise SystemExit(f"proxy_same_bytes: the proxy of {code} stopped answering")
            seen.append(FENCE.sub("stretto FENCE", line.decode()))
            if json.loads(line).get("id") == number:
                return

    ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "same-bytes", "version": "1"}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    ask(1, "tools/list", {})
    for n in range(calls):
        ask(2 + n, "tools/call", {"name": "get_order", "arguments": {"order_id": f"O{n}" if n % 3 == 0 else f"O{n % 7}"}})
    proxy.stdin.close()
    proxy.wait(30)
    [session] = Path(store).glob("*.jsonl")
    recorded = []
    for line in session.read_text(encoding="utf-8").splitlines():
        event = json.loads(FENCE.sub("stretto FENCE", line))
        for varies in ("at", "started_at", "session_id"):
            event.pop(varies, None)
        recorded.append(event)
    return seen, recorded


def first_difference(one: list, other: list) -> str:
    for a, b in zip(one, other):
        if a != b:
            return f"    before: {a}\n    after:  {b}"
    return f"    before has {len(one)} lines, after {len(other)}"


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--before", default="HEAD~1", help="the commit (or a checkout's folder) to compare with")
    options.add_argument("--calls", type=int, default=60)
    args = options.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder, checkout(args.before) as before:
        flow = toy_flow_file(Path(folder))
        host_before, session_before = through(before, flow, args.calls)
        host_after, session_after = through(HERE, flow, args.calls)
    lookups = [e.get("kind") for e in session_after].count("lookup")
    print(f"{args.calls} calls through the proxy of {describe(args.before)} and of this checkout "
          f"({lookups} lookups appended):")
    same = True
    for what, one, other in (("the host's bytes", host_before, host_after),
                             ("the recorded session", session_before, session_after)):
        print(f"  {what}: {'the same' if one == other else 'DIFFERENT'} ({len(one)} lines)")
        if one != other:
            same = False
            print(first_difference(one, other))
    return 0 if same and lookups else 1


if __name__ == "__main__":
    raise SystemExit(main())
