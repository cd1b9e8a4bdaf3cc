"""A trained tokenizer and how it tokenizes: raw text in, sentences of tokens and words out.

:meth:`TokenizerModel.tokenize` labels every character (:mod:`dparse.tokenizing.segmenter`),
cuts the text into sentences of tokens (every character of the text is in a token or in the
white space after one, the white space before the first token aside), and gives each token its
words (:mod:`dparse.tokenizing.expander`). :func:`to_conllu` writes them as CoNLL-U from which
the text is rebuilt exactly (:func:`dparse.tokenizing.rawtext.rebuild_text`).

Files of a model directory: ``tokenizer.bin`` (``weights`` float32 [2 ** bits * 3], the
averaged perceptron's; ``vocab`` uint64, the hash set of the lowered training tokens),
``tokenizer.json`` (the expander, ``format_version``) and ``templates.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dparse.errors import DparseError
from dparse.modeldir import check_model_dir, load_arrays, load_meta, save_arrays
from dparse.templates import TOKENIZER, check_templates, write_templates
from dparse.tokenizing.chars import LINE_BREAKS, char_arrays, plane_tables
from dparse.tokenizing.expander import Expander
from dparse.tokenizing.rawtext import spacing_misc
from dparse.tokenizing.segmenter import INSIDE, SENTENCE_END, segment

FORMAT_VERSION = 1
ARRAYS_FILE = "tokenizer.bin"
JSON_FILE = "tokenizer.json"


@dataclass
class TokenizedSentence:
    """One sentence of a tokenized text: its ``tokens`` (text spans), each token's ``words``,
    the white space after each token (``after``), ``before`` (white space before the first
    token of the text: only the first sentence has any), and whether it starts a document or a
    paragraph (``newdoc``, ``newpar``)."""

    tokens: list[str] = field(default_factory=list)
    words: list[list[str]] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    before: str = ""
    newdoc: bool = False
    newpar: bool = False

    @property
    def text(self) -> str:
        """The sentence's text: its tokens and the white space between them."""
        pieces = []
        for k, token in enumerate(self.tokens):
            pieces.append(token)
            if k + 1 < len(self.tokens):
                pieces.append(self.after[k])
        return "".join(pieces)


def token_bounds(labels: np.ndarray, cls_white: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The [start, end) of every token from the labels of :func:`segment` (int8 [N]) and the
    white-space mask (bool [N]): int64 arrays, in order."""
    n = len(labels)
    ends = np.flatnonzero(labels > INSIDE) + 1
    begins = np.zeros(n, dtype=bool)
    if n:
        begins[0] = not cls_white[0]
        begins[1:] = ~cls_white[1:] & (cls_white[:-1] | (labels[:-1] > INSIDE))
    return np.flatnonzero(begins).astype(np.int64), ends.astype(np.int64)


class TokenizerModel:
    """A tokenizer: ``weights`` float32 [B * 3], ``vocab`` uint64 [S] (a hash set:
    :func:`dparse.tokenizing.segmenter.vocab_table`), ``expander``."""

    def __init__(self, weights: np.ndarray, vocab: np.ndarray, expander: Expander) -> None:
        self.weights = weights
        self.vocab = vocab
        self.expander = expander
        plane_tables()  # made here, with the model, not while the first text is tokenized

    def labels(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The label of every character of ``text`` (:func:`segment`) and its class array."""
        arrays = char_arrays(text)
        return segment(arrays.low, arrays.cls, self.weights, self.vocab), arrays.cls

    def tokenize(self, text: str) -> list[TokenizedSentence]:
        """The sentences of ``text`` (module doc); a text of white space alone has none."""
        labels, cls = self.labels(text)
        white = cls <= 2  # SPACE, NEWLINE
        starts, ends = token_bounds(labels, white)
        if not len(starts):
            return []
        sentence_ends = (np.flatnonzero(labels[ends - 1] == SENTENCE_END) + 1).tolist()
        gaps = [text[e:s] for e, s in zip(ends[:-1].tolist(), starts[1:].tolist(), strict=True)]
        gaps.append(text[int(ends[-1]):])
        forms = [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        expanded = {form: self.expander.words(form) for form in set(forms)}  # once a form
        sentences: list[TokenizedSentence] = []
        first = 0
        for last in sentence_ends:
            gap = gaps[first - 1] if first else text[:int(starts[0])]
            breaks = sum(gap.count(c) for c in LINE_BREAKS) - gap.count("\r\n")
            tokens = forms[first:last]
            sentences.append(TokenizedSentence(
                tokens, [expanded[f] for f in tokens], gaps[first:last],
                before=gap if not first else "", newdoc=not first or breaks >= 2,
                newpar=breaks == 1))
            first = last
        return sentences

    def write_files(self, directory: Path) -> None:
        """Write ``tokenizer.bin``, ``tokenizer.json`` and ``templates.json``."""
        save_arrays(directory / ARRAYS_FILE, weights=self.weights, vocab=self.vocab)
        meta = {"format_version": FORMAT_VERSION, "expander": self.expander.as_dict()}
        (directory / JSON_FILE).write_text(json.dumps(meta, ensure_ascii=False, sort_keys=True),
                                           encoding="utf-8")
        write_templates(directory, TOKENIZER)

    @classmethod
    def load(cls, directory: Path, checked: bool = False) -> TokenizerModel:
        """The tokenizer in ``directory`` (a tokenizer model directory, or a pipeline model's
        ``tokenizer/``); ``checked``: its manifest was checked already."""
        directory = Path(directory)
        if not checked:
            check_model_dir(directory)
        meta = load_meta(directory, JSON_FILE, "tokenizer", FORMAT_VERSION)
        check_templates(directory, TOKENIZER)
        arrays = load_arrays(directory / ARRAYS_FILE)
        try:
            weights, vocab = arrays["weights"], arrays["vocab"]
        except KeyError as exc:
            raise DparseError(f"{directory}: tokenizer array {exc} missing; retrain it"
                              ) from None
        return cls(weights, vocab, Expander.from_dict(meta["expander"]))


def conllu_lines(sentences: list[TokenizedSentence]) -> Iterator[str]:
    """CoNLL-U of tokenized sentences, a string per sentence (with its blank line): ``#
    newdoc`` / ``# newpar`` where the text starts a document / paragraph, ``# sent_id``
    (1, 2, ... in order), ``# text``, a range line per multiword token, the spacing marks of
    :func:`dparse.tokenizing.rawtext.spacing_misc` on each token's line; the other columns
    ``_``."""
    for number, sent in enumerate(sentences, start=1):
        lines = []
        if sent.newdoc:
            lines.append("# newdoc")
        if sent.newpar or sent.newdoc:
            lines.append("# newpar")
        lines.append(f"# sent_id = {number}")
        lines.append(f"# text = {sent.text}")  # no line break: a line break ends a sentence
        m = 1
        for k, (form, words) in enumerate(zip(sent.tokens, sent.words, strict=True)):
            misc = spacing_misc(sent.after[k], sent.before if k == 0 else "")
            misc_text = "|".join(misc) or "_"
            if len(words) > 1:
                lines.append(f"{m}-{m + len(words) - 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc_text}")
                lines.extend(f"{m + i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_" for i, w in enumerate(words))
            else:
                lines.append(f"{m}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc_text}")
            m += len(words)
        lines.append("")
        yield "\n".join(lines) + "\n"

