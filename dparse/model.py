"""The labeled arc-factored (first-order) graph-based model: scoring, parsing, saving.

A model is a vocabulary, a ``FeatureSpace`` (the layout of the hashed weight vector) and the
weights. A saved model is a directory holding ``weights.npz``, ``vocab.json`` and
``config.yaml`` (the resolved experiment config it was trained with).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dparse._ext.arcfeatures import FeatureSpace, score_arcs
from dparse.conll import Sentence
from dparse.decoders import Decoder
from dparse.errors import DparseError
from dparse.vocab import EncodedSentence, Vocabulary

WEIGHTS_FILE = "weights.npz"
VOCAB_FILE = "vocab.json"
CONFIG_FILE = "config.yaml"


@dataclass
class ParseTimer:
    """Seconds spent in each stage of parsing, and what was parsed."""

    sentences: int = 0
    tokens: int = 0
    encode: float = 0.0
    score: float = 0.0
    decode: float = 0.0

    @property
    def seconds(self) -> float:
        """Inference time: encoding, scoring and decoding (reading and writing excluded)."""
        return self.encode + self.score + self.decode

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


@dataclass
class ArcFactoredModel:
    """Scores labeled arcs of a sentence with hashed first-order features."""

    vocab: Vocabulary
    space: FeatureSpace
    weights: np.ndarray = field(repr=False)

    def score(
        self,
        enc: EncodedSentence,
        weights: np.ndarray | None = None,
        cost_augmented: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Arc scores float64 [n+1, n+1] (best label included) and best labels int32 [n+1, n+1].

        ``weights`` overrides the model's (training scores with the current float64 weights);
        ``cost_augmented`` adds the labeled Hamming cost against the encoded gold tree.
        """
        n = len(enc)
        arc = np.empty((n + 1, n + 1), dtype=np.float64)
        label = np.empty((n + 1, n + 1), dtype=np.int32)
        gold_heads = enc.heads if cost_augmented else None
        gold_labels = enc.labels if cost_augmented else None
        score_arcs(
            enc.tokens, enc.morph_ptr, enc.morph,
            self.weights if weights is None else weights, self.space,
            arc, label, gold_heads, gold_labels,
        )
        return arc, label

    def parse_encoded(
        self, enc: EncodedSentence, decoder: Decoder, single_root: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Heads int32 [n+1] (heads[0] == -1) and label ids int32 [n+1] (labels[0] == -1)."""
        arc, label = self.score(enc)
        heads = decoder.decode(arc, single_root=single_root)
        labels = np.full(len(heads), -1, dtype=np.int32)
        labels[1:] = label[heads[1:], np.arange(1, len(heads))]
        return heads, labels

    def parse(
        self,
        sentences: Iterable[Sentence],
        decoder: Decoder,
        single_root: bool = True,
        timer: ParseTimer | None = None,
    ) -> Iterator[Sentence]:
        """Parse a stream of sentences, yielding copies with HEAD and DEPREL replaced."""
        timer = timer if timer is not None else ParseTimer()
        for sent in sentences:
            t0 = time.perf_counter()
            enc = self.vocab.encode(sent)
            t1 = time.perf_counter()
            arc, label = self.score(enc)
            t2 = time.perf_counter()
            heads = decoder.decode(arc, single_root=single_root)
            names = self.vocab.labels
            deprels = [""] + [names[label[h, m]] for m, h in enumerate(heads.tolist()) if m]
            t3 = time.perf_counter()
            timer.encode += t1 - t0
            timer.score += t2 - t1
            timer.decode += t3 - t2
            timer.sentences += 1
            timer.tokens += len(sent)
            yield sent.with_parse(heads, deprels)

    def save(self, directory: Path) -> None:
        """Write the weights and the vocabulary into ``directory`` (created if needed)."""
        directory.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            directory / WEIGHTS_FILE,
            weights=self.weights.astype(np.float32),
            arc_bits=self.space.arc_bits,
            lab_bits=self.space.lab_bits,
        )
        self.vocab.save(directory / VOCAB_FILE)

    @classmethod
    def load(cls, directory: Path) -> ArcFactoredModel:
        """Read a model directory written by ``save``."""
        for name in (WEIGHTS_FILE, VOCAB_FILE):
            if not (directory / name).is_file():
                raise DparseError(f"{directory}: not a dparse model directory (no {name})")
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        with np.load(directory / WEIGHTS_FILE) as data:
            space = FeatureSpace(int(data["arc_bits"]), int(data["lab_bits"]), len(vocab.labels))
            weights = np.ascontiguousarray(data["weights"], dtype=np.float32)
        if weights.shape[0] != space.size:
            raise DparseError(f"{directory}: weights do not match the feature space")
        return cls(vocab, space, weights)
