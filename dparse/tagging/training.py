"""Training a tagger (``parser: tagger``): each column in turn by the averaged perceptron.

The columns the tagger predicts are those of LEMMA, UPOS, XPOS and FEATS that the model reads
(``data.columns``, :mod:`dparse.columns`) and that the training file fills, and with UPOS its
draft pass (:mod:`dparse.tagging.features`). They are trained in the order of
:data:`~dparse.tagging.features.COLUMNS`, each for ``training.epochs`` epochs over the training
sentences in a seeded order (``training.seed``), reading the gold values of the columns before
it, except the draft UPOS that the UPOS pass reads: on the training sentences that is the
draft of a ``tagging.draft_folds``-fold jackknife (:mod:`dparse.folds`), as imperfect as the
draft of a new sentence. After each epoch the averaged weights tag dev, the columns before
predicted by their selected models, and the epoch with the best dev accuracy is kept (without
a dev file, the last).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dparse.columns import ColumnCounter, unread_columns
from dparse.config import ExperimentConfig
from dparse.conll import Sentence
from dparse.epochs import BestEpoch, TrainResult, read_unparsed
from dparse.errors import ConfigError, DparseError
from dparse.folds import fold_of_sentences, jackknife_splits
from dparse.tagging.features import (
    ATOMS,
    COLUMNS,
    DRAFT,
    TEMPLATES,
    UNKNOWN_CLASS,
    ambiguity_atoms,
    template_array,
    word_atoms,
)
from dparse.tagging.lemma_rules import RuleIndex, rule_of
from dparse.tagging.model import (
    ColumnModel,
    EncodedBatch,
    FeatureTable,
    TaggerModel,
    canonical_feats,
    csr,
    rule_class,
)
from dparse.tagging.sections import TaggingConfig
from dparse.tagging.tagger import ColumnWeights, train_column_epoch

log = logging.getLogger(__name__)


@dataclass
class ColumnEpochReport:
    """One epoch of one column: accuracy on the training words (as predicted during the
    epoch) and on dev (None without dev), seconds by stage."""

    column: str
    epoch: int
    train_accuracy: float
    dev_accuracy: float | None
    seconds: dict[str, float]

    def summary(self, dev_file: str | None, punct: str) -> str:
        """One line, like the parsers' epoch reports (``punct`` does not apply to tags)."""
        del punct
        dev = (f"dev {self.dev_accuracy:.2f}" if self.dev_accuracy is not None
               else "no dev file" if not dev_file else "dev n/a")
        secs = " ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return (f"{self.column} epoch {self.epoch}: train {self.train_accuracy:.2f}; {dev}; "
                f"{secs}")


def gold_value(column: str, form: str, lemma: str, upos: str, xpos: str, feats: str) -> Any:
    """A word's gold class of ``column``: its UPOS for the draft, FEATS canonical, the lemma
    rule (None for a ``_`` lemma)."""
    if column == "lemma":
        return rule_of(form, lemma) if lemma != "_" else None
    if column == "feats":
        return canonical_feats(feats)
    return upos if column == DRAFT else xpos if column == "xpos" else upos


def _gold_rows(sentences: Sequence[Sentence], column: str) -> list[Any]:
    return [gold_value(column, *word) for s in sentences
            for word in zip(s.form, s.lemma, s.upos, s.xpos, s.feats, strict=True)]


def gold_values(sentences: Sequence[Sentence], class_ids: dict[str, dict[Any, int]]
                ) -> np.ndarray:
    """int32 [T, len(COLUMNS)]: the gold class ids of the words (-1: none, or unknown)."""
    T = sum(len(s) for s in sentences)
    gold = np.full((T, len(COLUMNS)), -1, dtype=np.int32)
    for name, ids in class_ids.items():
        gold[:, COLUMNS.index(name)] = [ids.get(v, -1) if v is not None else -1
                                        for v in _gold_rows(sentences, name)]
    return gold


def predicted_columns(cfg: ExperimentConfig, train: list[Sentence],
                      dev: list[Sentence]) -> list[str]:
    """The columns the tagger learns: read by the model and filled in the training file,
    with UPOS its draft."""
    unread, reasons = unread_columns(cfg.data.columns, train, dev)
    for reason in reasons:
        log.warning("%s: %s", cfg.name, reason)
    shares = ColumnCounter.of(train).shares()
    columns = [c for c in COLUMNS if c != DRAFT and c not in unread and shares[c] > 0]
    if not columns:
        raise DparseError(f"{cfg.data_path(cfg.data.train)}: the training file fills none of "
                          "the columns a tagger predicts (LEMMA, UPOS, XPOS, FEATS)")
    return [DRAFT, *columns] if "upos" in columns and cfg.tagging.draft_folds else columns


def _classes(counts: Counter) -> list:
    """Classes by descending count, then by value (deterministic)."""
    return [v for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))]


def ambiguity_classes(sentences: Sequence[Sentence], forms: Sequence[str],
                      columns: Sequence[str], min_count: int) -> list[str]:
    """Each form's ambiguity class in ``sentences``: the classes of the first column of
    ``columns`` but the lemma that its words took there (UPOS for the draft), joined by ``+``;
    :data:`UNKNOWN_CLASS` for a form seen fewer than ``min_count`` times (or none)."""
    first = next((c for c in columns if c != "lemma"), None)
    if first is None:
        return [UNKNOWN_CLASS] * len(forms)
    index = {f: i for i, f in enumerate(forms)}
    seen: list[set[str]] = [set() for _ in forms]
    counts = [0] * len(forms)
    for form, value in zip((f for s in sentences for f in s.form), _gold_rows(sentences, first),
                           strict=True):
        t = index.get(form)
        if t is not None:
            counts[t] += 1
            seen[t].add(str(value))
    return ["+".join(sorted(x)) if n >= min_count else UNKNOWN_CLASS
            for x, n in zip(seen, counts, strict=True)]


def training_batch(model: TaggerModel, sentences: Sequence[Sentence], columns: Sequence[str],
                   tc: TaggingConfig) -> EncodedBatch:
    """The training sentences encoded for training: with ``tc.ambiguity_folds`` k >= 2, the
    words of fold k (:mod:`dparse.folds`) read the ambiguity classes that the other folds give
    their forms (a copy of the known types each), so that training sees words unseen
    elsewhere, and how often, as tagging new text does; otherwise as :meth:`encode`."""
    batch = model.encode(sentences)
    folds = tc.ambiguity_folds
    if not folds:
        return batch
    amb = ATOMS.index("amb")
    tables = []
    for rest, _ in jackknife_splits(sentences, folds):
        table = model.atoms.copy()
        table[:, amb] = ambiguity_atoms(ambiguity_classes(rest, model.forms, columns,
                                                          tc.ambiguity_min_count))
        tables.append(table)
    word_fold = np.repeat(fold_of_sentences(len(sentences), folds), [len(s) for s in sentences])
    V = len(model.forms)
    tok_type = (batch.tok_type + V * word_fold).astype(np.int32)
    return EncodedBatch(tok_type, [], np.concatenate(tables), batch.sent_ptr, folds)


def build_model(train: Sequence[Sentence], columns: list[str], tc: TaggingConfig
                ) -> tuple[TaggerModel, dict[str, dict[Any, int]]]:
    """The untrained tagger of ``train`` (see :mod:`dparse.tagging.model`): known types and
    their atoms, classes, candidates and UPOS compatibility of every column, lemma lexicon;
    and the class ids of every column (lemma: by rule)."""
    type_counts: Counter[str] = Counter(f for s in train for f in s.form)
    forms = list(type_counts)  # first occurrence order
    type_ids = {f: i for i, f in enumerate(forms)}
    tok_types = [type_ids[f] for s in train for f in s.form]
    upos = [u for s in train for u in s.upos]
    counts: dict[str, Counter] = {}
    seen: dict[str, list[set]] = {}
    pairs: dict[str, set[tuple[str, Any]]] = {}
    for c in columns:
        counts[c], seen[c], pairs[c] = Counter(), [set() for _ in forms], set()
        for t, u, value in zip(tok_types, upos, _gold_rows(train, c), strict=True):
            if value is not None:
                counts[c][value] += 1
                seen[c][t].add(value)
                pairs[c].add((u, value))
    ambiguity = ambiguity_classes(train, forms, columns, tc.ambiguity_min_count)
    class_ids: dict[str, dict[Any, int]] = {}
    column_models = []
    for c in columns:
        classes = _classes(counts[c])
        ids = class_ids[c] = {v: k for k, v in enumerate(classes)}
        # a frequent type's candidates: the classes it was seen with; a rare one's: any class
        # (lemmas: the rules that apply to its form)
        lists = [sorted(ids[v] for v in seen[c][t])
                 if type_counts[form] >= tc.dictionary_min_count else []
                 for t, form in enumerate(forms)]
        if c == "lemma":
            rare = [t for t, form in enumerate(forms)
                    if type_counts[form] < tc.dictionary_min_count]
            rule_ptr, rules = RuleIndex(classes).applicable_many([forms[t] for t in rare])
            for k, t in enumerate(rare):
                lists[t] = rules[rule_ptr[k]:rule_ptr[k + 1]]
        ptr, cand = csr(lists)
        compat = np.zeros((0, len(classes)), dtype=np.uint8)
        if c not in (DRAFT, "upos") and "upos" in class_ids:
            compat = np.zeros((len(class_ids["upos"]), len(classes)), dtype=np.uint8)
            for u, v in pairs[c]:
                if u in class_ids["upos"]:
                    compat[class_ids["upos"][u], ids[v]] = 1
        names = [rule_class(r) for r in classes] if c == "lemma" else classes
        column_models.append(ColumnModel(c, names, template_array(TEMPLATES[c], c),
                                         FeatureTable.empty(), ptr, cand, compat))
    lexicon: dict[tuple[str, str], str] = {}
    if tc.lexicon and "lemma" in columns:
        lemma_counts = Counter((f, u, lm) for s in train
                               for f, u, lm in zip(s.form, s.upos, s.lemma, strict=True)
                               if lm != "_")
        best: dict[tuple[str, str], int] = {}
        for (form, u, lemma), n in sorted(lemma_counts.items()):
            if n > best.get((form, u), 0):
                best[(form, u)], lexicon[(form, u)] = n, lemma
    model = TaggerModel(forms, word_atoms(forms, ambiguity),
                        column_models, lexicon, tc.dictionary_min_count)
    return model, class_ids


def accuracy(values: np.ndarray, gold: np.ndarray) -> float | None:
    """Share of the words with a gold class that got it, in percent (None: no such word)."""
    known = gold >= 0
    return 100.0 * float((values[known] == gold[known]).mean()) if known.any() else None


def train_column(model: TaggerModel, c: int, batch: EncodedBatch, values: np.ndarray,
                 gold: np.ndarray, epochs: int, rng: np.random.Generator, shuffle: bool,
                 dev: tuple[EncodedBatch, np.ndarray, np.ndarray] | None = None,
                 on_epoch: Callable[[ColumnEpochReport], None] | None = None) -> int:
    """Train column ``model.columns[c]`` for ``epochs`` epochs on ``batch`` (``values``: the
    columns it reads, [T, len(COLUMNS)]; ``gold``: its gold ids [T]) and set its weights to the
    averaged weights of the best epoch on ``dev`` (batch, values as predicted so far, gold
    [T_dev, len(COLUMNS)]; None: the last epoch); returns that epoch."""
    col = model.columns[c]
    k = col.index
    if col.name == DRAFT:  # right to left, as TaggerModel.predict_column runs it
        perm = batch.mirror_permutation()
        batch, values, gold = batch.mirrored(), values[perm], gold[perm]
    weights = ColumnWeights()
    counter = np.zeros(1, dtype=np.float64)
    candidates = model.candidates(col, batch)
    n_sentences = len(batch.sent_ptr) - 1
    best = BestEpoch()
    gold = np.ascontiguousarray(gold, dtype=np.int32)
    values[:, k] = -1  # no class given: every word is predicted
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        order = (rng.permutation(n_sentences) if shuffle else np.arange(n_sentences))
        right = train_column_epoch(
            model.atoms, batch.atoms_extra, batch.tok_type, batch.sent_ptr, values, k,
            col.templates, *candidates, col.compat, col.cond, len(col.classes),
            gold, order.astype(np.int32), weights, counter)
        if dev is None and epoch < epochs:  # only the last epoch's average is kept
            averaged = None
        else:
            averaged = FeatureTable(*weights.averaged(max(counter[0], 1.0)))
        seconds = {"train": time.perf_counter() - t0}
        dev_accuracy = None
        if dev is not None:
            t0 = time.perf_counter()
            dev_batch, dev_values, dev_gold = dev
            model.predict_column(c, dev_batch, dev_values, averaged)
            dev_accuracy = accuracy(dev_values[:, k], dev_gold[:, k])
            seconds["dev"] = time.perf_counter() - t0
        if averaged is not None:
            best.offer(epoch, averaged, dev_accuracy)
        if on_epoch is not None:
            known = max(int((gold >= 0).sum()), 1)
            on_epoch(ColumnEpochReport(col.name, epoch, 100.0 * right / known, dev_accuracy,
                                       seconds))
    col.weights = best.weights
    if dev is not None:  # the selected weights predict dev for the later columns
        model.predict_column(c, dev[0], dev[1])
    return best.epoch


def jackknife_draft(train: Sequence[Sentence], tc: TaggingConfig, epochs: int, seed: int,
                    shuffle: bool) -> list[str]:
    """The draft UPOS of every training word by a ``tc.draft_folds``-fold jackknife: fold k
    drafted by a draft pass trained for ``epochs`` epochs on the other folds."""
    drafts: list[str] = []
    for rest, held in jackknife_splits(train, tc.draft_folds):
        sub, ids = build_model(rest, [DRAFT], tc)
        gold = gold_values(rest, ids)
        train_column(sub, 0, training_batch(sub, rest, [DRAFT], tc), gold.copy(), gold[:, 0],
                     epochs, np.random.default_rng(seed), shuffle)
        batch = sub.encode(held)
        values = np.full((len(batch.tok_type), len(COLUMNS)), -1, dtype=np.int32)
        sub.predict_column(0, batch, values)
        classes = sub.columns[0].classes
        drafts += [classes[v] for v in values[:, 0].tolist()]
    return drafts


def train_tagger(cfg: ExperimentConfig, train: list[Sentence], dev: list[Sentence],
                 on_epoch: Callable[[ColumnEpochReport], None] | None = None) -> TrainResult:
    """Train the tagger of ``cfg`` on ``train``, selecting each column's epoch on ``dev``
    (may be empty)."""
    start = time.perf_counter()
    tc, tr = cfg.tagging, cfg.training
    columns = predicted_columns(cfg, train, dev)
    model, class_ids = build_model(train, columns, tc)
    batch = training_batch(model, train, columns, tc)
    gold = gold_values(train, class_ids)
    dev_part = None
    if dev:
        dev_gold = gold_values(dev, class_ids)
        dev_part = (model.encode(dev), np.full_like(dev_gold, -1), dev_gold)
    rng = np.random.default_rng(tr.seed)
    result = TrainResult(model, 0)
    for c, col in enumerate(model.columns):
        values = gold.copy()
        if col.name == "upos" and DRAFT in class_ids:
            draft = jackknife_draft(train, tc, result.best_epoch, tr.seed, tr.shuffle)
            values[:, COLUMNS.index(DRAFT)] = [class_ids[DRAFT].get(t, -1) for t in draft]
        epoch = train_column(model, c, batch, values, gold[:, col.index], tr.epochs, rng,
                             tr.shuffle, dev_part, on_epoch)
        log.info("%s: epoch %d kept", col.name, epoch)
        if c == 0:
            result.best_epoch = epoch
    result.seconds = time.perf_counter() - start
    return result


def train(cfg: ExperimentConfig, progress: bool = False,
          on_epoch: Callable[[Any], None] | None = None) -> TrainResult:
    """Train the tagger of a ``parser: tagger`` config on its data section's files."""
    del progress  # a column's epoch takes seconds: its report line is the progress
    if cfg.training.learner != "perceptron":
        raise ConfigError("the tagger trains with training.learner: perceptron")
    train_sents = read_unparsed(cfg, cfg.data.train)
    dev = read_unparsed(cfg, cfg.data.dev) if cfg.data.dev else []
    return train_tagger(cfg, train_sents, dev, on_epoch)
