"""Training a tokenizer (``parser: tokenizer`` configs) from a UD treebank's tokens and
sentences.

The training file is laid out as text (:func:`dparse.tokenizing.rawtext.layout`: tokens, their
spacing marks, sentence and paragraph breaks); each character gets its gold label (the last
character of a token ``TOKEN_END``, of a sentence ``SENTENCE_END``, the others ``INSIDE``) and
the averaged perceptron (:func:`dparse.tokenizing.segmenter.train_epoch`) learns them for
``training.epochs`` epochs over the sentences, shuffled by ``training.seed``; the training
sentences fall into ``tokenizing.vocab_folds`` folds (sentence k into fold k mod F), each
reading the vocabulary of the other folds' tokens, and the model reads the vocabulary of all.
After each epoch the averaged weights tokenize dev's layout; the epoch with the best mean of
dev's token and sentence F1 (:func:`segmentation_scores`) is kept (without dev, the last). The
expander learns from the training tokens (:func:`dparse.tokenizing.expander.learn_expander`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dparse.conll import Sentence
from dparse.epochs import BestEpoch, TrainResult, read_unparsed
from dparse.errors import ConfigError, DparseError
from dparse.sections import ExperimentConfig
from dparse.tokenizing.chars import CharArrays, char_arrays
from dparse.tokenizing.expander import learn_expander
from dparse.tokenizing.model import TokenizerModel, token_bounds
from dparse.tokenizing.rawtext import Layout, layout
from dparse.tokenizing.segmenter import (
    INSIDE,
    LOWERCASE_MARK,
    NEWLINE,
    SENTENCE_END,
    TOKEN_END,
    segment,
    token_hashes,
    train_epoch,
    vocab_table,
)


@dataclass
class TokenizerEpochReport:
    """One epoch: the share of training characters labeled right during it, dev's token and
    sentence F1 (None without dev), seconds by stage."""

    epoch: int
    train_accuracy: float
    dev_tokens: float | None
    dev_sentences: float | None
    seconds: dict[str, float]

    def summary(self, dev_file: str | None, punct: str) -> str:
        """One line, like the parsers' epoch reports (``punct`` does not apply)."""
        del punct
        dev = (f"dev Tokens F1 {self.dev_tokens:.2f} Sentences F1 {self.dev_sentences:.2f}"
               if self.dev_tokens is not None and self.dev_sentences is not None
               else "no dev file" if not dev_file else "dev n/a")
        secs = " ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return f"epoch {self.epoch}: train {self.train_accuracy:.2f}; {dev}; {secs}"


@dataclass
class GoldText:
    """A file laid out as text, with its character arrays and gold labels (int8 [N], -1 on
    white space)."""

    layout: Layout
    chars: CharArrays
    labels: np.ndarray


def gold_text(sentences: list[Sentence]) -> GoldText:
    """The :class:`GoldText` of a file's sentences."""
    lay = layout(sentences)
    chars = char_arrays(lay.text)
    labels = np.where(chars.cls <= 2, -1, INSIDE).astype(np.int8)
    if lay.token_spans:
        ends = np.array([e for _, e in lay.token_spans], dtype=np.int64) - 1
        labels[ends] = np.where(labels[ends] >= 0, TOKEN_END, -1)
        last = ends[np.array(lay.sentence_ends, dtype=np.int64)]
        labels[last] = np.where(labels[last] >= 0, SENTENCE_END, -1)
    return GoldText(lay, chars, labels)


def _f1(gold: np.ndarray, system: np.ndarray) -> float | None:
    """F1 (percent) of two sets of span keys; None when both are empty."""
    if not len(gold) and not len(system):
        return None
    correct = len(np.intersect1d(gold, system, assume_unique=True))
    return 200.0 * correct / (len(gold) + len(system))


def _spans(labels: np.ndarray, white: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keys (start * (N + 1) + end) of the tokens and of the sentences that ``labels`` give."""
    n = len(labels)
    starts, ends = token_bounds(labels, white)
    tokens = starts * (n + 1) + ends
    last = labels[ends - 1] == SENTENCE_END if len(ends) else np.zeros(0, dtype=bool)
    first = np.concatenate(([True], last[:-1])) if len(last) else last
    sentences = starts[first] * (n + 1) + ends[last]  # the text's last token ends a sentence
    return tokens, sentences


def segmentation_scores(gold: np.ndarray, system: np.ndarray, white: np.ndarray
                        ) -> tuple[float | None, float | None]:
    """Tokens F1 and Sentences F1 of ``system`` labels against ``gold`` labels of one text
    (int8 [N] each, white space -1; ``white`` bool [N])."""
    gold_tokens, gold_sentences = _spans(gold, white)
    system_tokens, system_sentences = _spans(system, white)
    return _f1(gold_tokens, system_tokens), _f1(gold_sentences, system_sentences)


def _read(cfg: ExperimentConfig, relative: str) -> list[Sentence]:
    sentences = read_unparsed(cfg, relative)
    if sentences[0].fmt != "conllu":
        raise DparseError(f"{cfg.data_path(relative)}: a tokenizer trains on CoNLL-U (its "
                          "tokens and spacing)")
    return sentences


def train(cfg: ExperimentConfig, progress: bool = False,
          on_epoch: Callable[[TokenizerEpochReport], None] | None = None) -> TrainResult:
    """Train the tokenizer of a ``parser: tokenizer`` config on its data section's files."""
    del progress  # an epoch takes seconds: its report line is the progress
    if cfg.training.learner != "perceptron":
        raise ConfigError("the tokenizer trains with training.learner: perceptron")
    start = time.perf_counter()
    train_text = gold_text(_read(cfg, cfg.data.train))
    dev_text = gold_text(_read(cfg, cfg.data.dev)) if cfg.data.dev else None
    return train_tokenizer(cfg, train_text, dev_text, on_epoch, start)


def line_places(unit_starts: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """The place of each training unit (sentence) in its line: how many units of the line
    come before it (int64 [K]; ``unit_starts`` int64 [K] ascending, ``cls`` the text's
    classes)."""
    breaks = np.flatnonzero(cls == NEWLINE)
    line = np.searchsorted(breaks, unit_starts)  # the units of one line share the number
    return np.ascontiguousarray(np.arange(len(unit_starts)) - np.searchsorted(line, line),
                                dtype=np.int64)


def train_tokenizer(cfg: ExperimentConfig, train_text: GoldText, dev_text: GoldText | None,
                    on_epoch: Callable[[TokenizerEpochReport], None] | None,
                    start: float) -> TrainResult:
    """The epochs of :func:`train` on laid-out files."""
    lay, chars = train_text.layout, train_text.chars
    spans = np.array(lay.token_spans, dtype=np.int64).reshape(-1, 2)
    hashes = token_hashes(chars.low, np.ascontiguousarray(spans[:, 0]),
                          np.ascontiguousarray(spans[:, 1]))
    # the tokens training wrote in lower case also stand in the vocabulary, their hashes
    # marked (LOWERCASE_MARK): the features ask whether a capitalized word is usually lower
    lower = np.array([t.form == t.form.lower() != t.form.upper() for t in lay.tokens],
                     dtype=bool).reshape(-1)
    marked = np.where(lower, hashes ^ np.uint64(LOWERCASE_MARK), hashes)
    vocab = vocab_table(np.unique(np.concatenate([hashes, marked])))
    # the training units: each sentence, from its first token to the next one's; sentence k
    # is in fold k mod F and reads the vocabulary of the other folds' tokens
    ends = np.array(lay.sentence_ends, dtype=np.int64)
    firsts = np.concatenate(([0], ends[:-1] + 1))
    unit_starts = spans[firsts, 0]
    units = np.stack([unit_starts, np.append(unit_starts[1:], len(lay.text))], axis=1)
    units = np.ascontiguousarray(units, dtype=np.int64)
    places = line_places(unit_starts, chars.cls)
    count = cfg.tokenizing.vocab_folds
    folds = np.arange(len(units), dtype=np.int64) % count
    token_fold = np.repeat(folds, np.diff(np.concatenate(([0], ends + 1))))
    fold_vocabs = [vocab_table(np.unique(np.concatenate([hashes[token_fold != f],
                                                         marked[token_fold != f]])))
                   for f in range(count)]
    vocabs = np.ascontiguousarray(np.concatenate(fold_vocabs), dtype=np.uint64)
    vocab_ptr = np.cumsum([0, *map(len, fold_vocabs)]).astype(np.int64)
    size = (1 << cfg.tokenizing.bits) * 3
    weights, totals = np.zeros(size), np.zeros(size)
    clock = 1
    rng = np.random.default_rng(cfg.training.seed)
    model = TokenizerModel(np.zeros(size, dtype=np.float32), vocab,
                           learn_expander(lay.tokens, cfg.tokenizing.expander_min_count))
    best = BestEpoch()
    result = TrainResult(model, 0)
    for epoch in range(1, cfg.training.epochs + 1):
        tick = time.perf_counter()
        order = rng.permutation(len(units)) if cfg.training.shuffle else np.arange(len(units))
        clock, seen, errors = train_epoch(chars.low, chars.cls, train_text.labels,
                                          np.ascontiguousarray(units[order]),
                                          np.ascontiguousarray(folds[order]),
                                          np.ascontiguousarray(places[order]), weights, totals,
                                          clock, vocabs, vocab_ptr)
        averaged = (weights - totals / clock).astype(np.float32)
        seconds = {"train": time.perf_counter() - tick}
        dev_tokens = dev_sentences = None
        if dev_text is not None:
            tick = time.perf_counter()
            labels = segment(dev_text.chars.low, dev_text.chars.cls, averaged, vocab)
            dev_tokens, dev_sentences = segmentation_scores(dev_text.labels, labels,
                                                            dev_text.chars.cls <= 2)
            seconds["dev"] = time.perf_counter() - tick
        score = (None if dev_tokens is None or dev_sentences is None
                 else (dev_tokens + dev_sentences) / 2)
        report = TokenizerEpochReport(epoch, 100.0 * (seen - errors) / max(seen, 1),
                                      dev_tokens, dev_sentences, seconds)
        best.close_epoch(result, report, averaged, score, on_epoch)
    return best.finish(model, result, start)
