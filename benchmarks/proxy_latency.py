"""What the proxy adds to each forwarded message: round trips direct and through it, same run.

    .venv/bin/python benchmarks/proxy_latency.py [--calls 400] [--json proxy_latency.json]

A raw JSON-RPC host (no SDK of its own, so the host's cost does not hide the proxy's) makes the
same requests to a server directly and through `stretto proxy` (recording on, no flow, so every
call is forwarded, recorded and answered with no lookup), alternating in blocks so both see the
same machine load. For `tools/call` it also measures, in the same run, a minimal forwarder on
the mcp SDK's low-level `Server` + `Client` (tools only, no recording): the design the proxy was
first planned on. Servers: the toy server of the tests (answers in microseconds) and the real
mcp-server-git (`git_branch`). Prints p50 and p99 of each round trip, the added time at p50 and
p99 (through minus direct), and the ratio; the goal is p99 added < 2 ms. Wall times move with the
machine's load, so it also prints the proxy's CPU time per forwarded message (user + system,
from /proc), which moves much less; where uvloop is installed, a proxy on uvloop's loop
(`STRETTO_PROXY_LOOP=uvloop`) is measured beside the default one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "adapters"))


class RawClient:
    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
        self.counter = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _write(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> float:
        """One round trip; its wall time in seconds."""
        assert self.process.stdout is not None
        self.counter += 1
        started = time.perf_counter()
        self._write({"jsonrpc": "2.0", "id": self.counter, "method": method, "params": params})
        while True:
            line = json.loads(self.process.stdout.readline())
            if line.get("id") == self.counter:
                return time.perf_counter() - started

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU the proxy process used so far (Linux), load-independent unlike wall time."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        import os

        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sdk_forwarder(server: list[str]) -> None:
    """A minimal MCP forwarder on the SDK's low-level Server + Client: tools/list and tools/call."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with Client(StdioServerParameters(command=server[0], args=server[1:]), mode="legacy") as down:
            async def list_tools(ctx, params):  # noqa: ANN001, ANN202
                return await down.list_tools()

            async def call_tool(ctx, params):  # noqa: ANN001, ANN202
                return await down.call_tool(params.name, params.arguments)

            forwarder = Server("sdk-forwarder", on_list_tools=list_tools, on_call_tool=call_tool)
            async with stdio_server() as (read, write):
                await forwarder.run(read, write, forwarder.create_initialization_options())

    anyio.run(main)



def has_uvloop() -> bool:
    return subprocess.run([sys.executable, "-c", "import uvloop"], capture_output=True).returncode == 0


def measure(server: list[str], method: str, params: dict, calls: int, store: Path) -> dict:
    import os

    proxy = [sys.executable, "-m", "stretto_core", "proxy", "--store", str(store), "--log-level", "ERROR",
             "--", *server]
    clients = {"direct": RawClient(server), "proxy": RawClient(proxy)}
    if has_uvloop():  # the proxy on uvloop's loop (STRETTO_PROXY_LOOP=uvloop) beside asyncio's
        clients["proxy_uvloop"] = RawClient(proxy, env={**os.environ, "STRETTO_PROXY_LOOP": "uvloop"})
    if method == "tools/call":
        clients["sdk"] = RawClient([sys.executable, str(Path(__file__).resolve()), "--sdk-forwarder", "--", *server])
    times: dict[str, list[float]] = {name: [] for name in clients}
    for _ in range(20):  # warm them up
        for client in clients.values():
            client.request(method, params)
    block = 20
    proxies = [name for name in clients if name.startswith("proxy")]
    cpu_start = {name: cpu_seconds(clients[name].process.pid) for name in proxies}
    for _ in range(max(1, calls // block)):
        for name, client in clients.items():
            for _ in range(block):
                times[name].append(client.request(method, params))
    cpu_end = {name: cpu_seconds(clients[name].process.pid) for name in proxies}
    for client in clients.values():
        client.close()
    row = {"server": " ".join(Path(server[0]).name for _ in [0]) + " " + method, "calls": len(times["direct"])}
    for name, values in times.items():
        row[f"{name}_p50_ms"] = round(statistics.median(values) * 1000, 3)
        row[f"{name}_p99_ms"] = round(percentile(values, 0.99) * 1000, 3)
    for name in [n for n in clients if n != "direct"]:
        prefix = "" if name == "proxy" else f"{name}_"
        row[f"{prefix}added_p50_ms"] = round(row[f"{name}_p50_ms"] - row["direct_p50_ms"], 3)
        row[f"{prefix}added_p99_ms"] = round(row[f"{name}_p99_ms"] - row["direct_p99_ms"], 3)
    for name in proxies:  # a round trip is two forwarded messages: the request and its answer
        start, end = cpu_start[name], cpu_end[name]
        per_trip = (end - start) / len(times[name]) * 1000 if start is not None and end is not None else None
        row[f"{name}_cpu_ms_per_round_trip"] = None if per_trip is None else round(per_trip, 3)
        row[f"{name}_cpu_ms_per_message"] = None if per_trip is None else round(per_trip / 2, 3)
    row["ratio_p50"] = round(row["proxy_p50_ms"] / row["direct_p50_ms"], 2)
    row["ratio_p99"] = round(row["proxy_p99_ms"] / row["direct_p99_ms"], 2)
    return row


def main() -> int:
    if sys.argv[1:2] == ["--sdk-forwarder"]:
        sdk_forwarder(sys.argv[3:] if sys.argv[2:3] == ["--"] else sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--json", type=Path, default=Path("proxy_latency.json"))
    args = parser.parse_args()
    from proxy_support import toy_server_command

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        for git in (["init", "-q"], ["config", "user.email", "b@example.com"], ["config", "user.name", "b"]):
            subprocess.run(["git", *git], cwd=repo, check=True)
        (repo / "a").write_text("a\n")
        subprocess.run(["git", "add", "a"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-qm", "a"], cwd=repo, check=True)
        cases = [(toy_server_command(), "tools/call", {"name": "get_order", "arguments": {"order_id": "O1"}}),
                 (toy_server_command(), "ping", {})]
        git_server = shutil.which("mcp-server-git") or str(Path(sys.executable).parent / "mcp-server-git")
        if Path(git_server).exists():
            cases.append(([git_server, "--repository", str(repo)], "tools/call",
                          {"name": "git_branch", "arguments": {"repo_path": str(repo), "branch_type": "local"}}))
        for server, method, params in cases:
            row = measure(server, method, params, args.calls, Path(tmp) / "sessions")
            row["server"] = ("mcp-server-git" if "git" in server[0] else "toy server") + f" {method}" + (
                f" {params['name']}" if "name" in params else "")
            rows.append(row)
    if not has_uvloop():
        print("uvloop is not installed: the proxy on uvloop's loop (STRETTO_PROXY_LOOP=uvloop) is not measured")
    print(f"{'server / message':34} {'direct p50':>10} {'p99':>7} {'proxy p50':>10} {'p99':>7} "
          f"{'added p50':>10} {'p99':>7} {'ratio p50':>9} {'p99':>5}  proxy CPU per message")
    for r in rows:
        print(f"{r['server']:34} {r['direct_p50_ms']:>10.3f} {r['direct_p99_ms']:>7.3f} {r['proxy_p50_ms']:>10.3f} "
              f"{r['proxy_p99_ms']:>7.3f} {r['added_p50_ms']:>10.3f} {r['added_p99_ms']:>7.3f} "
              f"{r['ratio_p50']:>9.2f} {r['ratio_p99']:>5.2f}  {r['proxy_cpu_ms_per_message']} ms")
    for r in rows:
        if "proxy_uvloop_added_p50_ms" in r:
            print(f"{r['server']:34} on uvloop's loop: added p50 {r['proxy_uvloop_added_p50_ms']:.3f}, "
                  f"p99 {r['proxy_uvloop_added_p99_ms']:.3f}; CPU {r['proxy_uvloop_cpu_ms_per_message']} ms/message")
        if "sdk_added_p50_ms" in r:
            print(f"{r['server']:34} SDK Server+Client forwarder: added p50 {r['sdk_added_p50_ms']:.3f}, "
                  f"p99 {r['sdk_added_p99_ms']:.3f}")
    print("milliseconds per round trip (a request and its answer: two forwarded messages); added = through the "
          "proxy minus direct, same run; goal: p99 added < 2 ms; CPU: the proxy's user+system time per message")
    print(f"load average while measuring: {Path('/proc/loadavg').read_text().split()[:3] if Path('/proc/loadavg').exists() else '?'}")
    args.json.write_text(json.dumps({"calls": args.calls, "rows": rows}, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
