"""CPU the agent's thread spends in `record()` while the disk is full, per 1,000 events.

    python benchmarks/recorder_full_disk.py [--events 8000] [--every 1000]

A fake writer fails every write with ENOSPC (`recorder._write`, the one call that puts bytes on
disk); one recorder (`flush_lines=1`, the strictest: each event asks for its own write) takes
`--events` results of about 200 bytes. Prints the thread CPU seconds per 1,000 events for each
stretch of `--every` events, the events waiting in memory at the end, and how many writes were
tried (by any thread). Run it against an older checkout (`PYTHONPATH=<that checkout>`) for the
before side: the numbers are side by side in one process each, CPU time, not wall clock.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=8000)
    parser.add_argument("--every", type=int, default=1000)
    args = parser.parse_args()

    from stretto_core.sessions import recorder as recorder_module
    from stretto_core.sessions.model import SessionHeader
    from stretto_core.sessions.recorder import SessionRecorder

    tries = 0

    def full_disk(fd: int, data: bytes) -> int:
        nonlocal tries
        tries += 1
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    recorder_module._write = full_disk
    with tempfile.TemporaryDirectory() as folder:
        rec = SessionRecorder(folder, SessionHeader(session_id="full-disk", harness="bench"), flush_lines=1,
                              fallback_dir=os.path.join(folder, "fallback"))
        payload = '{"order_id": "#W1234567", "status": "delivered", "items": ' + '["a widget"]' * 12 + "}"
        rows = []
        start = time.thread_time()
        for i in range(args.events):
            rec.tool_result(f"c{i}", "get_order_details", payload)
            if (i + 1) % args.every == 0:
                now = time.thread_time()
                rows.append((i + 1, (now - start) * 1000 / args.every))
                start = now
        waiting = rec.pending
        rec.close()
    print(f"stretto from {os.path.dirname(os.path.dirname(recorder_module.__file__))}")
    print("events  cpu s per 1,000 events (agent's thread)")
    for n, cpu in rows:
        print(f"{n:6d}  {cpu:.4f}")
    print(f"waiting in memory at the end: {waiting} events; writes tried: {tries}")
    if not rows:
        sys.exit("no events were recorded: nothing measured")


if __name__ == "__main__":
    main()
