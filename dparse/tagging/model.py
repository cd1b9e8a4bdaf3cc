"""A trained tagger: UPOS, XPOS, FEATS and lemmas predicted word by word, in that order.

Each predicted column is a :class:`ColumnModel`, a greedy left-to-right classifier
(:mod:`dparse.tagging.tagger`) over the templates of :mod:`dparse.tagging.features`; later columns
read the values of earlier ones (predicted, or kept from the input), and UPOS reads a draft UPOS
pass of the words to its right. Lemmas are edit rules (:mod:`dparse.tagging.lemma_rules`)
classified the same way, except that a (form, UPOS) pair the training data lemmatized takes its
most frequent lemma there (the lexicon) and is not classified. Predicted FEATS are in UD's
canonical order (:func:`canonical_feats`).

The classes a word may take (its candidates): for a word type seen at least
``dictionary_min_count`` times in training, the classes it had there; otherwise for a lemma the
rules that apply to its form, and for the other columns every class. XPOS, FEATS and lemma
candidates are then kept only if the training data paired them with the word's UPOS.

Files of a tagger model directory: ``tagger.bin`` (an aligned array file of
:func:`dparse.modeldir.save_arrays`, memory-mapped when loaded: each column's feature table of
float32 weights, see :mod:`dparse.tagging.tagger`, the known types' candidates and UPOS pairings,
and their atoms), ``tagger.json`` (forms, classes, lexicon) and ``templates.json`` (the version
of the tagger's features, dparse/tagging/features.py: a model of another version is refused,
:mod:`dparse.templates`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dparse.collector import collector_paused
from dparse.conll import Sentence
from dparse.errors import DparseError
from dparse.modeldir import check_model_dir, load_arrays, load_meta, save_arrays
from dparse.tagging import TAG_MODES
from dparse.tagging.features import (
    COLUMNS,
    DRAFT,
    word_atoms,
)
from dparse.tagging.lemma_rules import Rule, RuleIndex, apply_rule
from dparse.tagging.tagger import CheckedTable, tag_column
from dparse.templates import TAGGER, check_templates, write_templates
from dparse.timer import ParseTimer

TAGGER_JSON = "tagger.json"
TAGGER_ARRAYS = "tagger.bin"
FORMAT_VERSION = 2  # 2: exact feature tables (1: hashed weight vectors)
UPOS = COLUMNS.index("upos")
BATCH_SENTENCES = 4096  # sentences tagged in one call of the extension (the probe cache of
# one-word features is per call: a larger batch reuses it more; 4096 tags en_ewt test about 15%
# faster than 1024, in CPU time)


def canonical_feats(feats: str) -> str:
    """FEATS in UD's canonical order: features sorted by name, case-insensitively (``_``
    stays ``_``)."""
    if feats in ("_", ""):
        return "_"
    return "|".join(sorted(feats.split("|"), key=lambda f: (f.lower(), f)))


def rule_class(rule: Rule) -> str:
    """A lemma rule as the lemma column's class string (a JSON list)."""
    return json.dumps(list(rule), ensure_ascii=False)


def rule_from_class(text: str) -> Rule:
    """The lemma rule of a class string of :func:`rule_class`."""
    return tuple(json.loads(text))  # type: ignore[return-value]


def csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Lists of ints as (ptr [len + 1], ids) int32 arrays."""
    ptr = np.zeros(len(lists) + 1, dtype=np.int32)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    ids = (np.concatenate([np.asarray(x, dtype=np.int32) for x in lists if len(x)])
           if ptr[-1] else np.zeros(0, dtype=np.int32))
    return ptr, ids


@dataclass
class EncodedBatch:
    """Sentences as :mod:`dparse.tagging.tagger` reads them: ``tok_type`` int32 [T] (known
    types, then ``extra``: the batch's other forms), their atoms ``atoms_extra`` and the
    sentence offsets ``sent_ptr`` int32 [sentences + 1]. A training batch has no other forms
    but ``copies`` copies of the known types, each with the ambiguity classes of a jackknife
    fold (:func:`dparse.tagging.training.training_batch`)."""

    tok_type: np.ndarray
    extra: list[str]
    atoms_extra: np.ndarray
    sent_ptr: np.ndarray
    copies: int = 0  # training: the extra types are this many copies of the known types

    def mirrored(self) -> EncodedBatch:
        """The batch with the words of each sentence in reverse order."""
        return dataclasses.replace(self, tok_type=self.tok_type[self.mirror_permutation()])

    def mirror_permutation(self) -> np.ndarray:
        """int64 [T]: word j of :meth:`mirrored` is word ``perm[j]`` of the batch."""
        ptr = self.sent_ptr.astype(np.int64)
        return np.repeat(ptr[:-1] + ptr[1:] - 1, np.diff(ptr)) - np.arange(ptr[-1])


class FeatureTable(NamedTuple):
    """A column's weights as :func:`dparse.tagging.tagger.tag_column` reads them: ``slots``
    uint64 [S, 2], ``entry_class`` int32 [E], ``entry_weight`` float32 [E] (see
    :mod:`dparse.tagging.tagger`)."""

    slots: np.ndarray
    entry_class: np.ndarray
    entry_weight: np.ndarray

    @classmethod
    def empty(cls) -> FeatureTable:
        """No weights (every class scores 0)."""
        return cls(np.zeros((2, 2), dtype=np.uint64), np.zeros(0, dtype=np.int32),
                   np.zeros(0, dtype=np.float32))


@dataclass
class ColumnModel:
    """One predicted column: ``name`` (of :data:`COLUMNS`), its ``classes`` (strings; for
    the lemma, rules as JSON lists), its feature ``templates`` (int32 [F, 7], see
    :func:`dparse.tagging.features.template_array`; saved with the model, which then tags
    alike whatever the templates of later versions), its ``weights``, the known types'
    candidates (``known_ptr`` / ``known_ids``, CSR over the type ids) and ``compat`` uint8
    [UPOS classes, classes] (empty for UPOS itself)."""

    name: str
    classes: list[str]
    templates: np.ndarray
    weights: FeatureTable
    known_ptr: np.ndarray
    known_ids: np.ndarray
    compat: np.ndarray

    @property
    def index(self) -> int:
        return COLUMNS.index(self.name)

    @property
    def cond(self) -> int:
        return -1 if self.compat.shape[0] == 0 else UPOS


class TaggerModel:
    """A trained tagger (see the module docstring): ``forms`` of the known types (their ids
    are their positions), their ``atoms``, the predicted ``columns`` in order, the lemma
    rules (the classes of the lemma column) and the (form, UPOS) -> lemma ``lexicon``."""

    def __init__(self, forms: list[str], atoms: np.ndarray, columns: list[ColumnModel],
                 lexicon: dict[tuple[str, str], str], dictionary_min_count: int) -> None:
        self.forms = forms
        self.type_ids = {form: i for i, form in enumerate(forms)}
        self.atoms = atoms
        self.columns = columns
        lemma = [col for col in columns if col.name == "lemma"]
        self.rule_index = RuleIndex(rule_from_class(c) for c in lemma[0].classes) if lemma \
            else RuleIndex([])
        self.lexicon = lexicon
        self._index_lexicon()
        self.dictionary_min_count = dictionary_min_count
        self.class_ids = [{c: k for k, c in enumerate(col.classes)} for col in columns]
        self.class_strings = [np.array(col.classes, dtype=object) for col in columns]
        self._checked: dict[int, tuple[FeatureTable, CheckedTable]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a tagger trained on a worker: dparse.tagging.pipeline) without its cache
        of checked tables."""
        return {**self.__dict__, "_checked": {}}

    @property
    def predicted(self) -> tuple[str, ...]:
        """The columns this tagger predicts, in order."""
        return tuple(col.name for col in self.columns)

    # -- tagging ---------------------------------------------------------------------------

    def _index_lexicon(self) -> None:
        """The lexicon as arrays: ``lexicon_table`` int32 [known types, len(lexicon_upos)],
        the index in ``_lemma_strings`` of the lemma of (type, UPOS), -1 for none (whose
        entry, the last, is ""); ``lexicon_upos``: the UPOS classes (those of the lexicon where
        the tagger predicts none)."""
        upos = [col for col in self.columns if col.name == "upos"]
        self.lexicon_upos = upos[0].classes if upos else sorted({u for _, u in self.lexicon})
        upos_ids = {u: k for k, u in enumerate(self.lexicon_upos)}
        lemma_ids: dict[str, int] = {}
        self.lexicon_table = np.full((len(self.forms), len(self.lexicon_upos)), -1, np.int32)
        for (form, u), lemma in self.lexicon.items():
            self.lexicon_table[self.type_ids[form], upos_ids[u]] = \
                lemma_ids.setdefault(lemma, len(lemma_ids))
        self._lemma_strings = np.array([*lemma_ids, ""], dtype=object)

    def encode(self, sentences: Sequence[Sentence]) -> EncodedBatch:
        """``sentences`` as the extension reads them (see :class:`EncodedBatch`)."""
        forms = [f for s in sentences for f in s.form]
        ids = np.fromiter(map(self.type_ids.get, forms, repeat(-1)), dtype=np.int32,
                          count=len(forms))
        unknown = np.flatnonzero(ids < 0).tolist()
        extra = dict.fromkeys(forms[i] for i in unknown)
        if extra:
            extra_ids = {form: len(self.forms) + k for k, form in enumerate(extra)}
            ids[unknown] = [extra_ids[forms[i]] for i in unknown]
        sent_ptr = np.zeros(len(sentences) + 1, dtype=np.int32)
        sent_ptr[1:] = np.cumsum([len(s) for s in sentences])
        atoms_extra = (word_atoms(list(extra)) if extra
                       else np.zeros((0, self.atoms.shape[1]), dtype=np.uint64))
        return EncodedBatch(ids, list(extra), atoms_extra, sent_ptr)

    def candidates(self, col: ColumnModel, batch: EncodedBatch
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """CSR candidates of the batch's known types (the column's own lists) and of its extra
        types: the extra forms' lemma rules are those that apply to them, their other columns'
        lists are empty (every class); a copy of the known types has their lists."""
        if batch.copies:
            size = col.known_ptr[-1]
            return (col.known_ptr, col.known_ids,
                    np.concatenate([col.known_ptr] + [k * size + col.known_ptr[1:]
                                                      for k in range(1, batch.copies)]),
                    np.tile(col.known_ids, batch.copies))
        if col.name == "lemma":
            return (col.known_ptr, col.known_ids, *self.rule_index.applicable_many(batch.extra))
        return (col.known_ptr, col.known_ids, np.zeros(len(batch.extra) + 1, dtype=np.int32),
                np.zeros(0, dtype=np.int32))

    def predict_column(self, c: int, batch: EncodedBatch, values: np.ndarray,
                       weights: FeatureTable | None = None, given: np.ndarray | None = None
                       ) -> None:
        """Predict column ``self.columns[c]`` of ``batch`` into ``values`` [T, len(COLUMNS)]
        (the columns it reads already there), with its weights or ``weights``; the words
        whose ``given`` [T] class is >= 0 keep it."""
        col = self.columns[c]
        values[:, col.index] = -1 if given is None else given
        if col.name != DRAFT:
            self._tag_column(c, batch, values, weights)
            return
        perm = batch.mirror_permutation()  # the draft runs right to left: over the mirror
        mirrored = values[perm]
        self._tag_column(c, batch.mirrored(), mirrored, weights)
        values[perm, col.index] = mirrored[:, col.index]

    def _tag_column(self, c: int, batch: EncodedBatch, values: np.ndarray,
                    weights: FeatureTable | None) -> None:
        col = self.columns[c]
        tag_column(self.atoms, batch.atoms_extra, batch.tok_type, batch.sent_ptr, values,
                   col.index, col.templates, *self.candidates(col, batch), col.compat,
                   col.cond, len(col.classes), self.checked_table(c, weights))

    def checked_table(self, c: int, weights: FeatureTable | None = None) -> CheckedTable:
        """Column c's weights (or ``weights``) checked for the extension: once for the
        column's own, whose check is kept while they stay the column's."""
        if weights is not None:
            return CheckedTable(*weights, len(self.columns[c].classes))
        own = self.columns[c].weights
        kept = self._checked.get(c)
        if kept is None or kept[0] is not own:
            kept = self._checked[c] = (own, CheckedTable(*own, len(self.columns[c].classes)))
        return kept[1]

    def tag_batch(self, sentences: Sequence[Sentence], mode: str = "auto") -> list[Sentence]:
        """Tagged copies of ``sentences``: ``mode`` ``predict`` predicts every column of the
        tagger, ``keep`` none (the sentences as they are), ``auto`` those that every sentence
        of the batch leaves empty (``_`` on every word); kept columns are read by the later
        columns' features. Python's cyclic collector is paused meanwhile
        (:func:`dparse.collector.collector_paused`)."""
        if mode not in TAG_MODES:
            raise ValueError(f"tag mode {mode!r}: expected one of {', '.join(TAG_MODES)}")
        if mode == "keep" or not sentences:
            return list(sentences)
        with collector_paused():
            return self._tag_batch(sentences, mode)

    def _tag_batch(self, sentences: Sequence[Sentence], mode: str) -> list[Sentence]:
        batch = self.encode(sentences)
        values = np.full((len(batch.tok_type), len(COLUMNS)), -1, dtype=np.int32)
        predict = self._columns_to_predict(sentences, mode)
        lemmas = np.full(len(batch.tok_type), -1, dtype=np.int32)  # lexicon lemmas
        for c, col in enumerate(self.columns):
            if col.name not in predict:
                self._fill_kept(values, c, col, sentences)
                continue
            given = None
            if col.name == "lemma":  # the lexicon's words are not classified
                lemmas = self._lexicon_lemma_ids(batch, values, sentences)
                given = np.where(lemmas >= 0, 0, -1).astype(np.int32)
            self.predict_column(c, batch, values, given=given)
        flat: dict[str, list[str]] = {}
        for c, col in enumerate(self.columns):
            if col.name in predict and col.name != DRAFT:
                flat[col.name] = (self._lemmas(batch, values[:, col.index], lemmas)
                                  if col.name == "lemma"
                                  else self.class_strings[c][values[:, col.index]].tolist())
        ptr = batch.sent_ptr.tolist()
        return [sent.with_tags(**{name: tags[ptr[s]:ptr[s + 1]] for name, tags in flat.items()})
                for s, sent in enumerate(sentences)]

    def _columns_to_predict(self, sentences: Sequence[Sentence], mode: str) -> set[str]:
        """The columns to predict (the draft UPOS with UPOS)."""
        if mode == "predict":
            return set(self.predicted)
        empty = {name for name in self.predicted if name != DRAFT
                 and all(v == "_" for s in sentences for v in getattr(s, name))}
        return empty | ({DRAFT} if "upos" in empty else set())

    def _fill_kept(self, values: np.ndarray, c: int, col: ColumnModel,
                   sentences: Sequence[Sentence]) -> None:
        """The input's values of a kept column as class ids (-1 for one the tagger does not
        know), for the later columns' features."""
        if col.name in ("lemma", DRAFT):
            return
        ids = self.class_ids[c]
        flat = [v for s in sentences for v in getattr(s, col.name)]
        if col.name == "feats":
            flat = [canonical_feats(v) for v in flat]
        values[:, col.index] = [ids.get(v, -1) for v in flat]

    def _lexicon_lemma_ids(self, batch: EncodedBatch, values: np.ndarray,
                           sentences: Sequence[Sentence]) -> np.ndarray:
        """int32 [T]: for a word whose (form, UPOS) the lexicon lemmatizes, the index of its
        lemma in ``_lemma_strings``, else -1; UPOS as ``values`` holds it (predicted or
        kept), or, for a tagger that predicts none, as the sentences give it."""
        if "upos" in self.predicted:
            upos = values[:, UPOS]
        else:
            ids = {u: k for k, u in enumerate(self.lexicon_upos)}
            upos = np.array([ids.get(u, -1) for s in sentences for u in s.upos], dtype=np.int32)
        out = np.full(len(batch.tok_type), -1, dtype=np.int32)
        hit = (batch.tok_type < len(self.forms)) & (upos >= 0)
        out[hit] = self.lexicon_table[batch.tok_type[hit], upos[hit]]
        return out

    def _lemmas(self, batch: EncodedBatch, rule_ids: np.ndarray, lexicon_ids: np.ndarray
                ) -> list[str]:
        """The lemma of every word: its lexicon lemma (``lexicon_ids`` >= 0), else its rule
        applied to its form (once per distinct form and rule)."""
        lemmas = self._lemma_strings[lexicon_ids]
        ruled = np.flatnonzero(lexicon_ids < 0)
        if ruled.size:
            rules, V = self.rule_index.rules, len(self.forms)
            pairs = batch.tok_type[ruled].astype(np.int64) * len(rules) + rule_ids[ruled]
            unique, inverse = np.unique(pairs, return_inverse=True)
            forms = [self.forms[t] if t < V else batch.extra[t - V]
                     for t in (unique // len(rules)).tolist()]
            made = [apply_rule(rules[k], form) or form
                    for form, k in zip(forms, (unique % len(rules)).tolist(), strict=True)]
            lemmas[ruled] = np.array(made, dtype=object)[inverse]
        return lemmas.tolist()

    def tag(self, sentences: Iterable[Sentence], timer: ParseTimer | None = None,
            mode: str = "auto", count: bool = True) -> Iterator[Sentence]:
        """Tag a stream of sentences, :data:`BATCH_SENTENCES` at a time, in order; ``timer``
        counts the tagging time (and, with ``count``, the words and sentences)."""
        batch: list[Sentence] = []
        for sent in sentences:
            batch.append(sent)
            if len(batch) == BATCH_SENTENCES:
                yield from self._timed(batch, timer, mode, count)
                batch = []
        if batch:
            yield from self._timed(batch, timer, mode, count)

    def _timed(self, batch: list[Sentence], timer: ParseTimer | None, mode: str,
               count: bool) -> list[Sentence]:
        start = time.perf_counter()
        tagged = self.tag_batch(batch, mode)
        if timer is not None:
            timer.record_tagging(time.perf_counter() - start,
                                 sum(map(len, batch)) if count else 0, len(batch) if count else 0)
        return tagged

    # -- files -----------------------------------------------------------------------------

    def write_files(self, directory: Path) -> None:
        """Write ``tagger.json``, ``tagger.bin`` and ``templates.json`` into ``directory``."""
        arrays = {"atoms": self.atoms}
        meta_columns = []
        for col in self.columns:
            for part, array in zip(FeatureTable._fields, col.weights, strict=True):
                arrays[f"{col.name}.{part}"] = array
            arrays[f"{col.name}.templates"] = col.templates
            arrays[f"{col.name}.known_ptr"] = col.known_ptr
            arrays[f"{col.name}.known_ids"] = col.known_ids
            arrays[f"{col.name}.compat"] = col.compat
            meta_columns.append({"name": col.name, "classes": col.classes})
        meta = {
            "format_version": FORMAT_VERSION,
            "forms": self.forms,
            "columns": meta_columns,
            "lexicon": [[f, u, lemma] for (f, u), lemma in self.lexicon.items()],
            "dictionary_min_count": self.dictionary_min_count,
        }
        save_arrays(directory / TAGGER_ARRAYS, **arrays)
        (directory / TAGGER_JSON).write_text(json.dumps(meta, ensure_ascii=False),
                                             encoding="utf-8")
        write_templates(directory, TAGGER)

    @classmethod
    def load(cls, directory: Path, checked: bool = False) -> TaggerModel:
        """The tagger in ``directory`` (a tagger model directory, or a pipeline model's
        ``tagger/``); ``checked``: its manifest was checked already."""
        if not checked:
            check_model_dir(directory)
        meta = load_meta(directory, TAGGER_JSON, "tagger", FORMAT_VERSION)
        check_templates(directory, TAGGER)
        arrays = load_arrays(directory / TAGGER_ARRAYS)
        try:
            columns = [
                ColumnModel(c["name"], c["classes"], arrays[f"{c['name']}.templates"],
                            FeatureTable(*(arrays[f"{c['name']}.{part}"]
                                           for part in FeatureTable._fields)),
                            arrays[f"{c['name']}.known_ptr"], arrays[f"{c['name']}.known_ids"],
                            arrays[f"{c['name']}.compat"])
                for c in meta["columns"]
            ]
            atoms = arrays["atoms"]
        except KeyError as exc:  # a model of a development build between two formats
            raise DparseError(f"{directory}: tagger arrays {exc} missing: a model saved by "
                              "another version of dparse; retrain it") from None
        lexicon = {(f, u): lemma for f, u, lemma in meta["lexicon"]}
        return cls(meta["forms"], atoms, columns, lexicon, meta["dictionary_min_count"])
