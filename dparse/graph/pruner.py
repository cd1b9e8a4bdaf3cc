"""The first-order pruner of the higher-order graph-based models.

As in TurboParser (Martins et al. 2013), a separately trained first-order model prunes the arcs:
for each word only its heads with probability >= ``threshold`` (absolute, or relative to the
best head's with ``pruner.relative``) are kept, at most ``top_k`` of them. The pruner is either
a labeled first-order model trained by the ``training`` learner, whose scores are pushed through
each word's head softmax (``pruner.objective: perceptron``), or an unlabeled arc model trained
by AdaGrad on a log-loss (``local``: each word's head softmax; ``crf``: the tree CRF,
probabilities being arc marginals by the matrix-tree theorem,
:func:`dparse.prune.tree_marginals`).

A saved pruner (a model's ``pruner/``) is the first-order model's directory, whose
``templates.json`` holds the version of the arc templates that every objective reads
(:mod:`dparse.templates`), with the pruning parameters in ``pruner.json``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dparse._ext.arcfeatures import FeatureSpace
from dparse._ext.arcprob import AdaGrad, score_heads
from dparse.config import ExperimentConfig
from dparse.decoders import get_decoder
from dparse.errors import DparseError
from dparse.folds import fold_of_sentences
from dparse.graph.model import ArcFactoredModel
from dparse.graph.online import run_epoch
from dparse.learning import AveragedLearner
from dparse.modeldir import PRUNER_DIR, PRUNER_FILE, check_model_dir
from dparse.outputs import write_text
from dparse.prune import EncodedPruner, head_softmax, keep_heads, tree_marginals
from dparse.vocab import EncodedSentence, Vocabulary

if TYPE_CHECKING:
    from dparse.mixing import Engine

log = logging.getLogger(__name__)
# AdaGrad skips the arcs whose loss gradient is at most this (probabilities far below any
# pruning threshold): most arcs of a sentence after the first epoch.
MIN_GRADIENT = 1e-4


class Pruner:
    """Keeps, for each word, its most probable heads under a first-order model.

    ``objective`` (``perceptron``, ``local`` or ``crf``, see the module doc) says what the
    probabilities are; ``model`` is an ArcFactoredModel, whose label weights stay zero and
    unread for ``local`` and ``crf`` (unlabeled scores, :func:`score_heads`).
    """

    def __init__(self, model: ArcFactoredModel, top_k: int, threshold: float,
                 relative: bool = False, objective: str = "perceptron",
                 single_root: bool = True) -> None:
        self.model = model
        self.top_k = top_k
        self.threshold = threshold
        self.relative = relative
        self.objective = objective
        self.single_root = single_root

    @property
    def labeled(self) -> bool:
        """Whether the model scores labels (the perceptron pruner)."""
        return self.objective == "perceptron"

    def scores(self, enc: EncodedSentence) -> np.ndarray:
        """The model's arc scores float64 [n+1, n+1] (labeled: with each arc's best label)."""
        if self.labeled:
            return self.model.score(enc)[0]
        return unlabeled_scores(enc, self.model.weights, self.model.space.arc_bits)

    def probabilities(self, arc: np.ndarray) -> np.ndarray:
        """Head probabilities float64 [n+1, n+1] from arc scores: the tree CRF's marginals
        (``crf``; where they cannot be computed precisely, :func:`tree_marginals`, each
        word's head softmax instead) or each word's head softmax."""
        if self.objective == "crf":
            try:
                return tree_marginals(arc, self.single_root)
            except DparseError:
                pass
        return head_softmax(arc)

    def allowed(self, enc: EncodedSentence) -> np.ndarray:
        """uint8 [n+1, n+1]: allowed[h, m] == 1 when the arc h -> m survives pruning
        (:func:`dparse.prune.keep_heads`: never empty, always each word's best head and a
        child of the root)."""
        return self.allowed_from_scores(self.scores(enc))

    def allowed_from_scores(self, arc: np.ndarray) -> np.ndarray:
        """``allowed`` from the pruner's arc scores float64 [n+1, n+1] (for a caller that
        needs them, or its labels, anyway)."""
        root_by = arc[0] if self.labeled else None
        return keep_heads(self.probabilities(arc), np.isfinite(arc), self.top_k,
                          self.threshold, self.relative, root_by)

    def write_files(self, directory: Path) -> None:
        """Write the first-order model and the pruning parameters into ``directory``."""
        self.model.write_files(directory)
        params = {"top_k": self.top_k, "threshold": self.threshold, "relative": self.relative,
                  "objective": self.objective, "single_root": self.single_root}
        write_text(directory / PRUNER_FILE, json.dumps(params))

    @classmethod
    def read_files(cls, directory: Path) -> Pruner:
        """Read what ``write_files`` wrote (files without the newer keys: the perceptron
        pruner with an absolute threshold)."""
        params = json.loads((directory / PRUNER_FILE).read_text(encoding="utf-8"))
        return cls(ArcFactoredModel.read_files(directory), params["top_k"], params["threshold"],
                   bool(params.get("relative", False)),
                   str(params.get("objective", "perceptron")),
                   bool(params.get("single_root", True)))


def model_pruner(directory: Path) -> EncodedPruner:
    """The first-order pruner of a saved second- or third-order model (its directory, checked
    against its manifest, or the ``pruner/`` directory itself), applicable to sentences."""
    directory = Path(directory)
    if not (directory / PRUNER_FILE).is_file():
        check_model_dir(directory)
        directory = directory / PRUNER_DIR
        if not (directory / PRUNER_FILE).is_file():
            raise DparseError(f"{directory.parent}: no first-order pruner (pruner/) in it")
    pruner = Pruner.read_files(directory)
    return EncodedPruner(pruner, pruner.model.vocab)


def unlabeled_scores(enc: EncodedSentence, weights: np.ndarray, arc_bits: int) -> np.ndarray:
    """Unlabeled first-order arc scores float64 [n+1, n+1] of ``enc`` under the first
    2**arc_bits entries of ``weights`` (float32 or float64)."""
    arc = np.empty((len(enc) + 1, len(enc) + 1), dtype=np.float64)
    score_heads(enc.tokens, enc.morph_ptr, enc.morph, weights, arc_bits, arc)
    return arc


def loss_gradient(pruner: Pruner, arc: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """d loss / d arc[h, m], float64 [n+1, n+1], of the pruner's log-loss on the gold tree
    ``heads`` (int [n+1]): probabilities minus the gold arcs (a word whose gold head is not
    annotated, -1, adds nothing)."""
    grad = pruner.probabilities(arc)
    words = np.flatnonzero(heads[1:] >= 0) + 1
    grad[:, 1:][:, heads[1:] < 0] = 0.0
    grad[heads[words], words] -= 1.0
    return grad


def fit_pruner(
    cfg: ExperimentConfig, vocab: Vocabulary, encoded: list[EncodedSentence], progress: bool,
    desc: str = "pruner",
) -> Pruner:
    """Train the first-order pruner on ``encoded`` for ``pruner.epochs`` epochs, keeping the
    last weights (no dev selection): the configured learner with Chu-Liu-Edmonds (averaged
    weights) for the perceptron objective, else AdaGrad on the log-loss."""
    from tqdm import tqdm  # here: parsing, which imports this module, never needs it

    pc = cfg.pruner
    space = FeatureSpace(pc.arc_bits, pc.label_bits if pc.objective == "perceptron" else 8,
                         len(vocab.labels))
    model = ArcFactoredModel(vocab, space, np.zeros(space.size, dtype=np.float32))
    pruner = Pruner(model, pc.top_k, pc.threshold, pc.relative, pc.objective,
                    cfg.decoder.single_root)
    rng = np.random.default_rng(cfg.training.seed)
    if pruner.labeled:
        learner = AveragedLearner(space.size, cfg.training.learner, cfg.training.C)
        decoder = get_decoder("cle")
        for epoch in range(1, pc.epochs + 1):
            order = rng.permutation(len(encoded))
            run_epoch(model, learner, [encoded[i] for i in order], decoder,
                      cfg.decoder.single_root, f"{desc} epoch {epoch}/{pc.epochs}", progress)
        model.weights = learner.averaged()
        return pruner
    adagrad = AdaGrad(pc.arc_bits, pc.eta)
    for epoch in range(1, pc.epochs + 1):
        order = rng.permutation(len(encoded))
        for i in tqdm(order, desc=f"{desc} epoch {epoch}/{pc.epochs}", unit="sent",
                      disable=not progress, leave=False, dynamic_ncols=True):
            enc = encoded[i]
            arc = unlabeled_scores(enc, adagrad.weights, pc.arc_bits)
            adagrad.step(enc.tokens, enc.morph_ptr, enc.morph,
                         loss_gradient(pruner, arc, enc.heads), MIN_GRADIENT)
    model.weights[: 1 << pc.arc_bits] = adagrad.averaged() if pc.average else adagrad.weights
    return pruner


def train_pruner(
    cfg: ExperimentConfig, vocab: Vocabulary, encoded: list[EncodedSentence], progress: bool,
    engine: Engine | None = None,
) -> Pruner:
    """Train the first-order pruner (:func:`fit_pruner`) and attach to every training sentence
    the arcs it keeps: those of the pruner itself, or with ``pruner.train_folds`` k >= 2 those
    of a pruner trained on the other k - 1 of k contiguous folds (a jackknife: the training
    graphs then look like those of unseen sentences, not like the far sparser graphs of a
    pruner that has seen them). With an ``engine`` (:mod:`dparse.batch.engines`) the pruner
    and its folds train as tasks on its workers."""
    k = cfg.pruner.train_folds
    serial = engine is None
    everything = np.ones(len(encoded), dtype=bool)
    # (sentences it trains on, sentences whose arcs it keeps, whether the pruner is kept)
    plans = [(everything, everything if k < 2 else ~everything, True)]
    if k >= 2:
        fold_of = fold_of_sentences(len(encoded), k)
        plans += [(fold_of != f, fold_of == f, False) for f in range(1, k + 1)]
    shared = (cfg, vocab, encoded) if serial else tuple(
        engine.share(value) for value in (cfg, vocab, encoded))
    calls = [(*shared, train, prune, keep, progress and serial,
              "pruner" if keep else f"pruner fold {f}/{k}")
             for f, (train, prune, keep) in enumerate(plans)]
    results = ([fit_and_prune(*call) for call in calls] if serial
               else engine.run_tasks(fit_and_prune, calls))
    for (_, prune, _), (_, allowed) in zip(plans, results, strict=True):
        for i, arcs in zip(np.flatnonzero(prune), allowed, strict=True):
            encoded[i].allowed = arcs
    recall, heads = pruning_recall(encoded)
    log.info("pruner keeps %.2f%% of gold training arcs, %.2f heads per word", recall, heads)
    pruner = results[0][0]
    assert pruner is not None
    return pruner


def fit_and_prune(cfg: ExperimentConfig, vocab: Vocabulary, encoded: list[EncodedSentence],
                  train: np.ndarray, prune: np.ndarray, keep: bool, progress: bool, desc: str
                  ) -> tuple[Pruner | None, list[np.ndarray]]:
    """A pruner fitted on the sentences of ``encoded`` that ``train`` (bool [len]) marks
    (:func:`fit_pruner`), and the arcs (``allowed``) it keeps in those ``prune`` marks; the
    pruner itself only if ``keep`` (a task then sends it back)."""
    pruner = fit_pruner(cfg, vocab, [encoded[i] for i in np.flatnonzero(train)], progress,
                        desc)
    allowed = [pruner.allowed(encoded[i]) for i in np.flatnonzero(prune)]
    return (pruner if keep else None), allowed


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
