"""Which tasks may be learned from: the train/test split, so nothing is ever learned from a test task.

τ²-bench ships an official split per domain (`tau2/domains/<domain>/split_tasks.json`); its
`unverified-*` episodes, whose task could not be told, belong to neither side. AgentDojo and
WorkBench ship none, so their tasks are split by a hash of (seed, app, task): each task's side
depends on nothing but those three, so it never moves when sessions are added or dropped, and the
same task is on the same side for every agent (paper §3: 40% of tasks are held out).

A split can also be frozen in a file (`stretto split ... --out FILE`); a file given for an app
decides its split, and otherwise a session's own `labels["split"]` does.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Iterable, Iterator, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, ValidationError

from stretto_core.sessions.jsonfile import read_json_file, write_text_file
from stretto_core.errors import InputError, StrettoError
from stretto_core.paths import data_root
from stretto_core.sessions.model import Session, SessionHeader

Split = Literal["train", "test", "none"]
SPLITS: tuple[str, ...] = ("train", "test", "none")

DEFAULT_SEED = 0
DEFAULT_TEST_FRACTION = 0.4
"""Paper §3: 40% of the tasks of benchmarks without an official split are held out."""

UNVERIFIED_PREFIX = "unverified-"
"""τ²-bench episodes whose real task could not be told (README): in neither split."""

OFFICIAL_SPLIT_BENCHMARKS = ("tau2",)


def _ids_as_text(value: object) -> object:
    """Task ids written as numbers (`[0, 1]`) are read as the text τ²-bench uses."""
    if isinstance(value, list):
        return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    return value


TaskIds = Annotated[list[str], BeforeValidator(_ids_as_text)]


class TaskSplit(BaseModel):
    """The task ids on each side of one app's split."""

    model_config = ConfigDict(extra="forbid")

    train: TaskIds = Field(default_factory=list)
    test: TaskIds = Field(default_factory=list)

    _train: frozenset[str] = PrivateAttr(default=frozenset())
    _test: frozenset[str] = PrivateAttr(default=frozenset())

    def model_post_init(self, __context: object) -> None:
        self._train, self._test = frozenset(self.train), frozenset(self.test)

    def side(self, task_id: str) -> Split:
        if task_id in self._test:
            return "test"
        if task_id in self._train:
            return "train"
        return "none"

    def overlap(self) -> list[str]:
        return sorted(self._train & self._test)


class SplitFile(BaseModel):
    """A frozen split: `{"train": [...], "test": [...]}` for any app, and/or per app under `apps`.

    On disk the per-app form may also be written bare, `{"<app>": {"train": [...], "test": [...]}}`.
    """

    model_config = ConfigDict(extra="forbid")

    train: TaskIds = Field(default_factory=list)
    test: TaskIds = Field(default_factory=list)
    apps: dict[str, TaskSplit] = Field(default_factory=dict)
    seed: int | None = None
    test_fraction: float | None = None
    _any_app: TaskSplit = PrivateAttr(default_factory=TaskSplit)

    def model_post_init(self, __context: object) -> None:
        self._any_app = TaskSplit(train=self.train, test=self.test)

    def side(self, app: str | None, task_id: str) -> Split:
        """The task's side: the app's own lists first, then the lists for any app."""
        per_app = self._app_split(app)
        if per_app is not None:
            found = per_app.side(task_id)
            if found != "none":
                return found
        return self._any_app.side(task_id)

    def covers(self, app: str | None) -> bool:
        """Whether the file decides this app's split: it lists the app, or has lists for any app."""
        return self._app_split(app) is not None or bool(self.train or self.test)

    def _app_split(self, app: str | None) -> TaskSplit | None:
        if app is None:
            return None
        if app in self.apps:
            return self.apps[app]
        short = app.rsplit("/", 1)[-1]  # "agentdojo/travel" also finds a file keyed "travel"
        return self.apps.get(short)

    def overlaps(self) -> dict[str, list[str]]:
        """Tasks listed on both sides, by app (`*` for the lists for any app)."""
        found = {"*": self._any_app.overlap()}
        found.update({app: s.overlap() for app, s in self.apps.items()})
        return {app: tasks for app, tasks in found.items() if tasks}


def load_split_file(path: str | Path) -> SplitFile:
    """Read a split file; a task on both sides, or any other malformation, is an InputError."""
    p = Path(path)
    data = read_json_file(p, "split file")
    if not isinstance(data, dict):
        raise InputError(str(p), "a split file must be a JSON object with `train` and `test` lists")
    data = _lift_bare_apps(data)
    try:
        split = SplitFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ()))
        raise InputError(str(p), f"invalid split file at `{where}`: {err.get('msg')}") from exc
    clashes = split.overlaps()
    if clashes:
        app, tasks = next(iter(clashes.items()))
        raise InputError(str(p), f"task {tasks[0]!r} of app {app!r} is listed in both train and test")
    return split


def _lift_bare_apps(data: dict) -> dict:
    """`{"<app>": {"train", "test"}}` -> `{"apps": {...}}`; other keys are left as they are."""
    known = set(SplitFile.model_fields)
    bare = {k: v for k, v in data.items() if k not in known and isinstance(v, dict)}
    if not bare:
        return data
    lifted = {k: v for k, v in data.items() if k not in bare}
    lifted["apps"] = {**lifted.get("apps", {}), **bare}
    return lifted


def save_split_file(split: SplitFile, path: str | Path) -> None:
    write_text_file(path, split.model_dump_json(indent=1, exclude_defaults=True) + "\n", "split file")


def benchmark_and_domain(header: SessionHeader) -> tuple[str | None, str | None]:
    """`("tau2", "retail")` from an app `tau2/retail`, or from harness `tau2` and app `retail`."""
    app = header.app
    if app and "/" in app:
        bench, domain = app.split("/", 1)
        return bench, domain
    return header.harness, app


def hashed_side(app: str | None, task_id: str, seed: int = DEFAULT_SEED,
                test_fraction: float = DEFAULT_TEST_FRACTION) -> Split:
    """The side of a task under the seeded hash split: test when its hash falls below the fraction."""
    _check_fraction(test_fraction)
    return "test" if hash_draw(app, task_id, seed) < test_fraction else "train"


def hash_draw(app: str | None, task_id: str, seed: int = DEFAULT_SEED) -> float:
    """A task's uniform draw in [0, 1), fixed by (seed, app, task) alone (SHA-256, not `hash()`)."""
    key = f"{seed}\x00{app or ''}\x00{task_id}".encode("utf-8")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2.0**64


def _check_fraction(test_fraction: float) -> None:
    if not 0.0 <= test_fraction <= 1.0:
        raise StrettoError(f"test fraction {test_fraction} is not between 0 and 1")


_OFFICIAL_CACHE: dict[Path, TaskSplit] = {}


def official_split(benchmark: str, domain: str, root: Path | None = None) -> TaskSplit:
    """τ²-bench's own split of a domain, read from the data folder (`split_tasks.json`)."""
    path = (root or data_root()) / benchmark / "domains" / domain / "split_tasks.json"
    cached = _OFFICIAL_CACHE.get(path)
    if cached is not None:
        return cached
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(str(path), f"cannot read the official {benchmark} split of {domain!r}: "
                                    f"{exc.strerror or exc} (set STRETTO_DATA, or pass --split-file)") from exc
    except ValueError as exc:
        raise InputError(str(path), f"not JSON: {exc}") from exc
    try:
        split = TaskSplit(train=[str(t) for t in data["train"]], test=[str(t) for t in data["test"]])
    except (KeyError, TypeError) as exc:
        raise InputError(str(path), "an official split needs `train` and `test` lists") from exc
    _OFFICIAL_CACHE[path] = split
    return split


def split_of(header: SessionHeader, split_file: SplitFile | None = None, *, seed: int = DEFAULT_SEED,
             test_fraction: float = DEFAULT_TEST_FRACTION, root: Path | None = None) -> Split:
    """Which side a session's task is on: `train`, `test`, or `none` (learn from it never).

    In order: a split file given for the session's app (a task it does not list is on neither
    side); the session's `labels["split"]`; τ²-bench's official split; the seeded hash of
    (app, task). A session with no task id, or an unverified one, is on neither side.
    """
    task = header.task_id
    if not task or task.startswith(UNVERIFIED_PREFIX):
        return "none"
    if split_file is not None and split_file.covers(header.app):
        return split_file.side(header.app, task)
    label = header.labels.get("split")
    if label is not None:
        if label not in SPLITS:
            raise StrettoError(f"session {header.session_id}: labels.split is {label!r}, "
                               f"not one of {', '.join(SPLITS)}")
        return label  # type: ignore[return-value]
    bench, domain = benchmark_and_domain(header)
    if bench in OFFICIAL_SPLIT_BENCHMARKS and domain:
        return official_split(bench, domain, root).side(task)
    return hashed_side(header.app, task, seed, test_fraction)


def filter_sessions(sessions: Iterable[Session], split: str, split_file: SplitFile | None = None,
                    **options) -> Iterator[Session]:
    """The sessions on one side of the split; `all` keeps every session, `none` those on neither,
    `auto` the train side of labelled tasks and every session with no task label (`in_auto`)."""
    if split == "all":
        yield from sessions
        return
    if split not in SPLITS and split != AUTO:
        raise StrettoError(f"unknown split {split!r}: use auto, train, test, none or all")
    for session in sessions:
        if in_split(session.header, split, split_file, **options):
            yield session


AUTO = "auto"
"""The split a learn takes by default: where tasks are labelled, their train side; sessions an app
recorded (no task id) are all learned from, for no task of theirs can be a test task."""


def unlabelled(header: SessionHeader) -> bool:
    """The session names no task (an app's own recorded session): no split applies to it."""
    return not header.task_id


def in_split(header: SessionHeader, split: str, split_file: SplitFile | None = None, **options) -> bool:
    """Whether a session is on the `split` side (`auto`, `all`, or one of `SPLITS`)."""
    if split == "all":
        return True
    if split == AUTO:
        return unlabelled(header) or split_of(header, split_file, **options) == "train"
    return split_of(header, split_file, **options) == split


def make_split_file(headers: Iterable[SessionHeader], *, seed: int = DEFAULT_SEED,
                    test_fraction: float = DEFAULT_TEST_FRACTION, exact: bool = False,
                    root: Path | None = None) -> SplitFile:
    """Freeze the split of every (app, task) the sessions ran, per app, by the rules of `split_of`.

    With `exact`, an app without an official split holds out exactly round(fraction × its tasks):
    the tasks with the lowest hash draws. That depends on which tasks the sessions cover, so such
    a file must then be passed wherever the split matters (`--split-file`). Session labels are
    ignored here: the file records the rule, so it can be checked against them.
    """
    _check_fraction(test_fraction)
    sides: dict[str, dict[str, set[str]]] = {}
    official: set[str] = set()
    for header in headers:
        unlabelled = header.model_copy(update={"labels": {}})
        side = split_of(unlabelled, seed=seed, test_fraction=test_fraction, root=root)
        if side == "none":
            continue
        app = header.app or ""
        sides.setdefault(app, {"train": set(), "test": set()})[side].add(header.task_id or "")
        if benchmark_and_domain(header)[0] in OFFICIAL_SPLIT_BENCHMARKS:
            official.add(app)
    apps: dict[str, TaskSplit] = {}
    for app, found in sorted(sides.items()):
        if exact and app not in official:
            found = _exact_sides(app, found["train"] | found["test"], seed, test_fraction)
        apps[app] = TaskSplit(train=sorted(found["train"], key=_task_order),
                              test=sorted(found["test"], key=_task_order))
    return SplitFile(apps=apps, seed=seed, test_fraction=test_fraction)


def _exact_sides(app: str, tasks: set[str], seed: int, test_fraction: float) -> dict[str, set[str]]:
    ranked = sorted(tasks, key=lambda t: (hash_draw(app, t, seed), t))
    cut = round(test_fraction * len(ranked))
    return {"test": set(ranked[:cut]), "train": set(ranked[cut:])}


def _task_order(task_id: str) -> tuple[int, int | str]:
    """Numeric ids in numeric order, then the rest alphabetically."""
    return (0, int(task_id)) if task_id.isdigit() else (1, task_id)
