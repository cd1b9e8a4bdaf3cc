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
import itertools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from dparse.conll import Sentence
from dparse.errors import InputError

# Unicode category Zs (space separators): left out of the text, as the shared task does
SPACE_SEPARATORS = "\u0020\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_SPACES = re.compile(f"[{SPACE_SEPARATORS}]+")
# how the readers end lines (universal newlines: \n, \r, \r\n)
_LINE_END = re.compile(r"\r\n|\r|\n")
# a multiword-token range line: its first and last word and its FORM
_RANGE = re.compile(r"(?:^|(?<=\r))\ufeff?([0-9]+)-([0-9]+)\t([^\t\r\n]*)", re.MULTILINE)
UNALIGNED = -1  # a word's partner in the other file when it has none


@dataclass
class Segmentation:
    """The tokens, words and sentences of one file, over its text (module doc).

    Tokens (index t): ``token_start``, ``token_end`` (their span), ``token_form`` (its text),
    ``token_first`` (the index of its first word). Words (index w, over the whole file, in
    order): ``word_start``, ``word_end`` (their token's span), ``multiword`` (whether the token
    has several words), ``match_form`` (the lowercased FORM a region compares). Sentences:
    ``sentence_spans``, one (start, end) each; ``first_word``, the index of each one's word 1.
    ``sentences``: the file's, for messages (:meth:`token_line`).
    """

    sentences: Sequence[Sentence]
    text: str = ""
    token_start: list[int] = field(default_factory=list)
    token_end: list[int] = field(default_factory=list)
    token_form: list[str] = field(default_factory=list)
    token_first: list[int] = field(default_factory=list)
    word_start: list[int] = field(default_factory=list)
    word_end: list[int] = field(default_factory=list)
    multiword: list[bool] = field(default_factory=list)
    match_form: list[str] = field(default_factory=list)
    sentence_spans: list[tuple[int, int]] = field(default_factory=list)
    first_word: list[int] = field(default_factory=list)

    @property
    def source(self) -> str:
        """The file's name, for messages."""
        return self.sentences[0].source if self.sentences else "<sentences>"

    def token_line(self, t: int) -> int:
        """The line of token ``t``: its range line, or its word's line."""
        w = self.token_first[t]
        k = bisect.bisect_right(self.first_word, w) - 1
        sent = self.sentences[k]
        m = w - self.first_word[k] + 1
        return _range_line(sent, m) if self.multiword[w] else sent.line_of(m)


def _range_line(sent: Sentence, m: int) -> int:
    """The line of the multiword-token range of ``sent`` that starts at word ``m``."""
    lines = _LINE_END.split(sent.to_conll())
    lead = next(i for i, line in enumerate(lines) if line.removeprefix("\ufeff").strip())
    prefix = f"{m}-"
    return sent.lineno - lead + next(
        i for i, line in enumerate(lines) if line.removeprefix("\ufeff").startswith(prefix))


def _multiword_ranges(sent: Sentence) -> dict[int, tuple[int, str]]:
    """The multiword tokens of ``sent``, by first word: (last word, FORM)."""
    if sent.fmt == "malttab":
        return {}
    return {int(first): (int(last), form)
            for first, last, form in _RANGE.findall(sent.to_conll())}


def segment(sentences: Sequence[Sentence]) -> Segmentation:
    """The :class:`Segmentation` of ``sentences`` (a file's, in order). InputError naming the
    line of a token whose FORM is only space separators (it would have no characters)."""
    seg = Segmentation(sentences)
    pieces: list[str] = []
    starts, ends, multiword, match_form = (seg.word_start, seg.word_end, seg.multiword,
                                           seg.match_form)
    at = 0
    for sent in sentences:
        ranges = _multiword_ranges(sent)
        forms = sent.form
        seg.first_word.append(len(starts))
        sentence_start = at
        if not ranges and all(forms) and not _SPACES.search("".join(forms)):
            # every word its own token, no space to drop: the lists in bulk
            seg.token_first.extend(range(len(starts), len(starts) + len(forms)))
            ends_here = list(itertools.accumulate(map(len, forms), initial=at))
            starts.extend(ends_here[:-1])
            ends.extend(ends_here[1:])
            seg.token_start.extend(ends_here[:-1])
            seg.token_end.extend(ends_here[1:])
            seg.token_form.extend(forms)
            multiword.extend([False] * len(forms))
            match_form.extend(form.lower() for form in forms)
            pieces.extend(forms)
            at = ends_here[-1]
            seg.sentence_spans.append((sentence_start, at))
            continue
        n = len(forms)
        m = 1
        while m <= n:
            last, form = ranges.get(m) or (m, forms[m - 1])
            text = _SPACES.sub("", form)
            if not text:
                raise InputError(sent.source, _range_line(sent, m) if last > m else
                                 sent.line_of(m), f"FORM {form!r} is only space characters: "
                                 "the CoNLL 2018 alignment needs a character in every token")
            end = at + len(text)
            seg.token_start.append(at)
            seg.token_end.append(end)
            seg.token_form.append(text)
            seg.token_first.append(len(starts))
            pieces.append(text)
            if last == m:
                starts.append(at)
                ends.append(end)
                multiword.append(False)
                match_form.append(text.lower())
            else:
                for k in range(m, last + 1):
                    starts.append(at)
                    ends.append(end)
                    multiword.append(True)
                    match_form.append(forms[k - 1].lower())
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
        last = system.token_line(len(system.token_form) - 1) if system.token_form else None
        raise InputError(system.source, last,
                         f"the system's text ends at character {k + 1} of gold's (non-space "
                         f"characters; gold, {gold.source}:{gold.token_line(t)}, goes on with "
                         f"token {gold.token_form[t]!r}): the texts must be the same")
    t, c = where[0]
    if where[1] is None:
        raise InputError(system.source, system.token_line(t),
                         f"gold's text ({gold.source}) ends before character {k + 1} of the "
                         f"system's (non-space characters; the system's token "
                         f"{system.token_form[t]!r}): the texts must be the same")
    u, d = where[1]
    raise InputError(system.source, system.token_line(t),
                     f"the text differs from gold's at character {k + 1} (non-space "
                     f"characters): the system's token {system.token_form[t]!r} has "
                     f"{system.text[k]!r} as its character {c + 1}, gold's token "
                     f"{gold.token_form[u]!r} ({gold.source}:{gold.token_line(u)}) has "
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
