"""Arc diagrams of dependency trees as hand-written SVG, and an HTML page holding several.

The usual picture (as displaCy and MaltEval's viewer draw it): the words in order from left to
right, each with its UPOS below, node 0 drawn as ``ROOT`` at the left; every arc h -> m is a
curve above the words from the head to the dependent, ending in an arrowhead on the dependent,
with its DEPREL at the top. Nested arcs are drawn higher than the arcs they span (the level of an
arc is one more than the highest level among the arcs strictly inside its span).

With a gold tree (same words), an arc whose head is wrong is red and dashed and the gold arc of
that word is drawn below the words in green (with its gold label); an arc whose head is right
but whose label is wrong is orange, its label shown as ``predicted≠gold``. A word without a
head (HEAD ``_``) gets no arc. Text is XML-escaped; the output is plain SVG 1.1 that any
browser shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np

from dparse.conll import Sentence

__all__ = ["ArcStyle", "arc_levels", "html_page", "sentence_svg"]

CHAR = 7.5  # px per character of the word font (13px sans-serif, a generous estimate)
GAP = 18  # px between words
LEVEL = 26  # px of height per arc level
MARGIN = 12
WORD_Y_PAD = 16  # px between the arcs' feet and the word baseline


class ArcStyle:
    """Colours of the picture (SVG paint values)."""

    right = "#1f4e8c"
    wrong_head = "#c62828"
    wrong_label = "#e07b00"
    gold = "#2e7d32"


def arc_levels(heads: np.ndarray) -> dict[int, int]:
    """Level (1, 2, ...) of the arc of every word m with a head (key m): 1 plus the highest
    level of the arcs strictly inside its span [min(h, m), max(h, m)]."""
    h = np.asarray(heads)
    arcs = sorted((abs(int(h[m]) - m), m) for m in range(1, len(h)) if h[m] >= 0)
    spans: list[tuple[int, int, int]] = []  # lo, hi, level of the arcs placed so far
    levels = {}
    for _, m in arcs:
        lo, hi = sorted((int(h[m]), m))
        inner = [lvl for a, b, lvl in spans if lo <= a and b <= hi and (a, b) != (lo, hi)]
        levels[m] = 1 + max(inner, default=0)
        spans.append((lo, hi, levels[m]))
    return levels


def _text(x: float, y: float, text: str, size: int = 13, fill: str = "#000",
          extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}" '
            f'text-anchor="middle"{extra}>{escape(text)}</text>')


def _arc(x1: float, x2: float, base: float, height: float, colour: str, label: str,
         dashed: bool, below: bool = False) -> list[str]:
    """A curve from x1 (head) to x2 (dependent) on the line ``base``, rising ``height`` (or
    falling, ``below``), with an arrowhead at x2 and ``label`` at its top."""
    sign = 1 if below else -1
    top = base + sign * height
    dash = ' stroke-dasharray="5,3"' if dashed else ""
    path = (f'<path d="M{x1:.1f},{base:.1f} C{x1:.1f},{top:.1f} {x2:.1f},{top:.1f} '
            f'{x2:.1f},{base:.1f}" fill="none" stroke="{colour}" stroke-width="1.6"{dash}/>')
    tip = f"{x2:.1f},{base:.1f}"
    wing = 4.5
    arrow = (f'<polygon points="{tip} {x2 - wing:.1f},{base + sign * 8:.1f} '
             f'{x2 + wing:.1f},{base + sign * 8:.1f}" fill="{colour}"/>')
    # a cubic Bezier with both controls at ``top`` reaches 3/4 of the way there
    label_y = base + sign * 0.75 * height + (12 if below else -3)
    halo = ' stroke="#fff" stroke-width="3" paint-order="stroke"'
    return [path, arrow, _text((x1 + x2) / 2, label_y, label, 11, colour, halo)]


def sentence_svg(sentence: Sentence, gold: Sentence | None = None, title: str | None = None,
                 style: type[ArcStyle] = ArcStyle) -> str:
    """The arc diagram of ``sentence`` (its HEAD and DEPREL), marked against ``gold`` (the same
    words) when given, as a standalone ``<svg>`` document (a string)."""
    if gold is not None and gold.form != sentence.form:
        raise ValueError("the gold sentence has other words than the sentence drawn")
    words = ["ROOT", *sentence.form]
    tags = ["", *sentence.upos]
    widths = [max(len(w), len(t), 2) * CHAR for w, t in zip(words, tags, strict=True)]
    centres = []
    x = MARGIN
    for w in widths:
        centres.append(x + w / 2)
        x += w + GAP
    width = x - GAP + MARGIN
    heads = sentence.heads
    levels = arc_levels(heads)
    top_level = max(levels.values(), default=0)
    title_h = 22 if title else 0
    base = title_h + MARGIN + top_level * LEVEL + 10
    word_y = base + WORD_Y_PAD
    below_levels: dict[int, int] = {}
    wrong = []
    if gold is not None:
        wrong = [m for m in range(1, len(heads)) if gold.heads[m] >= 0 and
                 gold.heads[m] != heads[m]]
        gold_heads = np.full(len(heads), -1)
        gold_heads[wrong] = gold.heads[wrong]
        below_levels = arc_levels(gold_heads)
    below_base = word_y + 26
    height = below_base + max(below_levels.values(), default=0) * LEVEL + (
        24 if below_levels else -8) + MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="DejaVu Sans, Arial, sans-serif">',
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#fff"/>',
    ]
    if title:
        parts.append(f'<text x="{MARGIN}" y="{MARGIN + 8}" font-size="13" '
                     f'font-weight="bold">{escape(title)}</text>')
    for k, (word, tag) in enumerate(zip(words, tags, strict=True)):
        weight = ' font-weight="bold"' if k == 0 else ""
        parts.append(_text(centres[k], word_y, word, 13, "#000", weight))
        if tag:
            parts.append(_text(centres[k], word_y + 15, tag, 10, "#666"))
    for m, level in sorted(levels.items(), key=lambda kv: -kv[1]):
        h = int(heads[m])
        label = sentence.deprels[m]
        colour, dashed = style.right, False
        if gold is not None and gold.heads[m] >= 0:
            if gold.heads[m] != h:
                colour, dashed = style.wrong_head, True
            elif gold.deprels[m] != label:
                colour, label = style.wrong_label, f"{label}\u2260{gold.deprels[m]}"
        parts += _arc(centres[h], centres[m], base, level * LEVEL, colour, label, dashed)
    if gold is not None:
        for m, level in below_levels.items():
            parts += _arc(centres[int(gold.heads[m])], centres[m], below_base, level * LEVEL,
                          style.gold, gold.deprels[m], False, below=True)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def html_page(figures: Sequence[tuple[str, str]], title: str = "dparse trees") -> str:
    """An HTML5 page showing each (caption, svg) of ``figures`` with its caption."""
    body = []
    for caption, svg in figures:
        body.append(f'<figure>\n<figcaption>{escape(caption)}</figcaption>\n'
                    f'<div class="tree">\n{svg}</div>\n</figure>')
    legend = (f'<p class="legend">Arcs above the words: the parse (<span style="color:'
              f'{ArcStyle.right}">right</span>, <span style="color:{ArcStyle.wrong_head}">wrong '
              f'head</span>, <span style="color:{ArcStyle.wrong_label}">wrong label</span>); '
              f'below: <span style="color:{ArcStyle.gold}">the gold arc</span> of each word '
              f"whose head is wrong.</p>")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        "<style>body{font-family:sans-serif;margin:1.5em;background:#fafafa}"
        "figure{margin:0 0 1.5em 0;background:#fff;border:1px solid #ddd;padding:.5em}"
        "figcaption{font-size:.9em;color:#333;margin-bottom:.3em}"
        ".tree{overflow-x:auto}.legend{font-size:.9em}</style>",
        "</head>", "<body>", f"<h1>{escape(title)}</h1>", legend, *body, "</body>", "</html>",
    ]) + "\n"
