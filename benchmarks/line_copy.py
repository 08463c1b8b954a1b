"""A bare line copier between stdio and a child server: the floor a proxy's CPU per call is read against.

It does what any stdio relay must (read a line, write it on, both ways, on asyncio's loop) and
nothing else: no parsing, no recording, no lookups. `proxy_cpu.py --bare` measures it in front of
the same server as the proxy, so "the proxy adds X ms over a line copy" is said from one run.

    python benchmarks/line_copy.py <server command...>
"""

from __future__ import annotations

import asyncio
import os
import sys


async def copy_lines(command: list[str]) -> None:
    """Copy stdin's lines to the child and the child's lines to stdout until either side ends."""
    loop = asyncio.get_running_loop()
    child = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                 stdout=asyncio.subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def up() -> None:
        while line := await reader.readline():
            child.stdin.write(line)  # type: ignore[union-attr]
        child.stdin.close()  # type: ignore[union-attr]

    async def down() -> None:
        while line := await child.stdout.readline():  # type: ignore[union-attr]
            writer.write(line)

    await asyncio.gather(up(), down())
    await child.wait()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: line_copy.py <server command...>")
    if os.environ.get("STRETTO_PROXY_LOOP", "").lower() != "asyncio":  # the loop the proxy it is read against uses
        try:
            import uvloop

            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        except ImportError:
            pass
    asyncio.run(copy_lines(sys.argv[1:]))
