"""Figures of the reports, drawn with matplotlib (the optional extra ``dparse[plot]``).

matplotlib is imported only when a figure is drawn; without it :func:`require_matplotlib`
raises a DparseError saying how to install it. Figures are built with the object-oriented API
(``matplotlib.figure.Figure``, no pyplot state, no display needed) and each is written as
``STEM.png`` and ``STEM.svg`` through :mod:`dparse.outputs` (whole or not at all; the SVG with
a fixed hash salt and no date, so the same data give the same bytes).

- :func:`plot_comparison`: a :class:`dparse.reports.breakdowns.Comparison` as accuracy by
  sentence length, arc precision and recall by arc length, LAS per gold label (the most frequent
  labels), every system side by side, plus one ``overview`` figure holding the four panels
  (beyond ``MANY_SYSTEMS`` systems: distinct colours and markers, one legend beside the panels,
  per-label LAS as a heat map).
- :func:`plot_scaling`: time or speed against sentence length per decoder on log-log axes, each
  series with its fitted exponent b of y ~ x^b (:func:`fit_exponent`);
  :func:`plot_time_and_speed`: time and tokens/sec against sentence length side by side.
- :func:`plot_shares`: a share (search errors, certified sentences) per sentence-length bin per
  decoder.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dparse.errors import DparseError
from dparse.outputs import write_bytes
from dparse.reports.breakdowns import Comparison, row_scores

__all__ = [
    "fit_exponent",
    "plot_comparison",
    "plot_scaling",
    "plot_shares",
    "plot_time_and_speed",
    "require_matplotlib",
    "save_figure",
]

FORMATS = ("png", "svg")
TOP_LABELS = 20
# More systems than this in one figure: one colour and marker each from a 40-colour palette,
# sentence-length panels with UAS only, per-label LAS as a heat map, and one legend per figure
# outside the panels (an overview of every en_ewt config holds about 30 systems)
MANY_SYSTEMS = 6
MARKERS = "os^vDPX*h<>p"


def require_matplotlib() -> Any:
    """The ``matplotlib`` module; DparseError naming the ``dparse[plot]`` extra without it."""
    try:
        import matplotlib
    except ImportError:
        raise DparseError("plots need matplotlib, which is not installed: "
                          "pip install 'dparse[plot]' (or pip install matplotlib)") from None
    return matplotlib


def _figure(width: float, height: float, rows: int = 1, cols: int = 1) -> tuple[Any, Any]:
    """A new Figure and its axes array [rows, cols] (squeezed as by subplots)."""
    require_matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(rows, cols, squeeze=False)


def save_figure(fig: Any, stem: str | os.PathLike) -> list[Path]:
    """Write ``fig`` as ``stem.png`` and ``stem.svg``; returns the paths written."""
    matplotlib = require_matplotlib()
    paths = []
    for fmt in FORMATS:
        buffer = io.BytesIO()
        meta = {"Date": None} if fmt == "svg" else {"Software": None}
        with matplotlib.rc_context({"svg.hashsalt": "dparse", "svg.fonttype": "none"}):
            fig.savefig(buffer, format=fmt, dpi=110, metadata=meta)
        path = Path(f"{os.fspath(stem)}.{fmt}")
        write_bytes(path, buffer.getvalue())
        paths.append(path)
    return paths


def fit_exponent(x: Sequence[float], y: Sequence[float]) -> float:
    """b of the least-squares fit log y = a + b log x (x, y positive; at least two points)."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def _nan(values: Sequence[float | None]) -> list[float]:
    return [np.nan if v is None else float(v) for v in values]


def _short(name: str) -> str:
    return Path(name).name or name


def _many(comparison: Comparison) -> bool:
    return len(comparison.systems) > MANY_SYSTEMS


def _style(k: int, comparison: Comparison) -> dict[str, Any]:
    """Colour and marker of system ``k``: matplotlib's default cycle for a few systems, else
    distinct colours of tab20 and tab20b and a marker cycle."""
    if not _many(comparison):
        return {"color": f"C{k % 10}", "marker": "o"}
    from matplotlib import colormaps

    palette = colormaps["tab20"].colors + colormaps["tab20b"].colors
    return {"color": palette[k % len(palette)], "marker": MARKERS[k % len(MARKERS)]}


def _legend(ax: Any, comparison: Comparison) -> None:
    """The panel's own legend for a few systems (the figure legend serves many)."""
    if not _many(comparison):
        ax.legend(fontsize="small")


def _figure_legend(fig: Any, ax: Any, comparison: Comparison) -> None:
    """One legend of the systems beside the panels, for many systems (from ``ax``'s lines)."""
    if _many(comparison):
        fig.legend(*ax.get_legend_handles_labels(), loc="outside right upper",
                   fontsize="small", title="system")


def _length_axes(ax: Any, comparison: Comparison) -> None:
    for k, system in enumerate(comparison.systems):
        rows = system.tables["sentence_length"]
        keys = list(rows)
        scores = [row_scores("sentence_length", rows[b]) for b in keys]
        style = _style(k, comparison)
        ax.plot(keys, _nan([s["uas_percent"] for s in scores]), zorder=3 + k, **style,
                label=_short(system.name) if _many(comparison) else
                f"{_short(system.name)} UAS")
        if not _many(comparison):
            ax.plot(keys, _nan([s["las_percent"] for s in scores]), linestyle="--",
                    color=style["color"], marker="s", label=f"{_short(system.name)} LAS")
    ax.set_xlabel("sentence length (words)")
    ax.set_ylabel("UAS (%)" if _many(comparison) else "accuracy (%)")
    ax.set_title("UAS by sentence length" if _many(comparison) else
                 "Accuracy by sentence length")
    ax.grid(alpha=0.3)
    _legend(ax, comparison)


def _pr_axes(ax: Any, comparison: Comparison, which: str) -> None:
    for k, system in enumerate(comparison.systems):
        rows = system.tables["arc_length"]
        keys = list(rows)
        ax.plot(keys, _nan([row_scores("arc_length", rows[b])[which] for b in keys]),
                label=_short(system.name), **_style(k, comparison))
    ax.set_xlabel("arc length |h - m|")
    ax.set_ylabel(f"{which} (%)")
    ax.set_title(f"Arc {which} by arc length")
    ax.grid(alpha=0.3)
    _legend(ax, comparison)


def _label_axes(ax: Any, comparison: Comparison) -> None:
    """LAS per gold label: bars side by side for a few systems, a heat map (label x system,
    the LAS written in each cell) for many."""
    first = comparison.systems[0].tables["label"]
    labels = list(first)[:TOP_LABELS]
    las = np.array([_nan([row_scores("label", system.tables["label"][b])["las_percent"]
                          if b in system.tables["label"] else None for b in labels])
                    for system in comparison.systems])  # [systems, labels]
    y = np.arange(len(labels))
    ticks = [f"{b} ({first[b]['tokens']})" for b in labels]
    title = f"LAS per gold label (the {len(labels)} most frequent; gold count)"
    if _many(comparison):
        image = ax.imshow(las.T, aspect="auto", cmap="viridis", vmin=np.nanmin(las), vmax=100)
        for (k, j), value in np.ndenumerate(las):
            if not np.isnan(value):
                ax.text(k, j, f"{value:.0f}", ha="center", va="center", fontsize=5,
                        color="white" if value < np.nanmean(las) else "black")
        ax.set_xticks(np.arange(len(comparison.systems)),
                      [_short(s.name) for s in comparison.systems], rotation=90,
                      fontsize="x-small")
        ax.set_yticks(y, ticks, fontsize="small")
        ax.figure.colorbar(image, ax=ax, label="LAS (%)")
        ax.set_title(title)
        return
    count = len(comparison.systems)
    height = 0.8 / count
    for k, system in enumerate(comparison.systems):
        ax.barh(y + (k - (count - 1) / 2) * height, las[k], height=height,
                label=_short(system.name), color=_style(k, comparison)["color"])
    ax.set_yticks(y, ticks, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("LAS (%)")
    ax.set_xlim(0, 100)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.1),
              ncol=min(count, 3))


def plot_comparison(comparison: Comparison, directory: str | os.PathLike) -> list[Path]:
    """Write the figures of a :class:`~dparse.reports.breakdowns.Comparison` into
    ``directory`` (created if missing): ``sentence-length``, ``arc-length-pr``, ``label-las``
    and ``overview`` (the four panels in one figure), each as PNG and SVG. Returns the paths."""
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DparseError(f"cannot create the plot directory {out}: {exc.strerror}") from None
    paths = []
    wide = 3.5 if _many(comparison) else 0.0  # room for the figure legend
    fig, axes = _figure(7 + wide, 4.5)
    _length_axes(axes[0, 0], comparison)
    _figure_legend(fig, axes[0, 0], comparison)
    paths += save_figure(fig, out / "sentence-length")
    fig, axes = _figure(12 + wide, 4.5, 1, 2)
    _pr_axes(axes[0, 0], comparison, "precision")
    _pr_axes(axes[0, 1], comparison, "recall")
    _figure_legend(fig, axes[0, 0], comparison)
    paths += save_figure(fig, out / "arc-length-pr")
    fig, axes = _figure(7 + 2 * wide, 8)
    _label_axes(axes[0, 0], comparison)
    paths += save_figure(fig, out / "label-las")
    fig, axes = _figure(14 + 2 * wide, 10 + wide, 2, 2)
    _length_axes(axes[0, 0], comparison)
    _label_axes(axes[0, 1], comparison)
    _pr_axes(axes[1, 0], comparison, "precision")
    _pr_axes(axes[1, 1], comparison, "recall")
    _figure_legend(fig, axes[1, 0], comparison)
    fig.suptitle(f"dparse eval, punctuation {comparison.punct}")
    paths += save_figure(fig, out / "overview")
    return paths


def _scaling_axes(ax: Any, series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                  xlabel: str, ylabel: str, title: str) -> dict[str, float]:
    """Draw each (x, y) series on log-log ``ax`` with its fitted line, the exponent in the
    legend (non-positive points left out); name -> fitted b of y ~ x^b (series with at least
    two points)."""
    fits = {}
    for name, (x, y) in series.items():
        xs, ys = np.asarray(x, float), np.asarray(y, float)
        keep = (xs > 0) & (ys > 0)
        xs, ys = xs[keep], ys[keep]
        if len(xs) < 2:
            continue
        b, a = np.polyfit(np.log(xs), np.log(ys), 1)
        fits[name] = float(b)
        points = ax.plot(xs, ys, marker="o", linestyle="none", label=f"{name}: b = {b:.2f}")[0]
        grid = np.geomspace(xs.min(), xs.max(), 50)
        ax.plot(grid, np.exp(a) * grid**b, color=points.get_color(), linewidth=1)
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(ScalarFormatter())  # 5, 10, 20, 50: lengths read as numbers
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title or f"{ylabel} vs {xlabel} (fit y ~ x^b)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    return fits


def plot_scaling(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    stem: str | os.PathLike,
    xlabel: str = "sentence length (words)",
    ylabel: str = "decoding time (s)",
    title: str = "",
) -> dict[str, float]:
    """Each (x, y) series of ``series`` (name -> positive values) on log-log axes with its
    fitted line and exponent in the legend; writes ``stem.png`` and ``stem.svg``. Returns
    name -> fitted exponent b of y ~ x^b."""
    fig, axes = _figure(7, 5)
    fits = _scaling_axes(axes[0, 0], series, xlabel, ylabel, title)
    save_figure(fig, stem)
    return fits


def plot_time_and_speed(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    stem: str | os.PathLike,
    title: str = "",
    what: str = "decoding",
) -> dict[str, float]:
    """One figure of two log-log panels per decoder (or parser): seconds per sentence against
    sentence length n, and tokens/sec (n / seconds) against n, each series with its fitted
    exponent. ``series``: name -> (n values, seconds per sentence at each n); ``what`` names
    the timed stage in the axis labels. Writes ``stem.png`` and ``stem.svg``; returns name ->
    fitted exponent b of time ~ n^b."""
    fig, axes = _figure(12, 5, 1, 2)
    fits = _scaling_axes(axes[0, 0], series, "sentence length n (words)",
                         f"{what} time per sentence (s)", f"{title}: {what} time vs n".strip(": "))
    speed = {name: (n, np.asarray(n, float) / np.asarray(s, float))
             for name, (n, s) in series.items()}
    _scaling_axes(axes[0, 1], speed, "sentence length n (words)", "tokens/sec",
                  f"{title}: tokens/sec vs n".strip(": "))
    save_figure(fig, stem)
    return fits


def plot_shares(
    bins: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    stem: str | os.PathLike,
    ylabel: str,
    title: str,
) -> list[Path]:
    """Grouped bars: per sentence-length bin (``bins``), one bar per series (name -> percent
    per bin, None for an empty bin); writes ``stem.png`` and ``stem.svg``."""
    fig, axes = _figure(8, 4.5)
    ax = axes[0, 0]
    x = np.arange(len(bins))
    width = 0.8 / max(len(series), 1)
    for k, (name, values) in enumerate(series.items()):
        ax.bar(x + (k - (len(series) - 1) / 2) * width, _nan(values), width=width, label=name)
    ax.set_xticks(x, list(bins))
    ax.set_xlabel("sentence length (words)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return save_figure(fig, stem)
