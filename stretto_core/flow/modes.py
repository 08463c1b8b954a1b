"""How many sessions of each mode a flow learned from, and how far its reach may be trusted in one.

τ²-bench telecom is served in two modes: with a user present (the customer acts on the phone)
and solo (the agent operates the phone, no user speaks). The reach, r(t | h), is the rate at
which the agent called t before its next write, counted over the sessions learned from; counted
in the other mode, or over a handful of sessions, it is overconfident (the shared train split
holds 20 solo telecom sessions of 5 tasks and none with a user: the use score's calibration error
there was 0.26 with a user and 0.12 solo, against 0.15 and 0.07 for the next-step score).

So each body of sessions in a flow's provenance records how many of its sessions were solo
(`FlowSource.solo_sessions`), and a mode's sessions are

    n_m = Σ_bodies weight · sessions of mode m in the body.

A mode is served with too few sessions when the flow learned sessions of the other mode and
fewer than `MIN_MODE_SESSIONS` of this one (30: the paper's §4.3, telecom needs about thirty
sessions for 97% of its final savings). There the speculator trusts the reach in proportion,
w_m = n_m / 30, and falls back on the habit for the rest (the next-step probability, which the
reach bounds from above and which is counted on the same contexts):

    r'(t | h) = w_m · r(t | h) + (1 − w_m) · p(t | h)      (`serve/modes.py`).

A flow learned in one mode only and served in it keeps its reach whatever its size: few sessions
of the right mode are the learning curve's case (§4.3: ten of an agent's retail sessions give 96%
of what all of them do), not a count of another event. Measured on the shared test split, where
both telecom flows learn from 20 solo sessions: with a user, w = 0 and the use score is the
next-step score (ECE 0.260 → 0.148); solo, w = 20/30 would lower its ECE only from 0.122 to
0.102, still above the next-step score's 0.074, so five train tasks, not the mode, are what
the solo flow lacks (`docs/speculator.md`, "Telecom: calibration by mode").

A flow that does not record its modes (learned before the field) is served as before (w = 1).

**Off by default** (`SHRINK_BY_MODE`). The rule was chosen on the shared test split (the ECE
above); re-checked without it (`benchmarks/mode_shrink_check.py`), it does not survive. The train
split holds no telecom session with a user, so it cannot choose a rule that acts only there; inside
the train split's solo sessions, leaving one of its 5 tasks out, shrinking the reach of a flow of
16 sessions at w = n / 30 saved no turn and added 8 detours (64 · 48 → 64 · 56). The only sessions
with a user outside the test split (20 of gpt-4o, generated tasks in neither split) gave +4 saved
and −4 detours with it, within noise (+1.8 [−0.5, 4.3] points). So a flow serves every mode with
its reach as learned; the counts per mode stay in the flow, `learn` and `flow show` still say when
a mode was learned from too few sessions, and `model_for_mode(..., shrink=True)` serves the rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stretto_core.flow.ir import Flow

MIN_MODE_SESSIONS = 30.0
"""Sessions of a mode below which its reach is shrunk towards the habit (paper §4.3: telecom needs about 30)."""

SHRINK_BY_MODE = False
"""Whether serving shrinks the reach of a mode learned from too few sessions (module docstring: off,
as the train split and the sessions outside both splits say; the test split chose it on)."""

USER_PRESENT = "user present"
SOLO = "solo"
MODES = (USER_PRESENT, SOLO)


def mode_of(solo: bool) -> str:
    return SOLO if solo else USER_PRESENT


def mode_sessions(flow: "Flow") -> dict[str, float] | None:
    """Weighed sessions of each mode the flow learned from, or None when it does not record them."""
    out = {m: 0.0 for m in MODES}
    for source in flow.provenance.sources:
        if source.solo_sessions is None:
            return None
        out[SOLO] += source.weight * source.solo_sessions
        out[USER_PRESENT] += source.weight * (source.sessions - source.solo_sessions)
    return out


def reach_weight(flow: "Flow", solo: bool) -> float:
    """w_m: how much of the reach is trusted in this mode (1 with enough sessions of it, when the
    flow learned no other mode, or when it does not record its modes)."""
    counted = mode_sessions(flow)
    if counted is None:
        return 1.0
    mode = mode_of(solo)
    other = sum(n for m, n in counted.items() if m != mode)
    return 1.0 if other <= 0 else min(1.0, counted[mode] / MIN_MODE_SESSIONS)


def served_weight(flow: "Flow", solo: bool, shrink: bool = SHRINK_BY_MODE) -> float:
    """The weight serving gives the reach in this mode: `reach_weight` where the shrinkage is on, else 1."""
    return reach_weight(flow, solo) if shrink else 1.0


def mode_notes(flow: "Flow", served: tuple[str, ...] = MODES, shrink: bool = SHRINK_BY_MODE) -> list[str]:
    """One line per served mode with too few sessions: what the flow learned from and how it serves there."""
    counted = mode_sessions(flow)
    if counted is None:
        return []
    notes = []
    for mode in served:
        n = counted[mode]
        w = reach_weight(flow, mode == SOLO)
        if w < 1.0:
            how = (f"served there, the reach counts {w:.0%} and the next-step habit {1 - w:.0%}" if shrink else
                   "served there with the reach as learned (the shrinkage towards the habit is off: flow/modes.py)")
            notes.append(f"{mode}: learned from {n:g} sessions of this mode, fewer than {MIN_MODE_SESSIONS:g}; {how}")
    return notes


def served_modes(flow: "Flow") -> tuple[str, ...]:
    """The modes worth a note when the serving mode is not known (learn, `flow show`): both for a
    flow that learned solo sessions (τ²-bench telecom's are served with a user too), else the
    mode with a user."""
    counted = mode_sessions(flow)
    if counted is None:
        return ()
    return MODES if counted[SOLO] > 0 else (USER_PRESENT,)


def describe_modes(flow: "Flow") -> str:
    """`user present 0, solo 20` (weighed sessions), or `not recorded`."""
    counted = mode_sessions(flow)
    if counted is None:
        return "not recorded"
    return ", ".join(f"{m} {counted[m]:g}" for m in MODES)
