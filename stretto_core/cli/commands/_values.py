"""Checks of option values the verbs share, each refusing in one line that names the option.

Numbers that mean nothing (NaN, infinity, a negative weight), a folder that is a file, a plot
in a format nothing draws: each is refused before a verb reads or writes anything. The
serving options' own checks are in `serve/option_values.py`; these are the CLI's.
"""

from __future__ import annotations

import math
from pathlib import Path

from stretto_core.errors import StrettoError

PLOT_FORMATS = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".ps")
"""What `--plot` writes (by its file's suffix)."""


def check_amount(option: str, value: float, *, positive: bool = False) -> float:
    """A finite number ≥ 0 (> 0 when `positive`): a weight, a tolerance, a reward floor."""
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise StrettoError(f"{option} must be a finite number {'above' if positive else '≥'} 0, not {value}")
    return value


def check_at_least(option: str, value: int, least: int) -> int:
    """A whole number ≥ `least`: a count of draws, orders, processes or sessions."""
    if value < least:
        raise StrettoError(f"{option} must be at least {least}, not {value}")
    return value


def check_word(option: str, value: str, words: tuple[str, ...] | list[str]) -> str:
    """One of a few words."""
    if value not in words:
        raise StrettoError(f"{option} is one of {', '.join(words)}, not {value!r}")
    return value


def output_folder(path: Path, option: str) -> Path:
    """A folder a verb writes into: refused when it, or a folder above it, is a file (checked
    before any work, made by the verb when it writes)."""
    if path.exists() and not path.is_dir():
        raise StrettoError(f"{path}: is a file; {option} is a folder")
    for above in path.parents:
        if above.exists():
            if not above.is_dir():
                raise StrettoError(f"{path}: {above} is a file, so {option} cannot be made under it")
            break
    return path


def plot_path(path: Path, option: str = "--plot") -> Path:
    """Where a plot goes: a file (not a folder) whose suffix names a format the plot is drawn in."""
    from stretto_core.sessions.jsonfile import output_path

    if path.suffix.lower() not in PLOT_FORMATS:
        raise StrettoError(f"{path}: {option} draws {', '.join(PLOT_FORMATS)} files, not {path.suffix or 'no suffix'}")
    return output_path(path, "plot")


def check_outputs(json_out: Path | None, plot: Path | None = None) -> None:
    """Where a verb's JSON rows and plot go, checked before any work (a typo fails at once)."""
    from stretto_core.sessions.jsonfile import output_path

    if json_out is not None:
        output_path(json_out, "JSON rows")
    if plot is not None:
        plot_path(plot)
