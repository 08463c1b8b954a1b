"""One app's deployment folder: its sessions, the committed flow, the staged flow, and the history.

    <deployment>/sessions/            the sessions the app records (`store=`)
    <deployment>/flow.json            the committed flow: what the app serves (`flow=`)
    <deployment>/flow.staged.json     the next flow, staged from new sessions, not served yet
    <deployment>/history/log.jsonl    one JSON line per stage, commit and rollback (`LogEntry`)
    <deployment>/history/v000003.flow.json   each committed version's file, byte for byte
    <deployment>/prior.flow.json      optional: other agents' counts, a prior whose weight falls
                                      as the app's own sessions are staged (`flow/online.py`)

`stage` adds only the sessions no version counted yet to the staged flow (an exact merge: counts
add, so staging as sessions arrive equals learning them at once); `commit` makes the staged flow
the next version, stamped with its number (`Provenance.version`); `rollback` puts the previous
version's file back, byte for byte. Every flow is written atomically (temp file, fsync, rename:
`sessions/jsonfile.write_atomic`), so an app reloading its flow (`serve/reload.py`) reads one
version whole or the other, never a part. A lock file serializes the writers of one folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from stretto_core.sessions.filelock import lock_file, unlock_file
from stretto_core.errors import InputError, StrettoError
from stretto_core.private import private_dir
from stretto_core.flow.ir import Flow, _add, _add_into, load_flow_bytes
from stretto_core.sessions.jsonfile import write_atomic

FLOW_NAME = "flow.json"
STAGED_NAME = "flow.staged.json"
SESSIONS_NAME = "sessions"
PRIOR_NAME = "prior.flow.json"
HISTORY_NAME = "history"
LOG_NAME = "log.jsonl"

SETTLED_SECONDS = 60.0
"""A session file written to this recently may still be recording: `stage` leaves it for next time."""

Command = Literal["adopt", "stage", "commit", "rollback"]


class LogEntry(BaseModel):
    """One line of `history/log.jsonl`: what a command did to the deployment's flow, and when."""

    model_config = ConfigDict(extra="forbid")

    command: Command
    at: datetime
    version: int | None = None
    """The committed version after the command (a stage leaves it as it was)."""
    parent: int | None = None
    """For a commit, the version it was staged on; for a rollback, the version rolled back."""
    sessions_added: list[str] = Field(default_factory=list)
    """The session files (names under `sessions/`) this command counted into the flow."""
    sha256: str | None = None
    """The SHA-256 of the flow file the command wrote."""
    diff: list[str] = Field(default_factory=list)
    """`flow diff` of the committed flow and the new one, one change a line (`!` needs review)."""
    note: str = ""


class Deployment:
    """The folder of one app's deployment (module docstring)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.sessions = self.root / SESSIONS_NAME
        self.flow = self.root / FLOW_NAME
        self.staged = self.root / STAGED_NAME
        self.history = self.root / HISTORY_NAME
        self.log_path = self.history / LOG_NAME

    @classmethod
    def existing(cls, root: str | Path) -> "Deployment":
        """The deployment in `root`; a StrettoError naming it when it is not one (missing, a file, or
        a folder with no sessions, flow or history), so a typo neither reads as "no history yet"
        nor makes a history folder where none belongs."""
        dep = cls(root)
        if not dep.root.is_dir():
            what = "a file" if dep.root.exists() else "no such folder"
            raise StrettoError(f"{dep.root}: {what}, not an app's deployment folder")
        if not any(p.exists() for p in (dep.sessions, dep.flow, dep.staged, dep.history)):
            raise StrettoError(f"{dep.root}: not an app's deployment folder (no {SESSIONS_NAME}/, {FLOW_NAME}, "
                               f"{STAGED_NAME} or {HISTORY_NAME}/ in it)")
        return dep

    # -- reading --------------------------------------------------------------------------------
    def entries(self) -> list[LogEntry]:
        """The log, oldest first (a torn last line, from a crash, is left out)."""
        if not self.log_path.exists():
            return []
        lines = _read(self.log_path, "history log").decode("utf-8", errors="replace").splitlines()
        out = []
        for line in lines:
            try:
                out.append(LogEntry.model_validate_json(line))
            except (ValueError, RecursionError):
                continue
        return out

    def version(self, entries: Sequence[LogEntry] | None = None) -> int | None:
        """The committed version now (None: none committed yet)."""
        for entry in reversed(entries if entries is not None else self.entries()):
            if entry.command in ("adopt", "commit", "rollback"):
                return entry.version
        return None

    def version_file(self, version: int) -> Path:
        return self.history / f"v{version:06d}.flow.json"

    def counted(self, version: int | None, entries: Sequence[LogEntry]) -> set[str]:
        """The session files counted into a committed version: its own and its ancestors'."""
        made = {e.version: e for e in entries if e.command in ("adopt", "commit")}
        seen: set[str] = set()
        while version is not None and version in made:
            entry = made[version]
            seen.update(entry.sessions_added)
            version = entry.parent
        return seen

    def staged_since(self, entries: Sequence[LogEntry]) -> tuple[list[str], int | None]:
        """The session files staged since the last commit or rollback, and the version staged on."""
        files: list[str] = []
        base: int | None = self.version(entries)
        for entry in reversed(entries):
            if entry.command != "stage":
                break
            files = entry.sessions_added + files
            base = entry.parent
        return files, base

    # -- writing --------------------------------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the deployment's lock: one stage, commit or rollback at a time."""
        private_dir(self.history)  # 0700, as every folder stretto makes
        fd = os.open(self.history / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            locked = lock_file(fd)  # a portable lock (`sessions/filelock.py`)
            try:
                yield
            finally:
                if locked:
                    unlock_file(fd)
        finally:
            os.close(fd)

    def _append(self, entry: LogEntry) -> None:
        line = entry.model_dump_json(exclude_none=True) + "\n"
        fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def stage(self, count: Callable[[list[Path]], Flow | None], *, settled: float = SETTLED_SECONDS,
              command_note: str = "", recount: bool = False) -> LogEntry | None:
        """Count the session files no version counted yet into the staged flow; None when none is new.

        `count(files)` learns a flow of just those files (None: nothing in them to learn); it is
        added to the staged flow, else to the committed one, else it is the staged flow.
        `recount`: `count` is given every session file the staged flow counts (the committed
        version's, those staged since, the new ones: those still on disk) and its flow is the
        staged flow, the base's promotion kept (a prior whose weight depends on them all)."""
        with self.locked():
            entries = self._adopted(self.entries())
            staged_files, base = self.staged_since(entries)
            known = self.counted(self.version(entries), entries) | set(staged_files)
            new = self._new_sessions(known, settled)
            if not new:
                return None
            if recount:
                names = sorted(n for n in known | set(new) if (self.sessions / n).is_file())
                learned = count([self.sessions / name for name in names])
            else:
                learned = count([self.sessions / name for name in new])
            if learned is None:
                return None
            base_flow, committed = self._base_flow(staged_files, entries)
            if recount:
                kept = base_flow.promotion if base_flow is not None else None
                flow = learned if kept is None else learned.model_copy(update={"promotion": kept})
            else:
                flow = _added(base_flow, learned, committed is None)
            return self._staged(flow, new, entries, staged_files, base, command_note, committed)

    def stage_flow(self, flow: Flow, sessions_added: Sequence[str] = (), note: str = "") -> LogEntry:
        """Stage a flow made elsewhere (an online learner's, a benchmark's) as the next version,
        naming the session files it added to the committed flow's counts."""
        with self.locked():
            entries = self._adopted(self.entries())
            staged_files, base = self.staged_since(entries)
            return self._staged(flow, list(sessions_added), entries, staged_files, base, note)

    def _staged(self, flow: Flow, new: list[str], entries: list[LogEntry], staged_files: list[str],
                base: int | None, note: str, committed: Flow | None = None) -> LogEntry:
        data = _flow_bytes(flow, self.staged)
        write_atomic(self.staged, data)
        version = self.version(entries)
        entry = LogEntry(command="stage", at=_now(), version=version, parent=version if not staged_files else base,
                         sessions_added=new, sha256=_sha(data), diff=self._diff_lines(flow, entries, committed),
                         note=note)
        self._append(entry)
        return entry

    def commit(self, app: str | None = None) -> LogEntry:
        """Make the staged flow the next committed version; refused when nothing is staged, when
        it was staged on another version than the one committed now, or when its app differs."""
        with self.locked():
            entries = self._adopted(self.entries())
            if not self.staged.exists():
                raise StrettoError(f"{self.root}: nothing is staged (run `stretto flow stage {self.root}` first)")
            staged_files, base = self.staged_since(entries)
            current = self.version(entries)
            if entries and entries[-1].command != "stage":
                raise StrettoError(f"{self.staged}: staged before the latest {entries[-1].command} (version "
                                   f"{current} is committed now); stage again")
            if base != current:
                raise StrettoError(f"{self.staged}: staged on version {base}, but version {current} is "
                                   f"committed now; stage again")
            staged = self._read_flow(self.staged, entries[-1].sha256 if entries else None)
            committed = self._read_flow(self.flow, _committed_sha(entries)) if self.flow.exists() else None
            self._same_app(staged, app, committed)
            version = max((e.version or 0 for e in entries), default=0) + 1
            staged.provenance = staged.provenance.model_copy(update={"version": version})
            data = _flow_bytes(staged)
            diff = self._diff_lines(staged, entries, committed)
            write_atomic(self.version_file(version), data)
            write_atomic(self.flow, data)
            entry = LogEntry(command="commit", at=_now(), version=version, parent=current,
                             sessions_added=staged_files, sha256=_sha(data), diff=diff)
            self._append(entry)
            self.staged.unlink()
            return entry

    def rollback(self) -> LogEntry:
        """Put back the version the committed one was made on, byte for byte."""
        with self.locked():
            entries = self.entries()
            current = self.version(entries)
            made = {e.version: e for e in entries if e.command in ("adopt", "commit")}
            if current is None or current not in made or made[current].parent is None:
                raise StrettoError(f"{self.root}: no earlier committed version to roll back to")
            previous = made[current].parent
            assert previous is not None
            data = _read(self.version_file(previous), f"version {previous}'s flow")
            write_atomic(self.flow, data)
            note = f"version {current} rolled back to {previous}"
            if self.staged.exists():  # staged on the version rolled back: it would bring it back
                self.staged.unlink()
                note += "; the staged flow was dropped"
            entry = LogEntry(command="rollback", at=_now(), version=previous, parent=current, sha256=_sha(data),
                             note=note)
            self._append(entry)
            return entry

    # -- the work -------------------------------------------------------------------------------
    def _adopted(self, entries: list[LogEntry]) -> list[LogEntry]:
        """A committed flow with no history (`stretto learn --out flow.json` on day two) becomes
        version 1, counted from the session files it names by fingerprint (`provenance.learned`),
        or, for a flow that names none, from the session files older than it."""
        if entries or not self.flow.exists():
            return entries
        data = _read(self.flow, "flow")
        flow = load_flow_bytes(data, self.flow)
        learned = sum(s.sessions for s in flow.provenance.sources if s.role == "data")
        counted = self._learned_files(flow)
        if counted is not None:
            how = f"the {len(counted)} session files among them found by their fingerprints"
        else:  # a flow that names no fingerprints: the sessions older than it
            written = self.flow.stat().st_mtime
            counted = sorted(p.name for p in self._session_files() if p.stat().st_mtime <= written)
            how = f"the {len(counted)} session files older than it are taken as those"
        flow.provenance = flow.provenance.model_copy(update={"version": 1})
        stamped = _flow_bytes(flow)
        write_atomic(self.version_file(1), stamped)
        write_atomic(self.flow, stamped)
        note = f"adopted {self.flow.name} as version 1: learned from {learned} sessions; {how}"
        entry = LogEntry(command="adopt", at=_now(), version=1, sessions_added=counted, sha256=_sha(stamped),
                         note=note)
        self._append(entry)
        return [entry]

    def _learned_files(self, flow: Flow) -> list[str] | None:
        """The session files whose fingerprints the flow names (`provenance.learned`), or None when
        it names none (a flow learned before fingerprints were kept)."""
        if flow.provenance.learned is None:
            return None
        from stretto_core.sessions.fingerprint import session_fingerprint
        from stretto_core.sessions.store import read_session

        wanted = set(flow.provenance.learned)
        found = []
        for path in self._session_files():
            try:
                session = read_session(path, None)
            except (StrettoError, OSError, ValueError):
                continue
            if session_fingerprint(session) in wanted:
                found.append(path.name)
        return found

    def _session_files(self) -> list[Path]:
        if not self.sessions.is_dir():
            return []
        return sorted(p for p in self.sessions.iterdir() if p.suffix == ".jsonl" and p.is_file())

    def _new_sessions(self, known: set[str], settled: float) -> list[str]:
        now = time.time()
        return [p.name for p in self._session_files()
                if p.name not in known and now - p.stat().st_mtime >= settled]

    def _read_flow(self, path: Path, logged_sha256: str | None) -> Flow:
        """A flow file of the deployment, read with every check `load_flow` makes, but for one the
        log says a command wrote (its bytes' SHA-256 is `logged_sha256`): every command writes a
        flow made of checked flows and counted sessions only, so those bytes are parsed and not
        checked or derived again (`load_flow_bytes`'s `written_here`). A stage reads two such
        files: twice α's posteriors and every number's check saved. Bytes edited since are
        checked in full (and what is served is checked in full by its server, `serve/reload.py`)."""
        data = _read(path, "flow")
        return load_flow_bytes(data, path, written_here=logged_sha256 is not None and _sha(data) == logged_sha256)

    def _base_flow(self, staged_files: list[str],
                   entries: Sequence[LogEntry]) -> tuple[Flow | None, Flow | None]:
        """The flow new sessions are added to (the staged one, else the committed one, as a flow
        of no version), and the committed flow as read when it is that base (None otherwise):
        the stage's diff compares with it, so it is read and checked once, not twice."""
        if staged_files and self.staged.exists():
            return self._read_flow(self.staged, entries[-1].sha256 if entries else None), None
        if self.flow.exists():
            committed = self._read_flow(self.flow, _committed_sha(entries))
            flow = committed.model_copy(update={"provenance": committed.provenance.model_copy(update={"version": None})})
            return flow, committed
        return None, None

    def _diff_lines(self, new: Flow, entries: Sequence[LogEntry], committed: Flow | None = None) -> list[str]:
        from stretto_core.flow.review import diff

        if not self.flow.exists():
            return ["no committed flow before"]
        d = diff(committed if committed is not None else self._read_flow(self.flow, _committed_sha(entries)), new)
        return [f"! {x}" for x in d.review] + [f"  {x}" for x in d.info]

    def _same_app(self, staged: Flow, app: str | None, committed_flow: Flow | None) -> None:
        apps = _apps(staged)
        if app is not None and apps and apps != {app}:
            raise StrettoError(f"{self.staged}: staged from app {', '.join(sorted(apps))}, not {app} (--app); "
                               "not committed")
        if committed_flow is not None:
            committed = _apps(committed_flow)
            if committed and apps and committed != apps:
                raise StrettoError(f"{self.staged}: staged from app {', '.join(sorted(apps))}, but the committed "
                                   f"flow serves {', '.join(sorted(committed))}; not committed")


def _read(path: Path, what: str) -> bytes:
    """A file's bytes; an InputError naming it when it cannot be read (a folder, no permission)."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(str(path), f"cannot read the {what}: {exc.strerror or exc}") from exc


def _committed_sha(entries: Sequence[LogEntry]) -> str | None:
    """The SHA-256 of the flow file the latest adopt, commit or rollback wrote (None: none did)."""
    for entry in reversed(entries):
        if entry.command in ("adopt", "commit", "rollback"):
            return entry.sha256
    return None


def _apps(flow: Flow) -> set[str]:
    return {app for source in flow.provenance.sources for app in source.apps}


def _added(base: Flow | None, learned: Flow, own_base: bool) -> Flow:
    """`learned` (counts, derived or not) added to `base`, derived once: `flow.ir.merge`'s flow,
    without its check of every number of the sum (both parts' counts are checked already: the
    base's by `load_flow`, the new ones are counts; a sum that overflows is caught where it is
    written, `_flow_bytes`). `own_base`: the base is this stage's alone, added to in place."""
    if base is None:
        return learned.derived()
    if own_base:
        _add_into(base, learned)
        flow = base
    else:
        flow = _add(base, learned)
    try:
        return flow.derive()
    except (ValueError, ArithmeticError) as exc:
        raise StrettoError(f"adding the new sessions' counts: {exc}") from exc


def _flow_bytes(flow: Flow, path: Path | None = None) -> bytes:
    try:
        text = flow.to_json()
    except ValueError as exc:  # NaN or infinity: counts so large that their sum overflowed
        raise StrettoError(f"{path or 'flow'}: the flow holds a number that is not finite ({exc}); not written") from exc
    return (text + "\n").encode("utf-8")


def flow_sha256(data: bytes) -> str:
    """The SHA-256 of a flow file's bytes (what a session header's `flow_sha256` names)."""
    return hashlib.sha256(data).hexdigest()


_sha = flow_sha256


def _now() -> datetime:
    return datetime.now(timezone.utc)


def render_log(entries: Sequence[LogEntry]) -> str:
    """`flow log`: one line per command, newest last, with its diff's first lines indented."""
    lines = []
    for e in entries:
        head = f"{e.at:%Y-%m-%d %H:%M:%S} {e.command:<8} version {e.version if e.version is not None else '-'}"
        if e.sessions_added:
            head += f", {len(e.sessions_added)} sessions added"
        if e.sha256:
            head += f", sha256 {e.sha256[:12]}"
        if e.note:
            head += f" ({e.note})"
        lines.append(head)
        lines += [f"    {d}" for d in e.diff[:8]]
        if len(e.diff) > 8:
            lines.append(f"    … and {len(e.diff) - 8} more changes")
    return "\n".join(lines) + "\n" if lines else "no history yet\n"


def log_json(entries: Sequence[LogEntry]) -> str:
    return "".join(json.dumps(e.model_dump(mode="json", exclude_none=True)) + "\n" for e in entries)
