"""Punctuation rules for scoring: which gold tokens an evaluation leaves out.

- ``include``: score every token.
- ``conll``: CoNLL-X ``eval.pl``: leave out a token whose FORM is made only of Unicode
  punctuation characters (general category P*: Pc Pd Ps Pe Pi Pf Po), as ``eval.pl``'s
  ``\\p{Punctuation}``. So ``%``, ``#``, ``&``, ``*`` are punctuation (Po), symbols (S*: ``$``,
  ``+``, ``<``, ``|``) are not.
- ``ptb``: Penn Treebank convention: leave out a token whose gold XPOS (CoNLL-X POSTAG, the
  Malt-TAB POS) is one of the five tags  `` '' : , .  (Files whose XPOS is ``_`` score every
  token.)
- ``upos``: UD convention: leave out a token whose gold UPOS (CoNLL-X CPOSTAG) is ``PUNCT``.

The rule is always applied to the gold sentence.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import numpy as np

from dparse.conll import Sentence

PUNCT_RULES: dict[str, str] = {
    "include": "punctuation included: every token scored",
    "conll": "punctuation excluded, CoNLL-X rule: FORM made only of Unicode punctuation (P*)",
    "ptb": "punctuation excluded, PTB rule: gold XPOS in `` '' : , .",
    "upos": "punctuation excluded, UD rule: gold UPOS is PUNCT",
}
PTB_PUNCT_TAGS = frozenset({"``", "''", ":", ",", "."})


@lru_cache(maxsize=65536)
def is_punct_form(form: str) -> bool:
    """True if every character of ``form`` is Unicode punctuation (category P*)."""
    return bool(form) and all(unicodedata.category(c)[0] == "P" for c in form)


def excluded(sentence: Sentence, rule: str) -> np.ndarray:
    """Bool array [n]: True for the words that ``rule`` leaves out (index i-1 is word i)."""
    if rule == "include":
        return np.zeros(len(sentence), dtype=bool)
    if rule == "conll":
        marks = [is_punct_form(f) for f in sentence.form]
    elif rule == "ptb":
        marks = [x in PTB_PUNCT_TAGS for x in sentence.xpos]
    elif rule == "upos":
        marks = [u == "PUNCT" for u in sentence.upos]
    else:
        raise ValueError(f"unknown punctuation rule {rule!r}; expected one of {list(PUNCT_RULES)}")
    return np.array(marks, dtype=bool)
