"""What binding from the user's words adds in replay (`stretto userwords`), per suite and domain.

Each domain's test agents are served, as in the bench, by a flow learned from the other agents'
train sessions (`bench_plan`), three times over: without the user's words (today's flow), with
the pattern (the request's only email, date, number or id) and with the counted spans (every
shape and position, `sessions/user_words.py`). All three replay the same test episodes at
θ = 0.3 with the use-before-write speculator. Beside them, the domain's ceiling and the ceiling
with the user's words (`turns.classify_turns`), so the points the user's words could add can be
set against the points each flow recovers.
"""

from __future__ import annotations

from typing import Callable, Sequence

from pydantic import BaseModel

from stretto_core.evaluate.measure.bench_data import Corpus
from stretto_core.evaluate.measure.bench_plan import FlowCache, plan_domain
from stretto_core.evaluate.measure.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, Interval, format_interval
from stretto_core.evaluate.measure.metrics import compare_speculators, merge_results, replay_each
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.flow.ir import learn
from stretto_core.learn.bindings.model import BindingOptions
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.learn.bindings.model import START_SITE, site_name
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.state import ToolState
from stretto_core.sessions.turns import TurnClass, classify_turns

VARIANTS = ("off", "pattern", "spans")
"""The flow without the user's words, with the pattern, with the counted spans."""


class OptionCache(FlowCache):
    """Flows learned once per set of sessions, with one `user_words` option."""

    def __init__(self, user_words: str | None) -> None:
        super().__init__()
        self.options = BindingOptions(user_words=user_words)

    def flow(self, sessions):
        key = tuple(sorted(s.session_id for s in sessions))
        if key not in self._flows:
            self._flows[key] = FlowRuntime(learn(list(sessions), binding_options=self.options))
            self.learned += 1
        return self._flows[key]


class VariantFigures(BaseModel):
    variant: str
    turns_saved: Interval
    detours_per_episode: Interval
    saved: int
    detours: int
    lookups: int
    difference: Interval | None = None
    """Turns saved minus the flow without the user's words (points / 100), paired over tasks."""
    detours_difference: Interval | None = None


class Recovery(BaseModel):
    """Of the turns only the user's words put in the ceiling, those whose every call the flow binds
    exactly (the paper's "recovered" share: a pattern 0–4%, a small model 39–53%)."""

    variant: str
    gap_turns: int
    bound: int
    share: float | None


class UserWordsRow(BaseModel):
    """One suite or domain (or a benchmark's pool): ceilings, and each flow's figures."""

    benchmark: str
    domain: str
    episodes: int
    turns: int
    ceiling: float
    with_user_words: float
    variants: list[VariantFigures]
    recovery: list[Recovery] = []


def _ceilings(episodes) -> tuple[int, int, int]:
    turns = ceiling = widened = 0
    for e in episodes:
        session, manifest = Session(header=e.header, events=e.events), e.manifest
        turns += len(session.llm_turns())
        ceiling += classify_turns(session, manifest).count(TurnClass.ceiling)
        widened += classify_turns(session, manifest, user_words=True).count(TurnClass.ceiling)
    return turns, ceiling, widened


def gap_turns_bound(flow: FlowRuntime, episode) -> tuple[int, int]:
    """(turns in the user's-words ceiling but not the ceiling, those whose every call binds exactly),
    the state and site as the speculator would have them just before the turn. A turn that repeats
    a read made since the last write is left out of both (WorkBench agents often do)."""
    session, manifest = Session(header=episode.header, events=episode.events), episode.manifest
    plain = classify_turns(session, manifest)
    widened = classify_turns(session, manifest, user_words=True)
    gaps = {i for i, (a, b) in enumerate(zip(plain, widened)) if b is TurnClass.ceiling and a is not TurnClass.ceiling}
    if not gaps:
        return 0, 0
    state = ToolState(flow.manifest, look_back=flow.look_back, user_source=flow.user_words)
    site, turn, bound, repeats, users = START_SITE, -1, 0, 0, set()
    for event in episode.events:
        if isinstance(event, UserMessage):
            users.update(state.observe_user_message(event))
        elif isinstance(event, LLMTurn):
            turn += 1
            if turn in gaps and any(state.already_made(c.tool, c.arguments) for c in event.calls):
                repeats += 1  # the same read again since the last write: no binder would make it
            elif turn in gaps and event.calls and all(_binds(flow, state, site, c.tool, c.arguments)
                                                      for c in event.calls):
                bound += 1
            for call in event.calls:
                state.observe_call(call.call_id, call.tool, call.arguments)
        elif isinstance(event, ToolResult):
            mine = event.call_id not in users
            state.observe_result(event.call_id, event.tool, event.content, event.parsed, event.error, by_agent=mine)
            if mine:
                site = site_name(event.tool, event.error)
    return len(gaps) - repeats, bound


def _binds(flow: FlowRuntime, state: ToolState, site: str, tool: str, arguments: dict) -> bool:
    got = flow.bind(tool, state, site)
    return got is not None and got.arguments == arguments


def _recovery(plans, episodes_of) -> list[Recovery]:
    out = []
    for variant, plan in plans.items():
        gaps = bound = 0
        for flow, episodes in plan.assignments:
            for e in episodes:
                g, b = gap_turns_bound(flow, e)
                gaps, bound = gaps + g, bound + b
        out.append(Recovery(variant=variant, gap_turns=gaps, bound=bound, share=bound / gaps if gaps else None))
    return out


def _row(benchmark: str, domain: str, episodes, replays: dict[str, ReplayResult], draws: int,
         seed: int) -> UserWordsRow:
    turns, ceiling, widened = _ceilings(episodes)
    figures = []
    for variant in VARIANTS:
        c = compare_speculators(replays["off"], replays[variant], None, group=domain, draws=draws, seed=seed)
        m = c.b
        figures.append(VariantFigures(variant=variant, turns_saved=m.turns_saved,
                                      detours_per_episode=m.detours_per_episode, saved=m.saved, detours=m.detours,
                                      lookups=m.lookups,
                                      difference=None if variant == "off" else c.difference.turns_saved,
                                      detours_difference=None if variant == "off" else c.difference.detours_per_episode))
    return UserWordsRow(benchmark=benchmark, domain=domain, episodes=len(episodes), turns=turns,
                        ceiling=ceiling / turns if turns else 0.0, with_user_words=widened / turns if turns else 0.0,
                        variants=figures)


def measure_user_words(corpora: dict[str, Corpus], *, theta: float = DEFAULT_THETA, draws: int = DEFAULT_DRAWS,
                       seed: int = DEFAULT_SEED, domains: Sequence[str] = (),
                       on_domain: Callable[[str], None] | None = None) -> list[UserWordsRow]:
    """Per domain of each corpus (those in `domains`, when given), then pooled per benchmark."""
    caches = {v: OptionCache(None if v == "off" else v) for v in VARIANTS}
    options = ReplayOptions(theta=theta, policy="use", split="test")
    rows: list[UserWordsRow] = []
    for name, corpus in corpora.items():
        pooled: dict[str, list[ReplayResult]] = {v: [] for v in VARIANTS}
        episodes_all = []
        recovered: list[Recovery] = []
        for domain in corpus.domains():
            if domains and domain not in domains:
                continue
            plans = {v: plan_domain(corpus, domain, caches[v]) for v in VARIANTS}
            if not plans["off"].assignments:
                continue
            replays = {v: replay_each(plans[v].assignments, options) for v in VARIANTS}
            episodes = plans["off"].episodes
            rows.append(_row(name, domain, episodes, replays, draws, seed))
            rows[-1].recovery = _recovery(plans, episodes)
            recovered.extend(rows[-1].recovery)
            for v in VARIANTS:
                pooled[v].append(replays[v])
            episodes_all.extend(episodes)
            if on_domain is not None:
                on_domain(domain)
        if len(pooled["off"]) > 1:
            rows.append(_row(name, f"{name} (all)", episodes_all, {v: merge_results(r) for v, r in pooled.items()},
                             draws, seed))
            rows[-1].recovery = [_pool(v, [r for r in recovered if r.variant == v]) for v in VARIANTS]
    return rows


def _pool(variant: str, parts: list[Recovery]) -> Recovery:
    gaps, bound = sum(r.gap_turns for r in parts), sum(r.bound for r in parts)
    return Recovery(variant=variant, gap_turns=gaps, bound=bound, share=bound / gaps if gaps else None)


def render_user_words(rows: Sequence[UserWordsRow]) -> str:
    """Ceilings, then per flow turns saved (and the change from the flow without) and detours."""
    lines = []
    for r in rows:
        line = {"Suite / domain": r.domain, "Episodes": str(r.episodes), "Ceiling": f"{100 * r.ceiling:.1f}%",
                "With user's words": f"{100 * r.with_user_words:.1f}%"}
        for v in r.variants:
            text = format_interval(v.turns_saved, 100, 1, "%")
            if v.difference is not None:
                text += f" ({format_interval(v.difference, 100, 1, '', True)})"
            line[f"Saved: {v.variant}"] = text
        for v in r.variants:
            line[f"Detours: {v.variant}"] = format_interval(v.detours_per_episode, 1, 2)
        for rec in r.recovery:
            if rec.variant != "off":
                line[f"Bound right: {rec.variant}"] = (f"{rec.bound}/{rec.gap_turns}"
                                                       + (f" ({100 * rec.share:.0f}%)" if rec.share is not None else ""))
        lines.append(line)
    if not lines:
        return "(no domain has test agents with train sessions to learn from)"
    headers = list(lines[0])
    return markdown_table(lines, {h: h for h in headers}, right=headers[1:])
