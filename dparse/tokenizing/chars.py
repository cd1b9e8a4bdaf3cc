"""A text as the tokenizer's loops read it (:mod:`dparse.tokenizing.segmenter`): one lowered code
point and one class per character.

White space is what ``str.isspace`` says; of it, the characters that ``str.splitlines`` breaks
lines at are class ``NEWLINE`` (a line break: the sentence ends there), the others ``SPACE``.
The other classes come from the Unicode general category, with the punctuation that decides
token and sentence ends in classes of its own.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from dparse.tokenizing.segmenter import NEWLINE, SPACE

# the characters str.splitlines breaks lines at (all white space for str.isspace)
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_SPECIAL = {".": 9, ",": 10, "!": 11, "?": 11, "\u2026": 11, ":": 12, ";": 12,
            "'": 13, '"': 13, "`": 13, "-": 14, "/": 15}
_CATEGORY = {"Lu": 3, "Lt": 3, "Ll": 4, "Lo": 5, "Lm": 5, "Mn": 6, "Mc": 6, "Me": 6,
             "Nd": 7, "Nl": 8, "No": 8, "Pi": 13, "Pf": 13, "Pd": 14, "Ps": 16, "Pe": 17,
             "Pc": 18, "Po": 18, "Sm": 19, "Sc": 20, "Sk": 19, "So": 21}
CONTROL = 22  # Cc, Cf, Co, Cn, Cs and anything else: no class of its own
assert SPACE == 1 and NEWLINE == 2


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


def char_arrays(text: str) -> CharArrays:
    """The arrays of ``text``: each distinct character is looked up once."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if not len(points):
        return CharArrays(np.zeros(0, np.uint32), np.zeros(0, np.uint8))
    distinct, inverse = np.unique(points, return_inverse=True)
    chars = [chr(p) for p in distinct.tolist()]
    low = np.array([_lowered(c) for c in chars], dtype=np.uint32)[inverse]
    cls = np.array([char_class(c) for c in chars], dtype=np.uint8)[inverse]
    return CharArrays(np.ascontiguousarray(low), np.ascontiguousarray(cls))
