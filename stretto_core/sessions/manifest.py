"""Which tools are reads, writes or neither, and what each tool takes.

stretto only ever calls a tool its manifest marks `read`. A tool of unknown kind is `generic`:
never looked up, and taken to end a lookup's reach as a write does, since it may change state.
A `pure` tool changes nothing and reads nothing a lookup could give (a scratchpad `think`, an
arithmetic `calculate`): it is never looked up either, but a lookup's reach runs across it.
Kinds come from MCP annotations (`readOnlyHint`), from a JSON manifest file, or from code. Each
tool may also carry its input contract (argument names, JSON types, required set), so a later
change of the tool can be detected before a lookup.
"""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stretto_core.errors import InputError, StrettoError, snippet
from stretto_core.private import write_private_text
from stretto_core.sessions.jsonfile import read_json_file
from stretto_core.sessions.renamed import renamed_field

MANIFEST_FORMAT_VERSION = 2
"""Version 2 added the kind `pure`; a version-1 file means the same under it and is read as is."""

READABLE_VERSIONS = (1, 2)

KIND_SYNONYMS = {"think": "pure"}
"""Kind names of the benchmark form that stretto spells otherwise (τ²-bench's `ToolType.THINK`)."""

REQUIRED_SHARE = 0.9
"""An argument passed in at least this share of a tool's calls counts as required (paper App. D)."""


class ToolKind(str, Enum):
    read = "read"
    write = "write"
    generic = "generic"
    pure = "pure"


class InputContract(BaseModel):
    """A tool's input: argument name -> JSON type, and which arguments are required."""

    model_config = ConfigDict(extra="forbid")

    args: dict[str, str] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        """One line, e.g. `order_id:string!, reason:string` (! marks required)."""
        req = set(self.required)
        return ", ".join(f"{a}:{t}{'!' if a in req else ''}" for a, t in sorted(self.args.items()))


class ToolSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: ToolKind = ToolKind.generic
    contract: InputContract | None = None
    description: str | None = None


class ManifestError(StrettoError, ValueError):
    """A manifest file that cannot be read; the message names the file and what is wrong."""


class ToolManifest(BaseModel):
    """The tools of one app: kind and contract per tool."""

    model_config = ConfigDict(extra="forbid")

    stretto_manifest: int = MANIFEST_FORMAT_VERSION
    app: str | None = None
    tools: dict[str, ToolSpec] = Field(default_factory=dict)

    def kind(self, tool: str) -> ToolKind:
        spec = self.tools.get(tool)
        return spec.kind if spec else ToolKind.generic

    def is_read(self, tool: str) -> bool:
        """True only for tools declared read; unknown tools are never reads."""
        return self.kind(tool) is ToolKind.read

    def is_write(self, tool: str) -> bool:
        return self.kind(tool) is ToolKind.write

    def ends_reach(self, tool: str) -> bool:
        """Whether a call of the tool ends a lookup's reach: a write, or a tool that may be one
        (generic or unknown). Reads and pure tools change nothing, so a lookup's result holds."""
        return self.kind(tool) in (ToolKind.write, ToolKind.generic)

    def reads(self) -> list[str]:
        return sorted(t for t, s in self.tools.items() if s.kind is ToolKind.read)

    def merged(self, other: "ToolManifest") -> "ToolManifest":
        """This manifest with `other`'s tools added; on a clash the safer kind wins."""
        tools = dict(self.tools)
        for name, spec in other.tools.items():
            mine = tools.get(name)
            if mine is None:
                tools[name] = spec
            elif mine.kind != spec.kind:
                tools[name] = mine.model_copy(update={"kind": _safer(mine.kind, spec.kind)})
        return ToolManifest(app=self.app or other.app, tools=tools)

    def narrowed(self, other: "ToolManifest") -> "ToolManifest":
        """This manifest's tools, each at the safer of its kind here and in `other` (where a tool
        it does not list is generic): a read in both stays a read, any other tool never is one."""
        tools = {name: spec if spec.kind is _safer(spec.kind, other.kind(name))
                 else spec.model_copy(update={"kind": _safer(spec.kind, other.kind(name))})
                 for name, spec in self.tools.items()}
        return ToolManifest(app=self.app or other.app, tools=tools)

    def union(self, other: "ToolManifest") -> "ToolManifest":
        """Both manifests as one, whatever their order (`merged` keeps this one's app and specs).

        Commutative and associative, so flows and shards of sessions merge to the same manifest in
        any order: the app is the first of both in sorted order; a tool in both takes the safer
        kind, and the contract and description of the spec that has a contract (of two, the one
        whose JSON sorts first).
        """
        tools = dict(self.tools)
        for name, spec in other.tools.items():
            mine = tools.get(name)
            if mine is None or mine == spec:
                tools[name] = spec if mine is None else mine
                continue
            base = min(mine, spec, key=_spec_rank)
            tools[name] = base.model_copy(update={"kind": _safer(mine.kind, spec.kind)})
        apps = [a for a in (self.app, other.app) if a is not None]
        return ToolManifest(app=min(apps) if apps else None, tools=tools)

    @classmethod
    def declare(cls, app: str | None = None, *, reads: Iterable[str] = (), writes: Iterable[str] = (),
                generic: Iterable[str] = (), pure: Iterable[str] = ()) -> "ToolManifest":
        """A manifest declared in code."""
        tools: dict[str, ToolSpec] = {}
        for names, kind in ((reads, ToolKind.read), (pure, ToolKind.pure), (generic, ToolKind.generic),
                            (writes, ToolKind.write)):
            for n in names:  # a name declared twice keeps the safer kind: writes are declared last
                tools[n] = ToolSpec(kind=kind)
        return cls(app=app, tools=tools)


def _spec_rank(spec: ToolSpec) -> tuple[bool, str]:
    """Specs with a contract first, then by their JSON (the kind aside: it is decided apart)."""
    return (spec.contract is None, json.dumps(spec.model_dump(mode="json", exclude={"kind"}), sort_keys=True))


def _safer(a: ToolKind, b: ToolKind) -> ToolKind:
    """Of two claimed kinds, the one that makes stretto call the tool less and trust a lookup's
    result less: write > generic > pure > read."""
    order = {ToolKind.write: 0, ToolKind.generic: 1, ToolKind.pure: 2, ToolKind.read: 3}
    return a if order[a] <= order[b] else b


def kind_from_mcp_annotations(annotations: Mapping[str, Any] | Any | None) -> ToolKind:
    """`readOnlyHint: true` -> read, `false` -> write, missing -> generic.

    Accepts the wire form (camelCase dict) and the mcp SDK's model (snake_case attributes).
    A tool marked destructive is a write whatever else it says.
    """
    if annotations is None:
        return ToolKind.generic
    if isinstance(annotations, Mapping):
        ro = annotations.get("readOnlyHint", annotations.get("read_only_hint"))
        destructive = annotations.get("destructiveHint", annotations.get("destructive_hint"))
    else:
        ro = getattr(annotations, "read_only_hint", None)
        destructive = getattr(annotations, "destructive_hint", None)
    if destructive is True:
        return ToolKind.write
    if ro is True:
        return ToolKind.read
    if ro is False:
        return ToolKind.write
    return ToolKind.generic


def contract_from_json_schema(schema: Mapping[str, Any] | None) -> InputContract:
    """The input contract of an MCP tool's `inputSchema`."""
    if not schema:
        return InputContract()
    props = schema.get("properties") or {}
    args = {name: _schema_type(p) for name, p in props.items()}
    return InputContract(args=args, required=sorted(schema.get("required") or []))


def _schema_type(prop: Any) -> str:
    if not isinstance(prop, Mapping):
        return "any"
    t = prop.get("type")
    if isinstance(t, list):
        t = "|".join(sorted(str(x) for x in t))
    if t is None and "anyOf" in prop:
        t = "|".join(sorted({_schema_type(p) for p in prop["anyOf"]}))
    return str(t or "any")


def manifest_from_mcp_tools(tools: Iterable[Any], app: str | None = None) -> ToolManifest:
    """A manifest from an MCP `tools/list` answer: dicts in wire form or mcp SDK `Tool` models."""
    specs: dict[str, ToolSpec] = {}
    for tool in tools:
        if isinstance(tool, Mapping):
            name, ann = tool["name"], tool.get("annotations")
            schema, desc = tool.get("inputSchema"), tool.get("description")
        else:
            name, ann = tool.name, getattr(tool, "annotations", None)
            schema = renamed_field(tool, "input_schema", "inputSchema")
            desc = getattr(tool, "description", None)
        specs[name] = ToolSpec(kind=kind_from_mcp_annotations(ann),
                               contract=contract_from_json_schema(schema), description=desc)
    return ToolManifest(app=app, tools=specs)


def load_manifest(path: str | Path) -> ToolManifest:
    """Read a manifest file: stretto's own format, or the benchmark form `{"domain", "tools": {name: kind}}`."""
    p = Path(path)
    try:
        data = read_json_file(p, "manifest")
    except InputError as exc:
        raise ManifestError(str(exc)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("tools"), dict):
        raise ManifestError(f"{p}: a manifest needs an object with a `tools` object")
    try:
        if "stretto_manifest" in data:
            version = data["stretto_manifest"]
            if type(version) is not int or version not in READABLE_VERSIONS:
                raise ManifestError(f"{p}: stretto_manifest {snippet(repr(version))} is not a version this stretto "
                                    f"reads ({', '.join(map(str, READABLE_VERSIONS))})")
            return ToolManifest.model_validate(data)
        tools: dict[str, ToolSpec] = {}
        for name, kind in data["tools"].items():
            if isinstance(kind, str):
                tools[name] = ToolSpec(kind=ToolKind(KIND_SYNONYMS.get(kind, kind)))
            else:
                tools[name] = ToolSpec.model_validate(kind)
        app = data.get("app") or data.get("domain")
        bench = data.get("benchmark")
        return ToolManifest(app=f"{bench}/{app}" if bench and app else app, tools=tools)
    except (ValidationError, ValueError) as exc:
        if isinstance(exc, ManifestError):
            raise
        raise ManifestError(f"{p}: invalid manifest: {snippet(' '.join(str(exc).split()), 300)}") from exc


def save_manifest(manifest: ToolManifest, path: str | Path) -> None:
    write_private_text(path, manifest.model_dump_json(indent=1, exclude_none=True) + "\n")


def json_type(value: Any) -> str:
    """The JSON type name of a Python value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def contracts_from_calls(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, InputContract]:
    """Input contracts as observed: every argument seen, its JSON types, required if passed in ≥90%."""
    seen: dict[str, dict[str, set[str]]] = {}
    passed: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    for tool, args in calls:
        totals[tool] = totals.get(tool, 0) + 1
        types = seen.setdefault(tool, {})
        counts = passed.setdefault(tool, {})
        for name, value in args.items():
            types.setdefault(name, set()).add(json_type(value))
            counts[name] = counts.get(name, 0) + 1
    out: dict[str, InputContract] = {}
    for tool, types in seen.items():
        n = totals[tool]
        out[tool] = InputContract(
            args={a: "|".join(sorted(ts - {"null"} or ts)) for a, ts in types.items()},
            required=sorted(a for a, c in passed[tool].items() if c >= REQUIRED_SHARE * n),
        )
    for tool, n in totals.items():
        out.setdefault(tool, InputContract())
    return out
