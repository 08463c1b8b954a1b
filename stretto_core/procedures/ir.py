"""The procedure IR: trees, bindings and checks in one versioned JSON file a person can read.

A procedure is data, not a model: which call to make at each site (a decision tree over named
features of the tool state), where each argument of each call comes from (a path of an earlier
result, the shape a value had in the ticket, or a constant), and how to confirm the ticket's
stated outcome at the end (a read whose result must contain or lack some lines). Every field is
documented in `docs/procedures.md`; `tests/test_procedure_docs.py` fails when one is not.

Serialization is deterministic (sorted keys, two-space indent, no timestamps), so two compiles of
the same sessions are byte-identical and a procedure can be reviewed as a diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stretto_core.errors import InputError
from stretto_core.private import write_private_text
from stretto_core.sessions.jsonfile import read_json_file

PROCEDURE_FORMAT_VERSION = 1
"""Readers refuse any other `stretto_procedure` version."""

STOP = "stop"
"""The leaf option that ends the run (then the checks decide the verdict)."""

START_SITE = "start"
"""The site before the first call."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Selector(_Model):
    """The value a field of a record must have for the record to be picked from a list."""

    kind: Literal["const", "ticket"]
    value: Any = None
    pattern: str | None = None
    occurrence: int = 0


class Binding(_Model):
    """Where one argument's value comes from, bound again at run time from that run's results.

    - `const`: always `value` (a value the demonstrations always passed, found nowhere earlier);
    - `text`: free text the demonstrators composed (it varied); `value` is the most common one;
    - `result`: the value at `path` of an earlier result of `tool`, newest result first, and in a
      list of records only a record whose fields match every `where` selector (paths relative to
      the record);
    - `ticket`: the `occurrence`-th match of the regular expression `pattern` in the ticket, cast
      to `cast` (`int`, `float`, or none for text).
    """

    kind: Literal["const", "text", "result", "ticket"]
    value: Any = None
    tool: str | None = None
    path: str | None = None
    where: dict[str, Selector] = Field(default_factory=dict)
    pattern: str | None = None
    occurrence: int = 0
    cast: Literal["int", "float"] | None = None


class Action(_Model):
    """A whole call: a tool and the binding of each argument it passes."""

    tool: str
    arguments: dict[str, Binding] = Field(default_factory=dict)
    count: int = 0
    requires: list[str] = Field(default_factory=list)
    """A write's precondition: features every state it was demonstrated in had (see
    `procedures/conditions.py`); the run makes the write only where all of them hold."""
    most_per_run: int = 0
    """The most times one training episode made this action; the run makes a write no more
    often (0: no limit, as in files compiled before it existed)."""
    precision: float | None = None
    """Share of training states meeting `requires` whose next call was this write; the fallback
    makes only writes at or above the procedure's `fallback_precision`."""


class Option(_Model):
    """One option at a leaf: an action key (or `stop`) and how many training steps took it there."""

    action: str
    count: int


class Leaf(_Model):
    """A leaf: the options in the order the run tries them (the first that binds and no guard
    forbids is taken)."""

    kind: Literal["leaf"] = "leaf"
    options: list[Option] = Field(default_factory=list)


class Split(_Model):
    """An inner node: follow `yes` when the state has `feature`, else `no`."""

    kind: Literal["split"] = "split"
    feature: str
    yes: "Node"
    no: "Node"


Node = Annotated[Union[Leaf, Split], Field(discriminator="kind")]


class Tree(_Model):
    """The decision tree of one site, with the depth cross-validation over tasks chose."""

    site: str
    examples: int
    tasks: int
    depth: int
    cv_accuracy: float | None = None
    root: Node


class Check(_Model):
    """An outcome check: when the ticket says `phrase`, the read `probe` must show every line of
    `contains` and none of `lacks` once the run stops; `support` episodes taught it."""

    phrase: str
    probe: str
    contains: list[str] = Field(default_factory=list)
    lacks: list[str] = Field(default_factory=list)
    support: int = 0


class Guard(_Model):
    """What the run may never do: repeat a read before a write, or repeat a write."""

    no_repeated_read: bool = True
    no_repeated_write: bool = True


class Source(_Model):
    """One body of sessions compiled from."""

    kind: str
    sessions: int
    tasks: int
    agents: list[str] = Field(default_factory=list)


class Provenance(_Model):
    """What the procedure was compiled from: every session id and task id, and the bodies."""

    compiler: str = "stretto procedures 1"
    sources: list[Source] = Field(default_factory=list)
    sessions: list[str] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list)


class Procedure(_Model):
    """A compiled procedure for one domain."""

    stretto_procedure: Literal[1] = PROCEDURE_FORMAT_VERSION
    domain: str
    provenance: Provenance = Field(default_factory=Provenance)
    reads: list[str] = Field(default_factory=list)
    writes: list[str] = Field(default_factory=list)
    handoff: str | None = None
    max_calls: int = 60
    fallback: bool = False
    """When no option of a leaf may be made (or the leaf says stop where a check already fails):
    make a write whose precondition holds, else the applicable check's probe, else one of
    `probes`, before handing back (False: hand back at once)."""
    fallback_precision: float = 0.5
    """The least `precision` a write's precondition needs for the fallback to make it."""
    probes: list[str] = Field(default_factory=list)
    """Read actions the fallback may make, in order: reads demonstrations made after a write
    (they look at what a write changes), most often first."""
    guard: Guard = Field(default_factory=Guard)
    vocab: list[str] = Field(default_factory=list)
    actions: dict[str, Action] = Field(default_factory=dict)
    trees: dict[str, Tree] = Field(default_factory=dict)
    checks: list[Check] = Field(default_factory=list)


Split.model_rebuild()


def save_procedure(procedure: Procedure, path: str | Path) -> Path:
    """Write a procedure deterministically; returns the path."""
    out = Path(path)
    write_private_text(out, dump_procedure(procedure))
    return out


def dump_procedure(procedure: Procedure) -> str:
    """The file's text: sorted keys, two-space indent, a final newline."""
    return json.dumps(procedure.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def load_procedure(path: str | Path) -> Procedure:
    """Read a procedure file, refusing another format version with a message that says so."""
    source = Path(path)
    data = read_json_file(source, "procedure")  # missing, binary, too deep: one line naming the file
    if not isinstance(data, dict) or data.get("stretto_procedure") != PROCEDURE_FORMAT_VERSION:
        found = data.get("stretto_procedure") if isinstance(data, dict) else None
        raise InputError(str(source), f"not a stretto_procedure {PROCEDURE_FORMAT_VERSION} file "
                                      f"(stretto_procedure={found!r})")
    try:
        return Procedure.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(str(source), f"{where}: {first['msg']}") from exc
