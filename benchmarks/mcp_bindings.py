"""Composed and free-text bindings on real MCP servers behind `stretto proxy`.

    .venv/bin/python benchmarks/mcp_bindings.py [--learn 30] [--serve 30] [--json mcp_bindings.json]
                                                [--npm-cache ~/.cache/stretto-bench/npm] [--theta 0.3]

The real `@modelcontextprotocol/server-filesystem` (npm, installed with npm into `--npm-cache`
when it is not there; the benchmark fails if npm cannot install it) and the real `mcp-server-git`
(PyPI) each run behind `stretto proxy`, driven by a scripted host (the `mcp` package's `Client`)
that walks as an agent would:

    filesystem   list_directory(folder) -> read_text_file(folder/<name>) for every listed file
                 ("summarize the files in F", half the users), for the one about a topic
                 ("what the budget file says", 30%: its name holds the word), or for the
                 file the user named (20%)
    git          git_log(repo) -> git_show(repo, <sha>) of the newest commit (half the users),
                 of the two newest ("summarize the last two commits", 25%), or of the commit
                 the user named by its message (25%)

Before each of its reads the host looks through the lookups stretto appended to what it was
shown so far; a lookup of that very call is a turn it does not take (the proxy's results are
what the scripted model reads). Every episode is a fresh workspace (folders, files, repos and
commits of its own). `--learn` episodes of each server are recorded through the proxy with no
flow, a flow is learned from them with `stretto learn`, and `--serve` other episodes are run
through the proxy twice, without a flow and with it. Printed, per server: LLM turns without ->
with stretto, lookups appended, detours (lookups the host never used), the derived bindings
`flow show` prints, and the served episodes replayed from the record with flows learned as the
proxy recorded them and with each session closed by the agent's last reply (a proxy never sees
it, so its flows believe a read always follows the last one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NPM_PACKAGE = "@modelcontextprotocol/server-filesystem"
WORDS = ["alpha", "budget", "roadmap", "minutes", "review", "draft", "design", "summary", "retro", "ideas",
         "launch", "hiring", "notes", "report", "plan", "audit", "backlog", "metrics", "risks", "goals"]


def filesystem_server(cache: Path) -> list[str]:
    """The npm server's command, installed into `cache` with npm when it is not there yet."""
    binary = cache / "node_modules" / ".bin" / "mcp-server-filesystem"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit(f"npm is not installed: cannot install {NPM_PACKAGE}")
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", NPM_PACKAGE],
                              capture_output=True, text=True)
        if done.returncode != 0 or not binary.exists():
            raise SystemExit(f"npm could not install {NPM_PACKAGE} into {cache}: {done.stderr.strip()[-400:]}")
    return [str(binary)]


def git_server() -> list[str]:
    found = shutil.which("mcp-server-git") or str(Path(sys.executable).parent / "mcp-server-git")
    if not Path(found).exists():
        raise SystemExit("mcp-server-git is not installed (pip install mcp-server-git)")
    return [found]


@dataclass
class Episode:
    """One conversation: the user's words, the server's command, and the host's planned reads."""

    kind: str
    said: str
    server: list[str]
    first: tuple[str, dict[str, Any]]
    then: list[Any] = field(default_factory=list)
    """What to read after the first call, given its result's text (a function of it)."""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_fs_episode(root: Path, i: int, rng: random.Random, server: list[str]) -> Episode:
    """Half the users ask for every file, a third for the file about a topic, the rest name a file."""
    folder = root / f"ws{i}" / rng.choice(["docs", "notes", "papers", "inbox"])
    folder.mkdir(parents=True)
    (folder / "archive").mkdir()
    names = rng.sample(WORDS, rng.randint(3, 5))
    for n in names:
        (folder / f"{n}-{rng.randint(10, 99)}.{rng.choice(['md', 'txt'])}").write_text(f"{n} for {i}\n")
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    draw = rng.random()
    if draw < 0.5:
        said, wanted = f"Summarize the files in {folder}.", None
    elif draw < 0.8:
        topic = rng.choice(files).split("-")[0]
        said, wanted = f"Find what the {topic} file in {folder} says.", topic
    else:
        exact = rng.choice(files)
        said, wanted = f"What does {exact} in {folder} say?", exact
    return Episode("filesystem", said, [*server, str(root / f"ws{i}")],
                   ("list_directory", {"path": str(folder)}),
                   [lambda text, f=str(folder), w=wanted: _fs_reads(text, f, w)])


def _fs_reads(listing: str, folder: str, wanted: str | None) -> list[tuple[str, dict[str, Any]]]:
    listed = [line[len("[FILE] "):] for line in listing.splitlines() if line.startswith("[FILE] ")]
    chosen = listed if wanted is None else [n for n in listed if n == wanted or n.startswith(wanted + "-")][:1]
    return [("read_text_file", {"path": f"{folder}/{name}"}) for name in chosen]


def make_git_episode(root: Path, i: int, rng: random.Random, server: list[str]) -> Episode:
    repo = root / f"repo{i}"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "dev@example.com")
    _git(repo, "config", "user.name", "Dev")
    messages = [f"{rng.choice(['add', 'fix', 'update', 'remove'])} {w}" for w in rng.sample(WORDS, rng.randint(3, 5))]
    for k, message in enumerate(messages):
        (repo / f"file{k}.txt").write_text(f"{message}\n")
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", message)
    draw = rng.random()
    if draw < 0.5:
        said, wanted, count = f"What changed in the latest commit of {repo}?", None, 1
    elif draw < 0.75:
        said, wanted, count = f"Summarize the last two commits of {repo}.", None, 2
    else:
        wanted = rng.choice(messages)
        said, count = f"In {repo}, what did the commit '{wanted}' change?", 1
    return Episode("git", said, [*server, "--repository", str(repo)],
                   ("git_log", {"repo_path": str(repo)}),
                   [lambda text, r=str(repo), w=wanted, n=count: _git_reads(text, r, w, n)])


def _git_reads(log: str, repo: str, wanted: str | None, count: int) -> list[tuple[str, dict[str, Any]]]:
    shas, messages = [], []
    for line in log.splitlines():
        if line.startswith("Commit: "):
            shas.append(line[len("Commit: "):].strip())
        elif line.startswith("Message: "):
            messages.append(line[len("Message: "):].strip())
    if wanted:
        chosen = [shas[messages.index(wanted)]]
    else:
        chosen = shas[:count]
    return [("git_show", {"repo_path": repo, "revision": sha}) for sha in chosen]


@dataclass
class Played:
    turns: int
    lookups: int
    used: int


async def play(episode: Episode, proxy: list[str]) -> Played:
    """One episode through the proxy: a turn per call the host still needs, one to answer."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from stretto_core.serve.results import parse_appendix
    from stretto_mcp.scripted import same_code_env

    command = [*proxy, "--", *episode.server]
    params = StdioServerParameters(command=command[0], args=command[1:], env=same_code_env())
    seen: dict[str, str] = {}
    lookups = turns = used = 0

    def key(tool: str, args: dict[str, Any]) -> str:
        return tool + " " + json.dumps(args, sort_keys=True)

    async with Client(params, mode="legacy") as client:
        await client.list_tools()

        async def call(tool: str, args: dict[str, Any]) -> str:
            nonlocal lookups, turns
            turns += 1
            result = await client.call_tool(tool, args)
            texts = [getattr(b, "text", "") for b in result.content]
            for block in texts[1:]:
                for lk in parse_appendix(block):
                    lookups += 1
                    seen[key(lk.tool, lk.arguments)] = lk.content
            return texts[0] if texts else ""

        text = await call(*episode.first)
        for plan in episode.then:
            for tool, args in plan(text):
                if key(tool, args) in seen:
                    used += 1
                    continue
                await call(tool, args)
    return Played(turns + 1, lookups, used)


def run(episodes: list[Episode], store: Path, flow: Path | None, theta: float) -> list[Played]:
    proxy = [sys.executable, "-m", "stretto_core", "proxy", "--store", str(store), "--theta", str(theta),
             "--log-level", "WARNING"]
    if flow is not None:
        proxy += ["--flow", str(flow)]
    return [asyncio.run(play(e, proxy)) for e in episodes]


def learn(store: Path, out: Path) -> str:
    """`stretto learn` on the recorded sessions, and what `flow show` prints of the flow."""
    cli = [sys.executable, "-m", "stretto_core"]
    subprocess.run([*cli, "learn", str(store), "--out", str(out)], check=True, capture_output=True, text=True)
    return subprocess.run([*cli, "flow", "show", str(out)], check=True, capture_output=True, text=True).stdout


def replayed(base: Path, theta: float) -> dict[str, Any]:
    """The served episodes replayed from the record (`stretto replay`'s rule) with flows learned
    from the recorded episodes as the proxy recorded them, and with each closed by the agent's
    last reply, which a proxy never sees (an adapter inside the agent does)."""
    from stretto_core import learn_flow
    from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
    from stretto_core.serve.runtime import FlowRuntime
    from stretto_core.sessions.model import LLMTurn
    from stretto_core.sessions.store import load_sessions

    def closed(sessions: list[Any]) -> list[Any]:
        return [s.model_copy(update={"events": [*s.events, LLMTurn(calls=[])]}) for s in sessions]

    learned, served = load_sessions(base / "learn"), closed(load_sessions(base / "without"))
    out: dict[str, Any] = {}
    for name, train in (("as_recorded", learned), ("closed_by_reply", closed(learned))):
        result = replay_sessions(FlowRuntime(learn_flow(train, train[0].header.manifest)), served,
                                 ReplayOptions(theta=theta, processes=1))
        out[name] = {"turns": result.llm_turns, "saved": result.turns_saved, "lookups": result.lookups,
                     "detours": result.detours}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learn", type=int, default=30, help="Episodes recorded to learn from, per server.")
    parser.add_argument("--serve", type=int, default=30, help="Other episodes served, per server.")
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--npm-cache", type=Path,
                        default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "stretto-bench" / "npm")
    parser.add_argument("--json", type=Path, default=Path("mcp_bindings.json"))
    parser.add_argument("--keep", type=Path, default=None, help="Keep the workspaces, sessions and flows here.")
    args = parser.parse_args()
    servers = {"filesystem": (filesystem_server(args.npm_cache), make_fs_episode),
               "git": (git_server(), make_git_episode)}
    started = time.perf_counter()
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="stretto-mcp-bindings-") as scratch:
        tmp = str(args.keep) if args.keep is not None else scratch
        for name, (server, make) in servers.items():
            base = Path(tmp) / name
            rng = random.Random(f"{args.seed}-{name}")
            episodes = [make(base / "w", i, rng, server) for i in range(args.learn + args.serve)]
            train, served = episodes[:args.learn], episodes[args.learn:]
            recorded = run(train, base / "learn", None, args.theta)
            flow = base / "flow.json"
            shown = learn(base / "learn", flow)
            without = run(served, base / "without", None, args.theta)
            with_flow = run(served, base / "with", flow, args.theta)
            derived = [ln.strip() for ln in shown.splitlines() if "(derived" in ln or "composed" in ln]
            row = {"learn_episodes": len(train), "serve_episodes": len(served),
                   "learn_turns": sum(p.turns for p in recorded),
                   "turns_without": sum(p.turns for p in without), "turns_with": sum(p.turns for p in with_flow),
                   "lookups": sum(p.lookups for p in with_flow), "used": sum(p.used for p in with_flow),
                   "derived_bindings": derived}
            row["saved"] = row["turns_without"] - row["turns_with"]
            row["detours"] = row["lookups"] - row["used"]
            row["detours_per_episode"] = round(row["detours"] / max(1, len(served)), 3)
            row["replay"] = replayed(base, args.theta)
            rows[name] = row
            print(f"{name}: {len(train)} episodes learned, {len(served)} served (θ {args.theta})")
            print(f"  LLM turns without -> with stretto: {row['turns_without']} -> {row['turns_with']} "
                  f"({row['saved']} saved)")
            print(f"  lookups {row['lookups']}, used {row['used']}, detours {row['detours']} "
                  f"({row['detours_per_episode']} per episode)")
            for line in derived:
                print(f"  flow show: {line}")
            for how, r in row["replay"].items():
                print(f"  replay from the record, learned {how.replace('_', ' ')}: {r['saved']} saved, "
                      f"{r['lookups']} lookups, {r['detours']} detours")
    seconds = time.perf_counter() - started
    out = {"theta": args.theta, "seed": args.seed, "servers": rows, "seconds": round(seconds, 1)}
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.json} ({seconds:.0f} s)")
    if any(r["lookups"] == 0 or not r["derived_bindings"] for r in rows.values()):
        print("FAILED: a server's flow made no lookup or learned no derived binding", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
