"""Reliability diagrams of head probabilities as hand-written SVG (no plotting library).

The usual picture (Guo et al. 2017): the chosen heads' probability on the x axis, binned as
:func:`dparse.calibration.calibration` bins it; for each bin a point at (mean probability,
accuracy), joined by a line, one series per system; the diagonal is perfect calibration, points
below it are overconfident. Each series' legend entry gives its expected calibration error; a
bar under each point's bin shows the share of the words that fall in it (a log scale would hide
how few words the low bins hold). Plain SVG 1.1 that any browser shows; text XML-escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from dparse.calibration import Calibration

__all__ = ["reliability_svg"]

SIZE = 360  # px of the square plot area
MARGIN = 48  # px left and below the plot area, for the axes' labels
PAD = 16  # px above and right of the plot area
HISTOGRAM = 70  # px of the word-share bars below the plot
LEGEND_LINE = 18
COLOURS = ("#1f4e8c", "#c62828", "#2e7d32", "#e07b00", "#6a1b9a", "#00838f", "#5d4037")


def reliability_svg(series: Sequence[tuple[str, Calibration]], title: str = "") -> str:
    """An SVG document: the reliability diagram of each (name, calibration) of ``series``
    (at most 7), with ``title`` above it."""
    if not 1 <= len(series) <= len(COLOURS):
        raise ValueError(f"a reliability diagram draws 1 to {len(COLOURS)} series, "
                         f"got {len(series)}")
    top = PAD + (LEGEND_LINE if title else 0)
    legend_y = top + SIZE + HISTOGRAM + MARGIN
    width = MARGIN + SIZE + PAD
    height = legend_y + LEGEND_LINE * len(series) + PAD

    def x(p: float) -> float:
        return MARGIN + p * SIZE

    def y(a: float) -> float:
        return top + (1.0 - a) * SIZE

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="{width / 2:.1f}" y="{PAD + 4}" text-anchor="middle" '
                   f'font-size="13">{escape(title)}</text>')
    # axes, grid and the diagonal
    for tick in range(6):
        v = tick / 5
        out.append(f'<line x1="{x(0):.1f}" y1="{y(v):.1f}" x2="{x(1):.1f}" y2="{y(v):.1f}" '
                   'stroke="#e0e0e0"/>')
        out.append(f'<line x1="{x(v):.1f}" y1="{y(0):.1f}" x2="{x(v):.1f}" y2="{y(1):.1f}" '
                   'stroke="#e0e0e0"/>')
        out.append(f'<text x="{x(0) - 6:.1f}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">{v:.1f}</text>')
        out.append(f'<text x="{x(v):.1f}" y="{y(0) + HISTOGRAM + 16:.1f}" '
                   f'text-anchor="middle">{v:.1f}</text>')
    out.append(f'<rect x="{x(0):.1f}" y="{y(1):.1f}" width="{SIZE}" height="{SIZE}" '
               'fill="none" stroke="#444"/>')
    out.append(f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(1):.1f}" y2="{y(1):.1f}" '
               'stroke="#888" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{x(0.5):.1f}" y="{y(0) + HISTOGRAM + 32:.1f}" text-anchor="middle">'
               'probability of the chosen head (HeadProb)</text>')
    out.append(f'<text transform="translate(14 {y(0.5):.1f}) rotate(-90)" '
               'text-anchor="middle">accuracy of the chosen head</text>')
    out.append(f'<text x="{x(0) + 4:.1f}" y="{y(0) + 12:.1f}" fill="#666">share of words '
               'per bin</text>')
    # word-share bars, side by side within each bin, and the curves
    for k, (name, cal) in enumerate(series):
        colour = COLOURS[k]
        total = max(cal.words, 1)
        points = []
        for lo, hi, words, mean, accuracy in cal.bins:
            bar_width = (hi - lo) * SIZE / len(series)
            share = words / total
            out.append(f'<rect x="{x(lo) + k * bar_width:.1f}" y="{y(0) + 14:.1f}" '
                       f'width="{bar_width:.1f}" height="{share * (HISTOGRAM - 20):.1f}" '
                       f'fill="{colour}" fill-opacity="0.6"/>')
            if mean is not None and accuracy is not None:
                points.append((x(mean), y(accuracy)))
        if points:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                       'stroke-width="1.8"/>')
            out.extend(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>'
                       for px, py in points)
        ece = "n/a" if cal.ece is None else f"{100 * cal.ece:.2f}%"
        ly = legend_y + k * LEGEND_LINE
        out.append(f'<line x1="{x(0):.1f}" y1="{ly - 4}" x2="{x(0) + 20:.1f}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{x(0) + 26:.1f}" y="{ly}">{escape(name)}: ECE {ece}, '
                   f'{cal.words} words</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
