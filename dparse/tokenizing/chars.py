"""A text as the tokenizer's loops read it (:mod:`dparse.tokenizing.segmenter`): one lowered code
point and one class per character.

White space is what ``str.isspace`` says; of it, the characters that ``str.splitlines`` breaks
lines at are class ``NEWLINE`` (a line break: the sentence ends there), the others ``SPACE``.
The other classes come from the Unicode general category, with the punctuation that decides
token and sentence ends in classes of its own.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

import numpy as np

from dparse.tokenizing.segmenter import NEWLINE, OTHER_LETTER, SPACE

# the characters str.splitlines breaks lines at (all white space for str.isspace)
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_SPECIAL = {".": 9, ",": 10, "!": 11, "?": 11, "\u2026": 11, ":": 12, ";": 12,
            "'": 13, '"': 13, "`": 13, "-": 14, "/": 15}
_CATEGORY = {"Lu": 3, "Lt": 3, "Ll": 4, "Lo": OTHER_LETTER, "Lm": OTHER_LETTER,
             "Mn": 6, "Mc": 6, "Me": 6,
             "Nd": 7, "Nl": 8, "No": 8, "Pi": 13, "Pf": 13, "Pd": 14, "Ps": 16, "Pe": 17,
             "Pc": 18, "Po": 18, "Sm": 19, "Sc": 20, "Sk": 19, "So": 21}
CONTROL = 22  # Cc, Cf, Co, Cn, Cs and anything else: no class of its own


def char_class(c: str) -> int:
    """The class of one character (module doc)."""
    if c.isspace():
        return NEWLINE if c in LINE_BREAKS else SPACE
    return _SPECIAL.get(c) or _CATEGORY.get(unicodedata.category(c), CONTROL)


def _lowered(c: str) -> int:
    if c.isspace():
        return 10 if c in LINE_BREAKS else 32
    low = c.lower()
    return ord(low) if len(low) == 1 else ord(c)


@dataclass(frozen=True)
class CharArrays:
    """``low`` uint32 [N] and ``cls`` uint8 [N] of a text of N characters (module doc)."""

    low: np.ndarray
    cls: np.ndarray


@functools.cache
def plane_tables() -> tuple[np.ndarray, np.ndarray]:
    """The lowered code point and class of every character of the Basic Multilingual Plane
    (U+0000 to U+FFFF), made once a process (a tokenizer makes them when it loads)."""
    chars = [chr(p) for p in range(0x10000)]
    low = np.array([_lowered(c) for c in chars], dtype=np.uint32)
    cls = np.array([char_class(c) for c in chars], dtype=np.uint8)
    return low, cls


def char_arrays(text: str) -> CharArrays:
    """The arrays of ``text``: characters of the Basic Multilingual Plane from a table made
    once, each other distinct character looked up once."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    plane_low, plane_cls = plane_tables()
    basic = points < 0x10000
    if basic.all():
        return CharArrays(plane_low[points], plane_cls[points])
    low = plane_low[np.where(basic, points, 0)]
    cls = plane_cls[np.where(basic, points, 0)]
    others = np.flatnonzero(~basic)
    distinct, inverse = np.unique(points[others], return_inverse=True)
    chars = [chr(p) for p in distinct.tolist()]
    low[others] = np.array([_lowered(c) for c in chars], dtype=np.uint32)[inverse]
    cls[others] = np.array([char_class(c) for c in chars], dtype=np.uint8)[inverse]
    return CharArrays(low, cls)
