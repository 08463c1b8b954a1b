"""CPU of one big tool result through FastMCP over stdio, without and with stretto's middleware,
side by side: why the hostile-input matrix sends FastMCP 4 MB where the others get 70 MB.

    python benchmarks/fastmcp_big_result.py [--megabytes 70]

A FastMCP stdio server (this file, `serve`) answers `get_order` with a JSON text of about
`--megabytes` MB; an `mcp` Client calls it once. Printed per side: the client process's CPU
seconds for that call (`time.process_time`) and the server's (the child's user + system CPU,
from getrusage once it has exited). The middleware side records the session (no flow: nothing
is looked up). Each side starts its own server, one after the other, in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time


def serve(megabytes: float, with_stretto: bool, store: str) -> None:
    from fastmcp import FastMCP

    middleware = []
    if with_stretto:
        from stretto_mcp import StrettoFastMCPMiddleware

        middleware = [StrettoFastMCPMiddleware(None, store=store)]
    shop = FastMCP("big", middleware=middleware)
    text = json.dumps({"order_id": "O7", "customer_id": "C7", "blob": "x" * int(megabytes * 1_000_000)})

    @shop.tool(output_schema=None)
    def get_order(order_id: str) -> str:
        """An order by id (a big one)."""
        return text

    shop.run("stdio", show_banner=False)


def one_side(megabytes: float, with_stretto: bool) -> dict[str, float]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from stretto_mcp.scripted import same_code_env

    store = tempfile.mkdtemp()
    args = [os.path.abspath(__file__), "serve", str(megabytes), "1" if with_stretto else "0", store]
    params = StdioServerParameters(command=sys.executable, args=args, env=same_code_env())
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)

    async def call() -> tuple[int, float]:
        async with Client(params, mode="legacy") as client:
            started = time.process_time()
            result = await client.call_tool("get_order", {"order_id": "O7"})
            return len(result.content[0].text), time.process_time() - started

    length, client_cpu = anyio.run(call)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = (children.ru_utime - children_before.ru_utime) + (children.ru_stime - children_before.ru_stime)
    return {"characters": length, "client_cpu_s": round(client_cpu, 2), "server_cpu_s": round(server_cpu, 2)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(float(sys.argv[2]), sys.argv[3] == "1", sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=70.0)
    args = parser.parse_args()
    for name, with_stretto in (("FastMCP alone", False), ("FastMCP + stretto middleware", True)):
        print(json.dumps({"side": name, "megabytes": args.megabytes, **one_side(args.megabytes, with_stretto)}))


if __name__ == "__main__":
    main()
