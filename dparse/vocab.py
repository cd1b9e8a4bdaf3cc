"""Vocabularies of a model and the integer encoding of sentences for the feature extractors.

Every vocabulary reserves ids 0..3 for UNK, ROOT, BOS and EOS (``SPECIAL_IDS`` of the feature
extension); real symbols start at 4. Words are normalized (lowercased, digits -> 0) before lookup.
An encoded sentence is what the Cython extractors read: ``tokens`` int32 [n+1, N_COLS] (row 0 is
the root), ``morph_ptr`` int32 [n+2] and ``morph`` int32 [nnz] (CSR morphological features),
``heads`` int32 [n+1] and ``labels`` int32 [n+1] (-1 for unknown labels and for the root).
A pruner may attach ``allowed``, uint8 [n+1, n+1], the arcs it keeps (kept across epochs).
Columns the model does not read (``unread``, :mod:`dparse.columns`) are encoded as ``_``; the
share of training tokens that filled each column (``filled``) lets parsing notice an input that
leaves a column empty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dparse._ext.arcfeatures import COLUMNS, N_COLS, SPECIAL_IDS
from dparse.columns import ColumnCounter
from dparse.conll import Sentence
from dparse.outputs import write_text

FIRST_ID = 4
_DIGITS = re.compile(r"\d")
ATTRIBUTES = ("words", "lemmas", "upos", "xpos", "prefixes", "suffixes", "morph")
# the columns of EncodedSentence.tokens holding POS ids
TAG_COLUMNS = {"upos": COLUMNS["upos"], "xpos": COLUMNS["xpos"]}
COLUMN_ORDER = sorted(COLUMNS, key=COLUMNS.__getitem__)
UNREAD_KEY = "unread_columns"  # keys of the vocabulary file
FILLED_KEY = "filled_shares"
CACHE_ENTRIES = 1 << 16  # forms (and FEATS values) whose ids a vocabulary keeps at most


def normalize(form: str) -> str:
    """The word as the features see it: lowercased, every digit replaced by 0."""
    return _DIGITS.sub("0", form.lower())


def _ids(symbols: list[str], first: int) -> dict[str, int]:
    """{symbol: its id}, ids from ``first`` in the list's order (built by dict(zip()): a model's
    load builds tens of thousands)."""
    return dict(zip(symbols, range(first, first + len(symbols)), strict=True))


def _morph_values(feats: str) -> list[str]:
    return [] if feats == "_" or not feats else feats.split("|")


@dataclass
class EncodedSentence:
    """A sentence as integer arrays (shapes in the module docstring)."""

    tokens: np.ndarray
    morph_ptr: np.ndarray
    morph: np.ndarray
    heads: np.ndarray
    labels: np.ndarray
    allowed: np.ndarray | None = None

    def __len__(self) -> int:
        return self.tokens.shape[0] - 1


class Vocabulary:
    """String -> id maps for each token attribute, the list of dependency labels, and the
    token columns (of :data:`dparse.columns.COLUMNS`) the model does not read."""

    def __init__(self, tables: dict[str, list[str]], labels: list[str],
                 unread: tuple[str, ...] = (), filled: dict[str, float] | None = None) -> None:
        self.tables = tables
        self.unread = unread
        self.filled = filled  # column -> share of training tokens filled (None: not recorded)
        self.index = {name: _ids(tables[name], FIRST_ID) for name in ATTRIBUTES}
        self.labels = labels
        self.label_index = _ids(labels, 0)
        self._forms: dict[str, tuple[int, int, int]] = {}
        self._feats: dict[str, list[int]] = {}

    @classmethod
    def build(cls, sentences: Iterable[Sentence], unread: tuple[str, ...] = ()) -> Vocabulary:
        """Collect every symbol of the training sentences, in order of first appearance
        (``unread`` columns: already blanked in them, :func:`dparse.columns.blank_columns`)."""
        seen: dict[str, dict[str, None]] = {name: {} for name in ATTRIBUTES}
        labels: dict[str, None] = {}
        counter = ColumnCounter()
        for sent in counter.through(sentences):
            words = [normalize(f) for f in sent.form]
            seen["words"].update(dict.fromkeys(words))
            seen["lemmas"].update(dict.fromkeys(sent.lemma))
            seen["upos"].update(dict.fromkeys(sent.upos))
            seen["xpos"].update(dict.fromkeys(sent.xpos))
            seen["prefixes"].update(dict.fromkeys(w[:5] for w in words))
            seen["suffixes"].update(dict.fromkeys(w[-3:] for w in words))
            for feats in sent.feats:
                seen["morph"].update(dict.fromkeys(_morph_values(feats)))
            labels.update(dict.fromkeys(sent.deprels[1:]))
        filled = {c: round(share, 4) for c, share in counter.shares().items()}
        return cls({name: list(seen[name]) for name in ATTRIBUTES}, list(labels), unread, filled)

    def _form_ids(self, form: str) -> tuple[int, int, int]:
        """The word, prefix and suffix ids of a form (cached: a corpus repeats its forms)."""
        ids = self._forms.get(form)
        if ids is None:
            if len(self._forms) >= CACHE_ENTRIES:
                self._forms.clear()
            w = normalize(form)
            idx = self.index
            ids = (idx["words"].get(w, 0), idx["prefixes"].get(w[:5], 0),
                   idx["suffixes"].get(w[-3:], 0))
            self._forms[form] = ids
        return ids

    def _morph_ids(self, feats: str) -> list[int]:
        """The morphological feature ids of a FEATS value (cached like ``_form_ids``)."""
        ids = self._feats.get(feats)
        if ids is None:
            if len(self._feats) >= CACHE_ENTRIES:
                self._feats.clear()
            table = self.index["morph"]
            ids = [table.get(v, 0) for v in _morph_values(feats)]
            self._feats[feats] = ids
        return ids

    def _column(self, sent: Sentence, column: str) -> list[str]:
        """The sentence's ``column`` values as the model reads them (all ``_`` if unread)."""
        return ["_"] * len(sent) if column in self.unread else getattr(sent, column)

    def encode(self, sent: Sentence) -> EncodedSentence:
        """Encode one sentence; unknown symbols get id 0 and unknown labels -1."""
        n = len(sent)
        idx = self.index
        read = self._column
        tokens = np.empty((n + 1, N_COLS), dtype=np.int32)
        tokens[0] = SPECIAL_IDS["root"]
        if n:
            word, prefix, suffix = zip(*[self._form_ids(f) for f in sent.form], strict=True)
            columns = {
                "word": word,
                "lemma": [idx["lemmas"].get(x, 0) for x in read(sent, "lemma")],
                "upos": [idx["upos"].get(x, 0) for x in read(sent, "upos")],
                "xpos": [idx["xpos"].get(x, 0) for x in read(sent, "xpos")],
                "prefix": prefix,
                "suffix": suffix,
            }
            tokens[1:] = np.array([columns[name] for name in COLUMN_ORDER], dtype=np.int32).T
        morph_ids: list[int] = []
        morph_ptr = [0, 0]
        morph = self._morph_ids
        for feats in read(sent, "feats"):
            morph_ids += morph(feats)
            morph_ptr.append(len(morph_ids))
        label_id = self.label_index.get
        return EncodedSentence(
            tokens=tokens,
            morph_ptr=np.array(morph_ptr, dtype=np.int32),
            morph=np.array(morph_ids, dtype=np.int32),
            heads=np.asarray(sent.heads, dtype=np.int32),
            labels=np.array([-1, *[label_id(d, -1) for d in sent.deprels[1:]]], dtype=np.int32),
        )

    def tag_classes(self, column: str, classes: Mapping[int, Iterable[str]]) -> np.ndarray:
        """uint8 [ids]: per id of the ``column`` vocabulary (``upos`` or ``xpos``), the OR of
        the flags (keys of ``classes``) whose tag sets (values) hold its tag; 0 for the special
        ids and for tags in no set. Index it with an encoded tag column."""
        table = self.index[column]
        out = np.zeros(len(table) + FIRST_ID, dtype=np.uint8)
        for flag, tags in classes.items():
            for tag in tags:
                if tag in table:
                    out[table[tag]] |= flag
        return out

    def save(self, path: Path) -> None:
        """Write the vocabulary as JSON (a file of a model directory)."""
        data = {"labels": self.labels, **self.tables}
        if self.unread:
            data[UNREAD_KEY] = list(self.unread)
        if self.filled is not None:
            data[FILLED_KEY] = self.filled
        write_text(path, json.dumps(data, ensure_ascii=False))

    @classmethod
    def load(cls, path: Path) -> Vocabulary:
        """Read what ``save`` wrote (a file without ``unread_columns``: every column read)."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls({name: data[name] for name in ATTRIBUTES}, data["labels"],
                   *_column_record(data))

    @staticmethod
    def read_columns(path: Path) -> tuple[tuple[str, ...], dict[str, float] | None]:
        """(``unread``, ``filled``) of a saved vocabulary, without building its indexes (what
        ``dparse parse`` checks its input against)."""
        return _column_record(json.loads(path.read_text(encoding="utf-8")))


def _column_record(data: dict) -> tuple[tuple[str, ...], dict[str, float] | None]:
    """(``unread``, ``filled``) from a vocabulary file's JSON (files written before these keys
    existed: every column read, no shares recorded)."""
    return tuple(data.get(UNREAD_KEY, ())), data.get(FILLED_KEY)
