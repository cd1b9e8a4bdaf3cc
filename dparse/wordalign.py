"""Aligning a system's tokens, words and sentences with gold's through their characters, as the
CoNLL 2018 UD shared task does (Zeman et al., 2018; the task's evaluation page), for a system
that tokenized and split the text itself (:mod:`dparse.alignedscores` scores the alignment).

- Tokens: a word line outside every multiword-token range is a token of one word; a range line
  (``3-4``) is a token whose words are the range's. Empty nodes (``5.1``) are not read;
  comments, ``# text`` and ``SpaceAfter`` play no part.
- The text of a file is its tokens' FORMs (a range line's FORM for a multiword token) without
  their space separators (Unicode category Zs, :data:`SPACE_SEPARATORS`), concatenated over
  the whole file. Gold's and the system's must be the same string (:func:`check_same_text`).
- Spans: a token's span is [start, end) of its characters in the text; a word's is its
  token's; a sentence's runs from its first token's start to its last token's end. Two tokens
  (two sentences) match when their spans are equal.
- Words outside multiword tokens match when their spans are equal. Around a multiword token
  of either file, words are matched in a *region* by a longest common subsequence of their
  lowercased FORMs (a one-word token's FORM without space separators, a multiword token's
  words as written). Walking both files' words in order, a region opens at the first word of
  a multiword token met (a one-word token of the other file that starts before that word is
  left out of the region) and ends where that multiword token ends; then, while the next word
  of either file lies inside the region (a multiword token's word that starts before its end,
  a one-word token that ends no later), the next word of the file whose next word starts
  first (gold's on a tie) is taken in, and a multiword token taken in pushes the region's end
  to its own end if it is further. Of the longest common subsequences, the one taken is found
  from the region's start: equal FORMs are paired at once; otherwise the gold word is passed
  over when a subsequence as long remains without it, else the system word.

The alignment is linear in the files' words, quadratic only inside a region (a few words).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from dparse.conll import Sentence
from dparse.errors import InputError

# Unicode category Zs (space separators): left out of the text, as the shared task does
SPACE_SEPARATORS = "\u0020\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_SPACES = re.compile(f"[{SPACE_SEPARATORS}]+")
# how the readers end lines (universal newlines: \n, \r, \r\n)
_LINE_END = re.compile(r"\r\n|\r|\n")
UNALIGNED = -1  # a word's partner in the other file when it has none


@dataclass
class Segmentation:
    """The tokens, words and sentences of one file, over its text (module doc).

    Tokens (index t): ``token_start``, ``token_end`` (their span), ``token_line`` (the line of
    the word or range line), ``token_form`` (its text). Words (index w, over the whole file, in
    order): ``word_start``, ``word_end`` (their token's span), ``multiword`` (whether the token
    has several words), ``match_form`` (the lowercased FORM a region compares), ``word_line``.
    Sentences: ``sentence_spans``, one (start, end) each; ``first_word``, the index of each
    one's word 1. ``source``: the file's name for messages.
    """

    source: str
    text: str
    token_start: list[int]
    token_end: list[int]
    token_line: list[int]
    token_form: list[str]
    word_start: list[int]
    word_end: list[int]
    multiword: list[bool]
    match_form: list[str]
    word_line: list[int]
    sentence_spans: list[tuple[int, int]]
    first_word: list[int]


def _multiword_ranges(sent: Sentence) -> tuple[dict[int, tuple[int, str, int]], list[int]]:
    """The multiword tokens of ``sent``, by first word: (last word, FORM, line); and the line of
    each word. Malt-TAB has no ranges."""
    lines = _LINE_END.split(sent.to_conll())
    lines[0] = lines[0].removeprefix("\ufeff")
    lead = next(i for i, line in enumerate(lines) if line.strip())
    ranges: dict[int, tuple[int, str, int]] = {}
    word_lines: list[int] = []
    for i in range(lead, len(lines)):
        line = lines[i]
        if not line.strip() or (line[0] == "#" and sent.fmt != "malttab"):
            continue
        number = sent.lineno + i - lead
        if sent.fmt == "malttab":
            word_lines.append(number)
            continue
        ident, _, rest = line.partition("\t")
        if "-" in ident:
            first, _, last = ident.partition("-")
            ranges[int(first)] = (int(last), rest.partition("\t")[0], number)
        elif "." not in ident:
            word_lines.append(number)
        if len(word_lines) == len(sent):
            break
    return ranges, word_lines


def segment(sentences: Sequence[Sentence]) -> Segmentation:
    """The :class:`Segmentation` of ``sentences`` (a file's, in order). InputError naming the
    line of a token whose FORM is only space separators (it would have no characters)."""
    seg = Segmentation(sentences[0].source if sentences else "<sentences>", "", [], [], [], [],
                       [], [], [], [], [], [], [])
    pieces: list[str] = []
    at = 0
    for sent in sentences:
        ranges, word_lines = _multiword_ranges(sent)
        seg.first_word.append(len(seg.word_start))
        sentence_start = at
        m = 1
        while m <= len(sent):
            last, form, line = ranges.get(m) or (m, sent.form[m - 1], word_lines[m - 1])
            text = _SPACES.sub("", form)
            if not text:
                raise InputError(sent.source, line, f"FORM {form!r} is only space characters: "
                                 "the CoNLL 2018 alignment needs a character in every token")
            end = at + len(text)
            seg.token_start.append(at)
            seg.token_end.append(end)
            seg.token_line.append(line)
            seg.token_form.append(text)
            pieces.append(text)
            for k in range(m, last + 1):
                seg.word_start.append(at)
                seg.word_end.append(end)
                seg.multiword.append(last > m)
                seg.match_form.append((sent.form[k - 1] if last > m else text).lower())
                seg.word_line.append(word_lines[k - 1])
            at = end
            m = last + 1
        seg.sentence_spans.append((sentence_start, at))
    seg.text = "".join(pieces)
    return seg


def check_same_text(gold: Segmentation, system: Segmentation) -> None:
    """InputError naming the system file, the line of its token and the character where its
    text first differs from gold's (and gold's file, line and character there), unless the two
    texts are the same."""
    if gold.text == system.text:
        return
    k = len(os.path.commonprefix([gold.text, system.text]))
    where = [_position(seg, k) for seg in (system, gold)]
    if where[0] is None:
        t = where[1][0]
        raise InputError(system.source, system.token_line[-1] if system.token_line else None,
                         f"the system's text ends at character {k + 1} of gold's (non-space "
                         f"characters; gold, {gold.source}:{gold.token_line[t]}, goes on with "
                         f"token {gold.token_form[t]!r}): the texts must be the same")
    t, c = where[0]
    if where[1] is None:
        raise InputError(system.source, system.token_line[t],
                         f"gold's text ({gold.source}) ends before character {k + 1} of the "
                         f"system's (non-space characters; the system's token "
                         f"{system.token_form[t]!r}): the texts must be the same")
    u, d = where[1]
    raise InputError(system.source, system.token_line[t],
                     f"the text differs from gold's at character {k + 1} (non-space "
                     f"characters): the system's token {system.token_form[t]!r} has "
                     f"{system.text[k]!r} as its character {c + 1}, gold's token "
                     f"{gold.token_form[u]!r} ({gold.source}:{gold.token_line[u]}) has "
                     f"{gold.text[k]!r} as its character {d + 1}; the texts must be the same")


def _position(seg: Segmentation, k: int) -> tuple[int, int] | None:
    """The token holding character ``k`` of ``seg``'s text and the character's index in it;
    None past the end."""
    if k >= len(seg.text):
        return None
    t = bisect.bisect_right(seg.token_start, k) - 1
    return t, k - seg.token_start[t]


def align(gold: Segmentation, system: Segmentation) -> list[int]:
    """The system word matched to each gold word (:data:`UNALIGNED` for none), by the module
    doc's rule; the two texts must be the same (:func:`check_same_text`)."""
    match = [UNALIGNED] * len(gold.word_start)
    n_gold, n_system = len(gold.word_start), len(system.word_start)
    g = s = 0
    while g < n_gold and s < n_system:
        if gold.multiword[g] or system.multiword[s]:
            g0, s0, g, s = _region(gold, system, g, s)
            for a, b in _common_subsequence(gold.match_form[g0:g], system.match_form[s0:s]):
                match[g0 + a] = s0 + b
        elif (gold.word_start[g], gold.word_end[g]) == (system.word_start[s], system.word_end[s]):
            match[g] = s
            g += 1
            s += 1
        elif gold.word_start[g] <= system.word_start[s]:
            g += 1
        else:
            s += 1
    return match


def _inside(seg: Segmentation, w: int, end: int) -> bool:
    """Whether word ``w`` of ``seg`` lies inside a region ending at character ``end``."""
    if w >= len(seg.word_start):
        return False
    if seg.multiword[w]:
        return seg.word_start[w] < end
    return seg.word_end[w] <= end


def _region(gold: Segmentation, system: Segmentation, g: int, s: int
            ) -> tuple[int, int, int, int]:
    """The region opening at gold word ``g`` and system word ``s`` (one of them a multiword
    token's): its first gold and system words and the words after it (module doc)."""
    if gold.multiword[g]:
        end = gold.word_end[g]
        if not system.multiword[s] and system.word_start[s] < gold.word_start[g]:
            s += 1
    else:
        end = system.word_end[s]
        if gold.word_start[g] < system.word_start[s]:
            g += 1
    g0, s0 = g, s
    n_gold, n_system = len(gold.word_start), len(system.word_start)
    while _inside(gold, g, end) or _inside(system, s, end):
        if g < n_gold and (s >= n_system or gold.word_start[g] <= system.word_start[s]):
            seg, w = gold, g
            g += 1
        else:
            seg, w = system, s
            s += 1
        if seg.multiword[w]:
            end = max(end, seg.word_end[w])
    return g0, s0, g, s


def _common_subsequence(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """The pairs (i, j), a[i] == b[j], of the longest common subsequence of ``a`` and ``b``
    chosen by the module doc's rule."""
    if not a or not b:
        return []
    # longest[i][j]: the length of a longest common subsequence of a[i:] and b[j:]
    longest = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        row, below = longest[i], longest[i + 1]
        for j in range(len(b) - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif longest[i + 1][j] == longest[i][j]:
            i += 1
        else:
            j += 1
    return pairs


def same_words(gold: Sequence[Sentence], system: Sequence[Sentence]) -> bool:
    """Whether ``system`` has gold's sentences and words (the same FORMs, sentence by
    sentence): what :func:`dparse.metrics.evaluate` needs."""
    return len(gold) == len(system) and all(
        g.form == s.form for g, s in zip(gold, system, strict=True))
