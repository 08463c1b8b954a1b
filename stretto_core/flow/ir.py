"""The flow IR: everything a speculator needs, learned by counting, in one versioned JSON file.

A flow holds counts (the habit and the reach over abstract steps, the binding evidence, the
tools' observed input contracts) and what is derived from them (α's posterior, the compiled
binding table). Because every stored estimate is a sum over sessions, learning from more sessions
adds their counts: `merge` adds two flows and derives again, so learning in two halves and
merging gives the flow learned at once. Another source of sessions can enter as a power prior
with a weight ("weigh these 1,184 sessions as 100": each counts 100/1184).

Serialization is deterministic (sorted keys, one line, no timestamps), so two learns of the same
sessions are byte-identical, and a flow can be reviewed as a diff.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence, Sized

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stretto_core.learn.alpha import AlphaPosterior, alpha_posterior
from stretto_core.learn.reach_alpha import reach_alpha_posterior
from stretto_core.learn.bindings import add_session, compile_table
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, BindingCounts, BindingOptions, BindingTable
from stretto_core.learn.counts import BackoffModel, Counts, CountsModel, vocabulary
from stretto_core.learn.intent import IntentCounts, IntentTable, count_session as count_intent, derive_table
from stretto_core.errors import InputError, StrettoError, snippet
from stretto_core.flow import checks
from stretto_core.flow.promotion import Promotion
from stretto_core.flow.site_calibration import SiteCalibration
from stretto_core.learn.result_fields import FeatureMap
from stretto_core.sessions.jsonfile import parse_json_bytes, read_json_file, write_text_file
from stretto_core.sessions.manifest import InputContract, ToolManifest, json_type
from stretto_core.sessions.fingerprint import session_fingerprint
from stretto_core.sessions.model import Session
from stretto_core.sessions.shapes import ValueShape, shape_of
from stretto_core.learn.steps import session_symbols
from stretto_core.progress import track
from stretto_core.version import __version__

FLOW_FORMAT_VERSION = 2
"""Version 2 adds `promotion` and `provenance.learned` (docs/formats.md); a version 1 file is a
version 2 file without them, and is read as one."""
READABLE_FLOW_VERSIONS = (1, 2)
STRETTO_VERSION = __version__
"""The version a flow records it was learned by (`provenance.stretto`)."""

REQUIRED_SHARE = 0.9
"""An argument passed in at least this share of a tool's calls is required (paper App. D)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FlowSource(_Model):
    """One body of sessions counted into the flow, and the weight each of its sessions carries."""

    role: Literal["data", "prior"] = "data"
    sessions: int = 0
    solo_sessions: int | None = None
    """Of `sessions`, those where no user spoke (`flow/modes.py`); None: not recorded (learned before)."""
    weight: float = 1.0
    agents: list[str] = Field(default_factory=list)
    harnesses: list[str] = Field(default_factory=list)
    apps: list[str] = Field(default_factory=list)


class Provenance(_Model):
    stretto: str = STRETTO_VERSION
    learned: list[str] | None = None
    """The fingerprints of the sessions counted (`sessions/fingerprint.py`), sorted; `flow promote`
    never judges a site on them. None: not recorded (a flow learned before version 2)."""
    sources: list[FlowSource] = Field(default_factory=list)
    version: int | None = None
    """The deployment's version number of this flow, stamped by `stretto flow commit`; None: never committed."""


class ContractCounts(_Model):
    """Per tool: calls, calls passing each argument, the JSON types seen for each, and the shape
    of the values passed (`shapes`: how long, which symbols), which a lookup's bound value must fit."""

    calls: dict[str, float] = Field(default_factory=dict)
    passed: dict[str, dict[str, float]] = Field(default_factory=dict)
    types: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    shapes: dict[str, dict[str, ValueShape]] = Field(default_factory=dict)
    """Tool -> argument -> the shape of the values the agents passed (empty in a flow learned
    before shapes were counted: no value is refused for its shape then)."""

    def add_call(self, tool: str, arguments: dict[str, Any], weight: float) -> None:
        self.calls[tool] = self.calls.get(tool, 0.0) + weight
        passed = self.passed.setdefault(tool, {})
        types = self.types.setdefault(tool, {})
        shapes = self.shapes.setdefault(tool, {})
        for name, value in arguments.items():
            passed[name] = passed.get(name, 0.0) + weight
            seen = set(types.get(name, []))
            seen.add(json_type(value))
            types[name] = sorted(seen)
            shapes[name] = shape_of(value, shapes.get(name))

    def add(self, other: "ContractCounts", weight: float = 1.0) -> None:
        for tool, n in other.calls.items():
            self.calls[tool] = self.calls.get(tool, 0.0) + weight * n
        for tool, args in other.passed.items():
            mine = self.passed.setdefault(tool, {})
            for name, n in args.items():
                mine[name] = mine.get(name, 0.0) + weight * n
        for tool, args in other.types.items():
            mine_t = self.types.setdefault(tool, {})
            for name, ts in args.items():
                mine_t[name] = sorted(set(mine_t.get(name, [])) | set(ts))
        for tool, shaped in other.shapes.items():
            mine_s = self.shapes.setdefault(tool, {})
            for name, shape in shaped.items():
                mine_s[name] = shape.joined(mine_s.get(name))

    def contract(self, tool: str) -> InputContract:
        n = self.calls.get(tool, 0.0)
        types = self.types.get(tool, {})
        args = {a: "|".join(t for t in ts if t != "null") or "null" for a, ts in types.items()}
        required = sorted(a for a, c in self.passed.get(tool, {}).items() if n and c >= REQUIRED_SHARE * n)
        return InputContract(args=args, required=required)


class Flow(_Model):
    """The flow file. Counts are stored; `alpha`, `reach_alpha` and `table` are derived from them by `derive()`."""

    stretto_flow: Literal[1, 2] = FLOW_FORMAT_VERSION
    provenance: Provenance = Field(default_factory=Provenance)
    manifest: ToolManifest = Field(default_factory=ToolManifest)
    features: FeatureMap | None = None
    vocab: list[str] = Field(default_factory=list)
    counts: CountsModel
    bindings: BindingCounts = Field(default_factory=BindingCounts)
    contracts: ContractCounts = Field(default_factory=ContractCounts)
    intent: IntentCounts = Field(default_factory=IntentCounts)
    """The reach given the user's words, counted (`learn/intent.py`); a file without it has none."""
    alpha: AlphaPosterior | None = None
    reach_alpha: AlphaPosterior | None = None
    """The reach's own concentration (`learn/reach_alpha.py`); derived like `alpha`."""
    table: BindingTable | None = None
    intent_table: IntentTable | None = None
    """Derived from `intent`: the lift of a read's reach at a site given a word the user said."""
    pinned: dict[str, InputContract] = Field(default_factory=dict)
    thresholds: dict[str, float] = Field(default_factory=dict)
    site_calibration: SiteCalibration | None = None
    """Each site's use counted on sessions the flow did not learn from (`learn --recalibrate`); absent: none."""
    promotion: Promotion | None = None
    """Which site lookups serve, judged on the deployment's own sessions (`flow promote`,
    `flow/promotion.py`); absent: every site serves as scored."""

    def step_counts(self) -> Counts:
        return Counts.from_model(self.counts)

    def derive(self) -> "Flow":
        """Recompute the derived parts (vocabulary, α, binding table, pinned contracts) from the counts."""
        counts = self.step_counts()
        self.vocab = vocabulary(counts, self.manifest.tools)
        self.alpha = alpha_posterior(counts, len(self.vocab))
        self.reach_alpha = reach_alpha_posterior(counts, len(self.vocab))
        self.table = compile_table(self.bindings)
        self.intent_table = derive_table(self.intent)
        self.pinned = _pin_contracts(self.manifest, self.contracts)
        return self

    def served_manifest(self) -> ToolManifest:
        """The manifest a served flow checks against: kinds, with each tool's contract pinned."""
        tools = {name: spec.model_copy(update={"contract": self.pinned.get(name, spec.contract)})
                 for name, spec in self.manifest.tools.items()}
        return ToolManifest(app=self.manifest.app, tools=tools)

    def derived(self) -> "Flow":
        """This flow with its derived parts present (derived from the counts when missing)."""
        if self.alpha is None or self.reach_alpha is None or self.table is None or self.intent_table is None:
            self.derive()
        return self

    def backoff(self, alpha: float | None = None, reach_alpha: float | None = None) -> BackoffModel:
        """The habit at the flow's α and the reach at its own (or the ones given; an α given
        alone is both)."""
        flow = self.derived()
        assert flow.alpha is not None and flow.reach_alpha is not None
        if reach_alpha is None:
            reach_alpha = flow.reach_alpha.alpha if alpha is None else alpha
        return BackoffModel(self.step_counts(), flow.alpha.alpha if alpha is None else alpha,
                            len(flow.vocab), flow.vocab, reach_alpha=reach_alpha)

    def lookup_tools(self) -> list[str]:
        """Reads the flow may look up: marked read, seen in training, and with a binding table."""
        flow = self.derived()
        assert flow.table is not None
        seen = self.step_counts().actions()
        return [t for t in self.served_manifest().reads() if t in seen and t in flow.table.lookups]

    def to_json(self) -> str:
        """One line, sorted keys: byte-identical for identical counts."""
        return json.dumps(self.model_dump(mode="json", exclude_none=True), sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _pin_contracts(manifest: ToolManifest, contracts: ContractCounts) -> dict[str, InputContract]:
    """Each tool's pinned contract: the declared one, else the one observed in the sessions."""
    pinned: dict[str, InputContract] = {}
    for tool in sorted(set(contracts.calls) | set(manifest.tools)):
        spec = manifest.tools.get(tool)
        if spec is not None and spec.contract is not None:
            pinned[tool] = spec.contract
        elif tool in contracts.calls:
            pinned[tool] = contracts.contract(tool)
    return pinned


def manifest_of_sessions(sessions: Iterable[Session], override: ToolManifest | None = None) -> ToolManifest:
    """The tool kinds learning uses: `override` when given, else the union of the sessions' own
    (`ToolManifest.union`: the same in any order of the sessions)."""
    if override is not None:
        return override
    merged: ToolManifest | None = None
    for s in sessions:
        if s.header.manifest is not None:
            merged = s.header.manifest if merged is None else merged.union(s.header.manifest)
    if merged is None:
        raise StrettoError("no tool manifest: the sessions carry none; pass --manifest FILE")
    return merged


class SessionCounter:
    """Counts sessions into a flow one at a time, holding none of them: the counts, and the
    provenance's sets (agents, harnesses, apps)."""

    def __init__(self, manifest: ToolManifest, *, weight: float = 1.0, features: FeatureMap | None = None,
                 constants: bool = False, role: Literal["data", "prior"] = "data",
                 binding_options: BindingOptions = DEFAULT_OPTIONS) -> None:
        self.manifest, self.weight, self.features, self.role = manifest, weight, features, role
        self.constants, self.binding_options = constants, binding_options
        self.counts = Counts()
        self.bindings = BindingCounts(constants=constants)
        self.contracts = ContractCounts()
        self.intent = IntentCounts()
        self.sessions = 0
        self.solo_sessions = 0
        self.agents: set[str] = set()
        self.harnesses: set[str] = set()
        self.apps: set[str] = set()
        self.learned: set[str] = set()

    def add(self, s: Session, fingerprint: str | None = None) -> None:
        """Count one session (`fingerprint`: the recorded session's, where `s` is a view of it,
        `learn/served.py`)."""
        symbols, actions = session_symbols(s, self.features)
        self.counts.add(symbols, actions, self.manifest.is_write, self.weight)
        add_session(self.bindings, s, self.manifest, self.weight, self.constants, self.binding_options)
        for call in s.agent_calls():
            self.contracts.add_call(call.tool, call.arguments, self.weight)
        count_intent(self.intent, s, self.manifest, self.weight)
        self.sessions += 1
        self.solo_sessions += int(s.header.solo)
        self.agents.add(s.header.agent_model or "unknown")
        self.harnesses.add(s.header.harness)
        self.apps.add(s.header.app or "unknown")
        self.learned.add(fingerprint or session_fingerprint(s))

    def flow(self) -> Flow:
        """The sessions counted so far, as an underived flow."""
        source = FlowSource(role=self.role, sessions=self.sessions, solo_sessions=self.solo_sessions,
                            weight=self.weight,
                            agents=sorted(self.agents), harnesses=sorted(self.harnesses), apps=sorted(self.apps))
        return Flow(provenance=Provenance(sources=[source], learned=sorted(self.learned)),
                    manifest=self.manifest, features=self.features,
                    counts=self.counts.to_model(), bindings=self.bindings, contracts=self.contracts,
                    intent=self.intent)


def count_sessions(sessions: Iterable[Session], manifest: ToolManifest, *, weight: float = 1.0,
                   features: FeatureMap | None = None, constants: bool = False,
                   role: Literal["data", "prior"] = "data",
                   binding_options: BindingOptions = DEFAULT_OPTIONS) -> Flow:
    """Count sessions into a flow (underived). Weight multiplies every count (a power prior).

    `sessions` may be any iterable: they are counted one at a time (`SessionCounter`)."""
    counter = SessionCounter(manifest, weight=weight, features=features, constants=constants, role=role,
                             binding_options=binding_options)
    total = len(sessions) if isinstance(sessions, Sized) else None
    for s in track(sessions, "learn", total=total, unit="session"):
        counter.add(s)
    return counter.flow()


def learn(sessions: Sequence[Session], manifest: ToolManifest | None = None, *,
          prior: Sequence[Session] = (), prior_weight: float | None = None,
          priors: Sequence[tuple[Sequence[Session], float | None]] = (),
          features: FeatureMap | bool | None = None, constants: bool = False,
          binding_options: BindingOptions = DEFAULT_OPTIONS) -> Flow:
    """Learn a flow from sessions; `prior` sessions count as `prior_weight` sessions in all.

    `priors`: more bodies of sessions, each `(sessions, weight)` weighing `weight` sessions in
    all (None: its own count), e.g. an agent's harness-mates and other harnesses (`flow/harness.py`).
    `features`: a FeatureMap to use, True to learn one from the sessions, None/False for none.
    `binding_options`: parts of the binding rule switched off (the ablation's; serve the flow
    with the same options).
    """
    bodies = ([(prior, prior_weight)] if prior else []) + [(list(p), w) for p, w in priors if p]
    every = list(sessions) + [s for body, _ in bodies for s in body]
    if not every:
        raise StrettoError("no sessions to learn from")
    for _, body_weight in bodies:
        if body_weight is not None and not (math.isfinite(body_weight) and body_weight >= 0):
            raise StrettoError(f"a prior's weight must be a finite number ≥ 0, not {body_weight}")
    man = manifest_of_sessions(every, manifest)
    if features is True:
        from stretto_core.learn.features import learn_feature_map

        fmap = learn_feature_map(every)
    else:
        fmap = features or None
    flow = count_sessions(sessions, man, features=fmap, constants=constants, binding_options=binding_options)
    for body, body_weight in bodies:
        weight = 1.0 if body_weight is None else body_weight / len(body)
        flow = _add(flow, count_sessions(body, man, weight=1.0, features=fmap, constants=constants,
                                         role="prior", binding_options=binding_options), weight)
    return flow.derive()


def _add(a: Flow, b: Flow, weight: float = 1.0) -> Flow:
    if (a.features or None) != (b.features or None):
        raise StrettoError("cannot merge flows with different result features; learn both with the same map")
    counts = Counts.from_model(a.counts).merged(Counts.from_model(b.counts), weight)
    contracts = a.contracts.model_copy(deep=True)
    contracts.add(b.contracts, weight)
    sources = _merge_sources(list(a.provenance.sources) + [
        s.model_copy(update={"weight": s.weight * weight}) for s in b.provenance.sources])
    thresholds = {**b.thresholds, **a.thresholds}
    calibration = _merged_calibration(a.site_calibration, b.site_calibration, weight)
    learned = (None if a.provenance.learned is None and b.provenance.learned is None
               else sorted(set(a.provenance.learned or ()) | set(b.provenance.learned or ())))
    return Flow(provenance=Provenance(sources=sources, learned=learned), manifest=a.manifest.union(b.manifest),
                features=a.features, counts=counts.to_model(), bindings=a.bindings.merged(b.bindings, weight),
                contracts=contracts, intent=a.intent.merged(b.intent, weight), thresholds=thresholds,
                site_calibration=calibration, promotion=a.promotion or b.promotion)


def _add_into(total: Flow, b: Flow) -> None:
    """`_add(total, b)` written into `total` (a flow `_add` made, owned by the caller): the same
    counts, without copying the growing total once per flow added."""
    if (total.features or None) != (b.features or None):
        raise StrettoError("cannot merge flows with different result features; learn both with the same map")
    total.counts = Counts.from_model(total.counts).merged(Counts.from_model(b.counts)).to_model()
    total.contracts.add(b.contracts)
    total.provenance = Provenance(
        sources=_merge_sources(list(total.provenance.sources) + list(b.provenance.sources)),
        learned=(None if total.provenance.learned is None and b.provenance.learned is None
                 else sorted(set(total.provenance.learned or ()) | set(b.provenance.learned or ()))))
    total.manifest = total.manifest.union(b.manifest)
    total.bindings.add(b.bindings)
    total.intent.add(b.intent)
    total.thresholds = {**b.thresholds, **total.thresholds}
    total.site_calibration = _merged_calibration(total.site_calibration, b.site_calibration, 1.0)
    total.promotion = total.promotion or b.promotion


def _merged_calibration(a: SiteCalibration | None, b: SiteCalibration | None,
                        weight: float) -> SiteCalibration | None:
    """Both flows' site counts added; a flow without any lends none."""
    if b is None:
        return a
    empty = SiteCalibration(prior=b.prior, floor=b.floor, folds=b.folds)
    return (a or empty).merged(b, weight)


def _merge_sources(sources: list[FlowSource]) -> list[FlowSource]:
    """Sources of the same role and weight are one body of sessions: merging halves is learning at once."""
    merged: dict[tuple[str, float], FlowSource] = {}
    for s in sources:
        key = (s.role, s.weight)
        have = merged.get(key)
        if have is None:
            merged[key] = s.model_copy(deep=True)
            continue
        have.sessions += s.sessions
        have.solo_sessions = (None if have.solo_sessions is None or s.solo_sessions is None
                              else have.solo_sessions + s.solo_sessions)
        have.agents = sorted(set(have.agents) | set(s.agents))
        have.harnesses = sorted(set(have.harnesses) | set(s.harnesses))
        have.apps = sorted(set(have.apps) | set(s.apps))
    return [merged[k] for k in sorted(merged)]


def merge(a: Flow, b: Flow, weight: float = 1.0) -> Flow:
    """The flow of both bodies of sessions: counts added (b's times `weight`), then derived again.

    A weight that is not a finite number above 0, or so large that the weighed counts are not
    finite, is a StrettoError."""
    if not (math.isfinite(weight) and weight > 0):
        raise StrettoError(f"a flow's weight must be a finite number above 0, not {weight}")
    try:
        merged = _add(a, b, weight)
    except ValueError as exc:
        raise StrettoError(f"weighing a flow by {weight:g}: {exc}") from exc
    problems = checks.number_problems(merged.model_dump(mode="json", exclude_none=True))
    if problems:
        raise StrettoError(f"weighing a flow by {weight:g} overflows its counts ({problems[0]})")
    return merged.derive()


def save_flow(flow: Flow, path: str | Path) -> None:
    """Write a flow file: one line of sorted JSON, byte-identical for identical counts."""
    try:
        text = flow.to_json()
    except ValueError as exc:  # NaN or infinity: a weight so large the counts overflowed
        raise StrettoError(f"{path}: the flow holds a number that is not finite ({exc}); not written") from exc
    write_text_file(path, text + "\n", "flow")


def load_flow(path: str | Path) -> Flow:
    """Read a flow file; another version, or a malformed file, is a clear error naming the file.

    Every number is checked and the derived parts are derived again from the counts: a file
    whose stored `vocab`, `alpha`, `table` or `pinned` differ from its counts' is refused
    (`flow/checks.py`), so no edit of a derived part can change what the flow serves.
    """
    p = Path(path)
    return _flow_of(read_json_file(p, "flow"), p)


def load_flow_bytes(data: bytes, path: str | Path, *, written_here: bool = False) -> Flow:
    """A flow from a file's bytes already read (`path` names it in errors): the same checks as
    `load_flow`, so a reader can hash exactly the bytes it serves (`serve/reload.py`).

    `written_here`: these are bytes this stretto wrote from inputs it checked (a deployment's log
    names their SHA-256, `flow/history.py`): parsed, not checked or derived again. Never a server's."""
    p = Path(path)
    return _flow_of(parse_json_bytes(data, p, "flow"), p, written_here)


def _flow_of(data: Any, p: Path, written_here: bool = False) -> Flow:
    if not isinstance(data, dict) or "stretto_flow" not in data:
        raise InputError(str(p), "not a stretto flow (no `stretto_flow` field)")
    version = data["stretto_flow"]
    if type(version) is not int or version not in READABLE_FLOW_VERSIONS:
        raise InputError(str(p), f"stretto_flow {snippet(repr(version))} is not version "
                                 f"{' or '.join(map(str, READABLE_FLOW_VERSIONS))}; relearn it")
    provenance = data.get("provenance")  # as written: by this version of stretto, every derived part in
    as_written = (written_here and isinstance(provenance, dict) and provenance.get("stretto") == STRETTO_VERSION
                  and all(name in data for name in checks.DERIVED))
    if not as_written:
        _refuse(p, checks.counts_problems(data) or checks.number_problems(data) or checks.reach_problems(data))
    try:
        flow = Flow.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(str(p), f"invalid flow at {'.'.join(map(str, err['loc']))}: {err['msg']}") from exc
    if as_written:
        flow.stretto_flow = FLOW_FORMAT_VERSION
        return flow
    try:
        flow.derive()
    except (ValueError, ArithmeticError) as exc:
        raise InputError(str(p), f"counts: {exc}") from exc
    derived = flow.model_dump(mode="json", include=set(checks.DERIVED), exclude_none=True)
    stored = {name: data[name] for name in checks.DERIVED if name in data}
    _refuse(p, checks.table_problems(derived["table"]) + checks.derived_problems(stored, derived))
    flow.stretto_flow = FLOW_FORMAT_VERSION  # read as the current version; written as it
    return flow


def _refuse(path: Path, problems: list[str]) -> None:
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise InputError(str(path), problems[0] + more)


learn_flow = learn
"""The public name of `learn` (the package `stretto_core.learn` holds the counting itself)."""

merge_flows = merge
"""The public name of `merge`."""
