"""The second-order graph-based model: arcs and labels (first order) plus consecutive-sibling
and grandparent parts (each family can be switched off: ``features.siblings``,
``features.grandparents``), over the arcs that a first-order pruner keeps
(:mod:`dparse.graph.pruner`).

As in TurboParser (Martins et al. 2013), a separately trained first-order model prunes the arcs
(see :mod:`dparse.graph.pruner`). Second-order parts are scored only over surviving arcs; pruned
arcs get score -inf. Labels stay first-order (arc-label parts), so choosing each arc's best
label before decoding remains exact. A saved model directory holds the weights, the vocabulary,
the resolved config, the versions of the first-order and second-order templates
(``templates.json``: dparse/_ext/arcfeatures.pyx and dparse/graph/o2features.pyx; a model of
other versions is refused, :mod:`dparse.templates`) and the pruner (a first-order model
directory, ``pruner/``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dparse._ext.arcfeatures import FeatureSpace
from dparse.config import ExperimentConfig
from dparse.errors import DparseError
from dparse.graph.model import ArcFactoredModel, GraphModel, PartScratch
from dparse.graph.o2features import SecondOrderSpace, score_second_order, second_order_delta
from dparse.graph.pruner import Pruner
from dparse.modeldir import (
    PRUNER_DIR,
    PRUNER_FILE,
    VOCAB_FILE,
    WEIGHTS_FILE,
    load_arrays,
    save_arrays,
)
from dparse.templates import ARC, O2, check_templates, write_templates
from dparse.vocab import EncodedSentence, Vocabulary


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

    def with_weights(self, weights: np.ndarray) -> SecondOrderModel:
        return SecondOrderModel(self.vocab, self.space, weights, self.pruner, self.grandparents,
                                self.siblings)

    def score_parts(
        self, enc: EncodedSentence, weights: np.ndarray | None, cost_augmented: bool,
        scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Arc scores float64 [n+1, n+1] (-inf where pruned: the arcs ``enc.allowed`` keeps, or
        the pruner's), best labels int32 [n+1, n+1] and the second-order part arrays of the
        decoder contract, {"sib": [n+1]^3, "grand": [n+1]^3}, each only if the model has it
        (in ``scratch`` when given)."""
        w = self._weights if weights is None else weights
        allowed = self.allowed(enc)
        arc, label = self.first.score(enc, w[: self.space.first.size], cost_augmented, allowed)
        n1 = len(enc) + 1
        arrays = iter((scratch or PartScratch()).take(n1, self.siblings + self.grandparents))
        sib = next(arrays) if self.siblings else None
        grand = next(arrays) if self.grandparents else None
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
        """Write the weights, the vocabulary, the templates' versions and the pruner
        (``pruner/``) into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        first = self.space.first
        save_arrays(
            directory / WEIGHTS_FILE,
            weights=np.asarray(self._weights, dtype=np.float32),
            arc_bits=first.arc_bits,
            lab_bits=first.lab_bits,
            sib_bits=self.space.sib_bits,
            grand_bits=self.space.grand_bits,
            grandparents=self.grandparents,
            siblings=self.siblings,
        )
        self.vocab.save(directory / VOCAB_FILE)
        write_templates(directory, ARC, O2)
        self.write_calibration(directory)
        self.pruner.write_files(directory / PRUNER_DIR)

    @classmethod
    def read_files(cls, directory: Path) -> SecondOrderModel:
        """Read what ``write_files`` wrote."""
        check_templates(directory, ARC, O2)
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        data = load_arrays(directory / WEIGHTS_FILE)
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
