"""What one recorded event costs the agent: the recorder before batching against the recorder now.

    .venv/bin/python benchmarks/recorder_batching.py [--events 2000] [--repeats 9] [--json recorder_batching.json]

In one run, interleaved, median of `--repeats`: the recorder as it is on `--before` (a git revision,
default `main`; its `sessions/recorder.py` is loaded beside this one), this recorder writing every
event at once (`flush_lines=1`), and this recorder with its default batching. Each records the
events of an adapter's tool call (a model turn with one call, its result) `--events / 2` times,
then closes (the close and the background flushes are counted). The JSON encoding alone is timed
too: what is left of the cost when nothing is written.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from stretto_core.sessions import recorder as now  # noqa: E402
from stretto_core.sessions.model import LLMTurn, SessionHeader, ToolCall, ToolResult  # noqa: E402

RESULT = json.dumps({"customer_id": "C10", "name": "Ada Lovelace", "orders": ["O10", "O11", "O12"],
                     "address": {"city": "London", "street": "12 St James's Square"}})


def load_before(revision: str) -> Any:
    """The recorder module of `revision`, loaded under its own name (None when git cannot show it)."""
    try:
        text = subprocess.run(["git", "-C", str(REPO), "show", f"{revision}:stretto_core/sessions/recorder.py"],
                              check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    folder = Path(tempfile.mkdtemp(prefix="stretto-recorder-before-"))
    (folder / "recorder_before.py").write_text(text)
    spec = importlib.util.spec_from_file_location("recorder_before", folder / "recorder_before.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["recorder_before"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def tool_call_events(n: int) -> list[Any]:
    call = ToolCall(call_id=f"call-{n}", tool="get_customer", arguments={"customer_id": f"C{n}"})
    return [LLMTurn(calls=[call]), ToolResult(call_id=call.call_id, tool="get_customer", content=RESULT)]


def per_event(make: Callable[[str, SessionHeader], Any], events: int, store: str, run: int) -> float:
    """Seconds per event: recording `events` events of one session, close included."""
    header = SessionHeader(session_id=f"bench-{run}", harness="benchmark")
    batches = [tool_call_events(n) for n in range(events // 2)]
    rec = make(store, header)
    started = time.perf_counter()
    for batch in batches:
        for event in batch:
            rec.record(event)
    rec.close()
    seconds = time.perf_counter() - started
    lines = len(Path(rec.path).read_bytes().splitlines())
    assert lines == 1 + 2 * len(batches), f"{lines} lines written, not {1 + 2 * len(batches)}"
    return seconds / (2 * len(batches))


def encode_only(events: int) -> float:
    """Seconds per event of what `record` does before any write: stamp the time, encode the line."""
    batches = [tool_call_events(n) for n in range(events // 2)]
    started = time.perf_counter()
    for batch in batches:
        for event in batch:
            now._encode(event.model_copy(update={"at": now._now()}))
    return (time.perf_counter() - started) / (2 * len(batches))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--before", default="main", help="git revision whose recorder is 'before'")
    parser.add_argument("--json", type=Path, default=Path("recorder_batching.json"))
    args = parser.parse_args(argv)
    before = load_before(args.before)
    kinds: dict[str, Callable[[str, SessionHeader], Any]] = {
        "now, flush_lines=1": lambda d, h: now.SessionRecorder(d, h, flush_lines=1),
        "now, batched (default)": lambda d, h: now.SessionRecorder(d, h),
    }
    if before is not None:
        kinds = {f"before ({args.before})": lambda d, h: before.SessionRecorder(d, h), **kinds}
    else:
        print(f"  (git cannot show {args.before}'s recorder: 'before' left out)")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    encode: list[float] = []
    run = 0
    with tempfile.TemporaryDirectory(prefix="stretto-recorder-bench-") as store:
        for make in kinds.values():
            run += 1
            per_event(make, 200, store, run)  # warm up
        for _ in range(args.repeats):
            for name, make in kinds.items():
                run += 1
                times[name].append(per_event(make, args.events, store, run))
            encode.append(encode_only(args.events))
    us = 1e6
    medians = {k: statistics.median(v) for k, v in times.items()}
    first = next(iter(medians.values()))
    print(f"recorder: {args.events} events per session (a model turn and its tool result, x{args.events // 2}), "
          f"close included, median of {args.repeats}")
    for name, value in medians.items():
        print(f"  {name:<26} {value * us:8.2f} us per event  {value * 2 * 1000:.4f} ms per tool call"
              f"  (first / this: {first / value:.2f})")
    print(f"  {'stamp + encode alone':<26} {statistics.median(encode) * us:8.2f} us per event")
    report = {"benchmark": "recorder_batching", "events": args.events, "repeats": args.repeats,
              "before_revision": args.before if before is not None else None,
              "flush_lines": now.FLUSH_LINES, "flush_ms": now.FLUSH_MS,
              "us_per_event": {k: round(v * us, 3) for k, v in medians.items()},
              "ms_per_tool_call": {k: round(v * 2000, 5) for k, v in medians.items()},
              "us_per_event_encode_only": round(statistics.median(encode) * us, 3)}
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"  wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
