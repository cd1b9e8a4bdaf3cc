"""The second-order graph-based model: arcs and labels (first order) plus consecutive-sibling
and grandparent parts (each family can be switched off: ``features.siblings``,
``features.grandparents``), over the arcs that a first-order pruner keeps.

As in TurboParser (Martins et al. 2013), a separately trained first-order model prunes the arcs:
for each word only its heads with locally normalized probability >= ``threshold`` are kept, at
most ``top_k`` of them. Second-order parts are scored only over surviving arcs; pruned arcs get
score -inf. Labels stay first-order (arc-label parts), so choosing each arc's best label before
decoding remains exact. A saved model directory holds the weights, the vocabulary, the resolved
config and the pruner (a first-order model directory, ``pruner/``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from dparse._ext.arcfeatures import FeatureSpace
from dparse._ext.o2features import SecondOrderSpace, score_second_order, second_order_delta
from dparse.config import ExperimentConfig
from dparse.decoders import get_decoder
from dparse.errors import DparseError
from dparse.learning import AveragedLearner
from dparse.model import (
    VOCAB_FILE,
    WEIGHTS_FILE,
    ArcFactoredModel,
    GraphModel,
)
from dparse.modeldir import save_arrays
from dparse.outputs import write_text
from dparse.vocab import EncodedSentence, Vocabulary

log = logging.getLogger(__name__)

PRUNER_DIR = "pruner"
PRUNER_FILE = "pruner.json"


class Pruner:
    """Keeps, for each word, its most probable heads under a first-order model."""

    def __init__(self, model: ArcFactoredModel, top_k: int, threshold: float) -> None:
        self.model = model
        self.top_k = top_k
        self.threshold = threshold

    def allowed(self, enc: EncodedSentence) -> np.ndarray:
        """uint8 [n+1, n+1]: allowed[h, m] == 1 when the arc h -> m survives pruning.

        Column m keeps the heads h whose probability softmax_h(arc[h, m]) is at least the
        threshold, at most top_k of them (always the best one); the root keeps at least its
        best child, so that a single-rooted tree exists.
        """
        return self.allowed_from_scores(self.model.score(enc)[0])

    def allowed_from_scores(self, arc: np.ndarray) -> np.ndarray:
        """``allowed`` from the first-order model's arc scores float64 [n+1, n+1] (for a
        caller that needs them, or its labels, anyway)."""
        n = arc.shape[0] - 1
        scores = arc[:, 1:]
        finite = np.isfinite(scores)
        shifted = np.where(finite, scores - scores.max(axis=0, keepdims=True), -np.inf)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=0, keepdims=True)
        keep = probs >= self.threshold
        if self.top_k < n:
            kth = -np.partition(-probs, self.top_k - 1, axis=0)[self.top_k - 1]
            keep &= probs >= kth
        keep[np.argmax(probs, axis=0), np.arange(n)] = True
        allowed = np.zeros((n + 1, n + 1), dtype=np.uint8)
        allowed[:, 1:] = keep & finite
        if not allowed[0].any():
            allowed[0, 1 + int(np.argmax(scores[0]))] = 1
        return allowed

    def write_files(self, directory: Path) -> None:
        """Write the first-order model and the pruning parameters into ``directory``."""
        self.model.write_files(directory)
        params = {"top_k": self.top_k, "threshold": self.threshold}
        write_text(directory / PRUNER_FILE, json.dumps(params))

    @classmethod
    def read_files(cls, directory: Path) -> Pruner:
        """Read what ``write_files`` wrote."""
        params = json.loads((directory / PRUNER_FILE).read_text(encoding="utf-8"))
        return cls(ArcFactoredModel.read_files(directory), params["top_k"], params["threshold"])


def train_pruner(
    cfg: ExperimentConfig, vocab: Vocabulary, encoded: list[EncodedSentence], progress: bool
) -> Pruner:
    """Train the first-order pruner: the configured learner with Chu-Liu-Edmonds for
    ``pruner.epochs`` epochs, keeping the last averaged weights (no dev selection); then
    attach to every training sentence the arcs it keeps."""
    from dparse.training import run_epoch

    pc = cfg.pruner
    space = FeatureSpace(pc.arc_bits, pc.label_bits, len(vocab.labels))
    model = ArcFactoredModel(vocab, space, np.zeros(space.size, dtype=np.float32))
    learner = AveragedLearner(space.size, cfg.training.learner, cfg.training.C)
    decoder = get_decoder("cle")
    rng = np.random.default_rng(cfg.training.seed)
    for epoch in range(1, pc.epochs + 1):
        order = rng.permutation(len(encoded))
        run_epoch(model, learner, [encoded[i] for i in order], decoder,
                  cfg.decoder.single_root, f"pruner epoch {epoch}/{pc.epochs}", progress)
    model.weights = learner.averaged()
    pruner = Pruner(model, pc.top_k, pc.threshold)
    for enc in encoded:
        enc.allowed = pruner.allowed(enc)
    recall, heads = pruning_recall(encoded)
    log.info("pruner keeps %.2f%% of gold training arcs, %.2f heads per word", recall, heads)
    return pruner


def pruning_recall(encoded: Iterable[EncodedSentence]) -> tuple[float, float]:
    """(percent of gold arcs kept, heads kept per word) over sentences with ``allowed`` set."""
    kept = total = candidates = 0
    for enc in encoded:
        assert enc.allowed is not None
        n = len(enc)
        kept += int(enc.allowed[enc.heads[1:], np.arange(1, n + 1)].sum())
        total += n
        candidates += int(enc.allowed.sum())
    return 100.0 * kept / max(total, 1), candidates / max(total, 1)


class SecondOrderModel(GraphModel):
    """Arc, label, sibling (if ``siblings``) and grandparent (if ``grandparents``) parts over
    one hashed weight vector (the sibling region stays in it, unused, without siblings)."""

    def __init__(
        self,
        vocab: Vocabulary,
        space: SecondOrderSpace,
        weights: np.ndarray,
        pruner: Pruner,
        grandparents: bool,
        siblings: bool = True,
    ) -> None:
        self.vocab = vocab
        self.space = space
        self.pruner = pruner
        self.grandparents = grandparents
        self.siblings = siblings
        self.first = ArcFactoredModel(vocab, space.first, weights[: space.first.size])
        self._weights = weights

    @classmethod
    def untrained(
        cls, vocab: Vocabulary, first: FeatureSpace, cfg: ExperimentConfig, pruner: Pruner
    ) -> SecondOrderModel:
        space = SecondOrderSpace(first, cfg.features.sib_bits, cfg.features.grand_bits)
        return cls(vocab, space, np.zeros(space.size, dtype=np.float32), pruner,
                   cfg.features.grandparents, cfg.features.siblings)

    @property
    def weights(self) -> np.ndarray:
        """The whole weight vector: first-order part, then sibling and grandparent parts."""
        return self._weights

    @weights.setter
    def weights(self, value: np.ndarray) -> None:
        self._weights = value
        self.first.weights = value[: self.space.first.size]

    @property
    def size(self) -> int:
        return self.space.size

    def score_parts(
        self, enc: EncodedSentence, weights: np.ndarray | None, cost_augmented: bool
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Arc scores float64 [n+1, n+1] (-inf where pruned: the arcs ``enc.allowed`` keeps, or
        the pruner's), best labels int32 [n+1, n+1] and the second-order part arrays of the
        decoder contract, {"sib": [n+1]^3, "grand": [n+1]^3}, each only if the model has it."""
        w = self._weights if weights is None else weights
        allowed = enc.allowed if enc.allowed is not None else self.pruner.allowed(enc)
        arc, label = self.first.score(enc, w[: self.space.first.size], cost_augmented, allowed)
        n1 = len(enc) + 1
        sib = np.empty((n1, n1, n1), dtype=np.float64) if self.siblings else None
        grand = np.empty((n1, n1, n1), dtype=np.float64) if self.grandparents else None
        score_second_order(enc.tokens, w, self.space, allowed, sib, grand)
        parts = {name: value for name, value in (("sib", sib), ("grand", grand))
                 if value is not None}
        return arc, label, parts

    def delta(
        self, enc: EncodedSentence, heads: np.ndarray, labels: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """phi(gold) - phi(predicted) over all parts (indices int64, values float64)."""
        idx1, val1 = self.first.delta(enc, heads, labels)
        idx2, val2 = second_order_delta(enc.tokens, self.space, enc.heads, heads,
                                        self.grandparents, self.siblings)
        return np.concatenate([idx1, idx2]), np.concatenate([val1, val2])

    def write_files(self, directory: Path) -> None:
        """Write the weights, the vocabulary and the pruner (``pruner/``) into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        first = self.space.first
        save_arrays(
            directory / WEIGHTS_FILE,
            weights=self._weights.astype(np.float32),
            arc_bits=first.arc_bits,
            lab_bits=first.lab_bits,
            sib_bits=self.space.sib_bits,
            grand_bits=self.space.grand_bits,
            grandparents=self.grandparents,
            siblings=self.siblings,
        )
        self.vocab.save(directory / VOCAB_FILE)
        self.pruner.write_files(directory / PRUNER_DIR)

    @classmethod
    def read_files(cls, directory: Path) -> SecondOrderModel:
        """Read what ``write_files`` wrote."""
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        with np.load(directory / WEIGHTS_FILE) as data:
            first = FeatureSpace(int(data["arc_bits"]), int(data["lab_bits"]), len(vocab.labels))
            space = SecondOrderSpace(first, int(data["sib_bits"]), int(data["grand_bits"]))
            weights = np.ascontiguousarray(data["weights"], dtype=np.float32)
            grandparents = bool(data["grandparents"])
            siblings = bool(data["siblings"])
        if weights.shape[0] != space.size:
            raise DparseError(f"{directory}: weights do not match the feature space")
        if not (directory / PRUNER_DIR / PRUNER_FILE).is_file():
            raise DparseError(f"{directory}: second-order model without its pruner/")
        return cls(vocab, space, weights, Pruner.read_files(directory / PRUNER_DIR), grandparents,
                   siblings)
