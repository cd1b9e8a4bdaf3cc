"""A neural parser's vocabularies (words, characters, UPOS tags, the XPOS tags and FEATS
features it reads, labels, the tags of the columns it predicts) and the encoding of a sentence
as the network reads it.

Ids 0, 1 and 2 of the word, character and tag vocabularies are padding, unknown and the root
(``PAD``, ``UNK``, ``ROOT``); real symbols start at 3, in order of first appearance in
training. Words are normalized as the linear models see them (:func:`dparse.vocab.normalize`:
lowercased, digits -> 0); characters are those of the form as written. Saved as
``vocab.json``, with the column record every model's vocabulary file carries (the columns it
does not read, the shares of training tokens that filled each column: what ``dparse parse``
checks its input against, :mod:`dparse.columns`).

A model trained with pretrained vectors (``neural.vectors``) also has the normalized words of
the vectors file (``pretrained``, ids from 3 as the words', PAD, UNK and ROOT below them) and
their dimension (``pretrained_dim``); a word's pretrained id is independent of its word id, so
a word unseen in training but in the file has the unknown word id and its own pretrained id.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dparse.columns import COLUMNS, ColumnCounter
from dparse.conll import Sentence
from dparse.errors import DparseError
from dparse.neural.labels import LabelFeatures
from dparse.outputs import write_text
from dparse.vocab import FILLED_KEY, UNREAD_KEY, normalize

PAD, UNK, ROOT = 0, 1, 2
FIRST_ID = 3
MAX_CHARS = 32  # characters of a word the network reads (its first ones)


@dataclass
class NeuralSentence:
    """A sentence as the network reads it: ``words`` int64 [n+1] and ``tags`` int64 [n+1]
    (row 0 the root; tags all UNK for a model without tags), ``chars`` int64 [n+1, C] (padded
    with PAD; C the longest word's characters, at most :data:`MAX_CHARS`), gold ``heads`` and
    label ids ``labels`` int32 [n+1] (-1 for the root, an unknown label or a missing head),
    ``targets`` the gold tag ids int64 [n+1] of each column the network predicts (-1 for the
    root and an unknown tag), ``pretrained`` the pretrained word ids int64 [n+1] (None for a
    model without pretrained vectors; ROOT for the root, UNK for a word not in the vectors
    file), ``extra`` the ids int64 [n+1, K] of each other tag column the network reads
    (XPOS: K = 1; FEATS: its features, ``Number=Sing`` each, PAD after them; row 0 the root),
    ``predicted`` those columns' predicted tags (lists of n names, once scored),
    ``allowed`` (uint8 [n+1, n+1] or None) the arcs a constrained parse may score, as for
    :class:`dparse.vocab.EncodedSentence`, and ``scores``, the network's arc scores float64
    [n+1, n+1] and label features (:class:`dparse.neural.labels.LabelFeatures`) once
    :meth:`dparse.neural.model.NeuralModel.score_batch` scored it, with a second-order
    network's projections ``factors`` (part kind -> float32 [3, n+1, rank]:
    :mod:`dparse.neural.secondorder`)."""

    words: np.ndarray
    chars: np.ndarray
    tags: np.ndarray
    heads: np.ndarray
    labels: np.ndarray
    targets: dict[str, np.ndarray] = field(default_factory=dict)
    allowed: np.ndarray | None = None
    scores: tuple[np.ndarray, LabelFeatures] | None = None  # arc scores, label features
    predicted: dict[str, list[str]] = field(default_factory=dict)
    pretrained: np.ndarray | None = None
    factors: dict[str, np.ndarray] = field(default_factory=dict)
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.words) - 1


class NeuralVocabulary:
    """The symbol lists of a neural model (``words``, ``chars``, ``tags``, ``labels``),
    whether it reads UPOS (``reads_tags``; ``tags`` its UPOS), the symbols of each other tag
    column it reads (``extra``: XPOS tags, FEATS features), the tags of each column it predicts
    (``predicts``: column -> tag names, ids from 0), the column record of its training
    data and the words of its pretrained vectors (``pretrained``, None without; their
    dimension ``pretrained_dim``)."""

    def __init__(self, words: list[str], chars: list[str], tags: list[str], labels: list[str],
                 reads_tags: bool, filled: dict[str, float] | None = None,
                 predicts: dict[str, list[str]] | None = None,
                 pretrained: list[str] | None = None, pretrained_dim: int = 0,
                 extra: dict[str, list[str]] | None = None) -> None:
        self.words, self.chars, self.tags, self.labels = words, chars, tags, labels
        self.extra = extra or {}
        self._extra_ids = {c: {t: i for i, t in enumerate(names, FIRST_ID)}
                           for c, names in self.extra.items()}
        self.reads_tags = reads_tags
        self.filled = filled
        self.predicts = predicts or {}
        self.pretrained, self.pretrained_dim = pretrained, pretrained_dim
        self._pretrained_ids = (None if pretrained is None else
                                {w: i for i, w in enumerate(pretrained, FIRST_ID)})
        self._predicted_ids = {c: {t: i for i, t in enumerate(names)}
                               for c, names in self.predicts.items()}
        self._word_ids = {w: i for i, w in enumerate(words, FIRST_ID)}
        self._char_ids = {c: i for i, c in enumerate(chars, FIRST_ID)}
        self._tag_ids = {t: i for i, t in enumerate(tags, FIRST_ID)}
        self._label_ids = {label: i for i, label in enumerate(labels)}

    @classmethod
    def build(cls, sentences: Sequence[Sentence], min_count: int, reads_tags: bool,
              predicts: Sequence[str] = (), pretrained: list[str] | None = None,
              pretrained_dim: int = 0, reads: Sequence[str] = ()) -> NeuralVocabulary:
        """Every symbol of the training sentences (words seen at least ``min_count`` times;
        the symbols of the other tag columns it ``reads``, xpos or feats;
        the tags of each column of ``predicts`` but the empty ``_``: a column the training
        file leaves empty everywhere is not predicted), with the words of the pretrained
        vectors if any."""
        words: Counter[str] = Counter()
        chars: dict[str, None] = {}
        tags: dict[str, None] = {}
        labels: dict[str, None] = {}
        targets: dict[str, dict[str, None]] = {c: {} for c in predicts}
        extra: dict[str, dict[str, None]] = {c: {} for c in reads}
        counter = ColumnCounter()
        for sent in counter.through(sentences):
            words.update(normalize(f) for f in sent.form)
            for form in sent.form:
                chars.update(dict.fromkeys(form))
            tags.update(dict.fromkeys(sent.upos))
            labels.update(dict.fromkeys(sent.deprels[1:]))
            for column, seen in targets.items():
                seen.update(dict.fromkeys(getattr(sent, column)))
            for column, seen in extra.items():
                seen.update(dict.fromkeys(s for value in getattr(sent, column)
                                          for s in _symbols(column, value)))
        kept = [w for w, count in words.items() if count >= min_count]
        predicted = {c: names for c, seen in targets.items()
                     if (names := [t for t in seen if t != "_"])}
        return cls(kept, list(chars), list(tags) if reads_tags else [], list(labels),
                   reads_tags, counter.shares(), predicted, pretrained, pretrained_dim,
                   {c: list(seen) for c, seen in extra.items()})

    @property
    def unread(self) -> tuple[str, ...]:
        """The token columns the model does not read (every one but the tag columns it
        reads)."""
        return tuple(c for c in COLUMNS
                     if not ((self.reads_tags and c == "upos") or c in self.extra))

    def encode(self, sent: Sentence) -> NeuralSentence:
        """The sentence's ids (:class:`NeuralSentence`)."""
        n = len(sent)
        forms = [normalize(f) for f in sent.form]
        words = np.empty(n + 1, dtype=np.int64)
        words[0] = ROOT
        words[1:] = [self._word_ids.get(f, UNK) for f in forms]
        pretrained = None
        if self._pretrained_ids is not None:
            pretrained = np.empty(n + 1, dtype=np.int64)
            pretrained[0] = ROOT
            pretrained[1:] = [self._pretrained_ids.get(f, UNK) for f in forms]
        width = max([1] + [min(len(f), MAX_CHARS) for f in sent.form])
        chars = np.zeros((n + 1, width), dtype=np.int64)
        chars[0, 0] = ROOT
        for i, form in enumerate(sent.form, 1):
            ids = [self._char_ids.get(c, UNK) for c in form[:MAX_CHARS]]
            chars[i, :len(ids)] = ids or [UNK]
        tags = np.full(n + 1, UNK, dtype=np.int64)
        tags[0] = ROOT
        if self.reads_tags:
            tags[1:] = [self._tag_ids.get(t, UNK) for t in sent.upos]
        labels = np.full(n + 1, -1, dtype=np.int32)
        labels[1:] = [self._label_ids.get(d, -1) for d in sent.deprels[1:]]
        heads = np.asarray(sent.heads, dtype=np.int32).copy()
        heads[0] = -1
        targets = {}
        for column, ids in self._predicted_ids.items():
            gold = np.full(n + 1, -1, dtype=np.int64)
            gold[1:] = [ids.get(t, -1) for t in getattr(sent, column)]
            targets[column] = gold
        extra = {}
        for column, ids in self._extra_ids.items():
            symbols = [_symbols(column, value) for value in getattr(sent, column)]
            table = np.zeros((n + 1, max([1] + [len(x) for x in symbols])), dtype=np.int64)
            table[0, 0] = ROOT
            for i, values in enumerate(symbols, 1):
                table[i, :len(values)] = [ids.get(v, UNK) for v in values]
            extra[column] = table
        return NeuralSentence(words, chars, tags, heads, labels, targets, pretrained=pretrained,
                              extra=extra)

    def save(self, path: Path) -> None:
        """Write the vocabulary as JSON (with the column record of dparse.vocab's files)."""
        data = {"words": self.words, "chars": self.chars, "tags": self.tags,
                "labels": self.labels, "reads_tags": self.reads_tags, "predicts": self.predicts,
                UNREAD_KEY: list(self.unread), FILLED_KEY: self.filled}
        if self.pretrained is not None:
            data |= {"pretrained": self.pretrained, "pretrained_dim": self.pretrained_dim}
        if self.extra:
            data["extra"] = self.extra
        write_text(path, json.dumps(data, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: Path) -> NeuralVocabulary:
        """Read a vocabulary :meth:`save` wrote; DparseError naming the file otherwise."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(data["words"], data["chars"], data["tags"], data["labels"],
                       bool(data["reads_tags"]), data.get(FILLED_KEY), data.get("predicts"),
                       data.get("pretrained"), int(data.get("pretrained_dim", 0)),
                       data.get("extra"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DparseError(f"{path}: not a neural model's vocabulary ({exc}); retrain "
                              "the model") from None


def _symbols(column: str, value: str) -> list[str]:
    """What the network reads of a token's ``column`` value: FEATS its features
    (``Number=Sing|Person=3`` two; ``_`` none), XPOS the tag (``_``: none)."""
    if value == "_":
        return []
    return value.split("|") if column == "feats" else [value]
