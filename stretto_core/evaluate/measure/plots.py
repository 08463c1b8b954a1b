"""The paper's figures as PNG files: reliability (Figure 3), threshold sweep (4), learning curves (5).

Plotting is kept apart from measuring: each function takes rows already computed (the same rows
the JSON holds) and only draws them. matplotlib runs on its Agg backend, so no display is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FormatStrFormatter, NullFormatter  # noqa: E402

from stretto_core.errors import StrettoError  # noqa: E402
from stretto_core.evaluate.measure.calibration import CalibrationRow, ReliabilityBin  # noqa: E402

MIN_BIN_LOOKUPS = 20
"""A reliability bin is drawn when it holds at least this many lookups (the paper: 100, over
ten times the lookups these published runs give)."""

DPI = 110
POLICY_STYLE = {"next": ("next step", "tab:orange", "s"), "use": ("use before write", "tab:blue", "o")}


def _save(fig: "plt.Figure", path: str | Path) -> Path:
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fig.tight_layout()
        fig.savefig(p, dpi=DPI, bbox_inches="tight")
    except OSError as exc:
        raise StrettoError(f"{p}: cannot write the plot: {exc.strerror or exc}") from exc
    except ValueError as exc:  # a suffix no backend draws (`--plot x.json`)
        raise StrettoError(f"{p}: cannot draw the plot: {exc}") from exc
    finally:
        plt.close(fig)
    return p


def _grid(n: int, height: float = 3.4) -> tuple["plt.Figure", list]:
    cols = min(max(n, 1), 4)
    rows = (max(n, 1) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.8 * cols, height * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _reliability_points(bins: Sequence[ReliabilityBin]) -> tuple[list[float], list[float], list[int]]:
    kept = [b for b in bins if b.lookups >= MIN_BIN_LOOKUPS and b.mean_score is not None]
    return [b.mean_score for b in kept], [b.share_used for b in kept], [b.lookups for b in kept]  # type: ignore[misc]


def plot_reliability(rows: Sequence[CalibrationRow], path: str | Path) -> Path:
    """Share used against mean score per bin, both scores, one panel per group."""
    fig, axes = _grid(len(rows))
    for ax, row in zip(axes, rows):
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        for policy, bins in (("next", row.reliability_next), ("use", row.reliability_use)):
            label, color, marker = POLICY_STYLE[policy]
            x, y, n = _reliability_points(bins)
            ax.plot(x, y, color=color, marker=marker, label=label)
        ax.set_title(row.group, fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("score")
        ax.set_ylabel("share used before the next write")
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Reliability (bins of at least {MIN_BIN_LOOKUPS} lookups)", fontsize=11)
    return _save(fig, path)


def plot_sweep(groups: dict[str, list[dict]], theta_stars: dict[str, float | None], path: str | Path) -> Path:
    """Per group: utility (k tokens per episode) and turns saved against θ, both speculators,
    the group's θ* dashed. `groups` maps a group to sweep rows as dicts (see `sweep.SweepRow`)."""
    names = list(groups)
    fig, axes = plt.subplots(2, max(len(names), 1), figsize=(3.8 * max(len(names), 1), 6.4), squeeze=False)
    for col, name in enumerate(names):
        top, bottom = axes[0][col], axes[1][col]
        for policy in ("next", "use"):
            label, color, marker = POLICY_STYLE[policy]
            rows = sorted((r for r in groups[name] if r["policy"] == policy), key=lambda r: r["theta"])
            xs = [r["theta"] for r in rows]
            util = [None if r["utility"] is None else r["utility"] / 1e3 for r in rows]
            if any(u is not None for u in util):
                top.plot(xs, util, color=color, marker=marker, label=label)
            bottom.plot(xs, [100 * (r["turns_saved"] or 0) for r in rows], color=color, marker=marker, label=label)
        star = theta_stars.get(name)
        for ax in (top, bottom):
            if star is not None:
                ax.axvline(star, color="black", linestyle="--", linewidth=1, label=f"θ* = {star:.2f}")
            ax.set_xlabel("θ")
        top.set_title(name, fontsize=10)
        top.set_ylabel("utility, k input tokens / episode")
        bottom.set_ylabel("LLM turns saved (%)")
        top.legend(fontsize=7)
    return _save(fig, path)


def plot_curves(groups: dict[str, list[dict]], path: str | Path) -> Path:
    """Per group: turns saved (top) and detours per episode (bottom) against sessions learned
    from, log scale, one line per protocol. Rows as dicts (see `curves.CurveRow`)."""
    names = list(groups)
    fig, axes = plt.subplots(2, max(len(names), 1), figsize=(3.8 * max(len(names), 1), 6.4), squeeze=False)
    styles = {"own": ("-", "o"), "others": ("--", "s"), "prior": (":", "^")}
    for col, name in enumerate(names):
        top, bottom = axes[0][col], axes[1][col]
        for protocol, (line, marker) in styles.items():
            rows = sorted((r for r in groups[name] if r["protocol"] == protocol), key=lambda r: r["sessions"])
            if not rows:
                continue
            label = rows[0]["protocol_label"]
            xs = [r["sessions"] for r in rows]
            top.plot(xs, [100 * r["turns_saved"] for r in rows], linestyle=line, marker=marker, label=label)
            bottom.plot(xs, [r["detours_per_episode"] for r in rows], linestyle=line, marker=marker, label=label)
        ticks = sorted({r["sessions"] for r in groups[name]})
        for ax in (top, bottom):
            ax.set_xscale("log")
            ax.set_xticks(ticks)
            ax.xaxis.set_major_formatter(FormatStrFormatter("%.0f"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("sessions learned from (all: the mean of the agents' pools)")
        top.set_title(name, fontsize=10)
        top.set_ylabel("LLM turns saved (%)")
        bottom.set_ylabel("detours per episode")
        top.legend(fontsize=7)
    return _save(fig, path)
