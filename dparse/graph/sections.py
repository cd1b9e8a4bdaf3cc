"""The graph family's config sections: ``pruner`` (the first-order pruner of higher-order
models) and ``ensemble`` (``dparse ensemble``). Data only, as :mod:`dparse.sections`."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PrunerConfig:
    """The first-order pruner of a second- or third-order model (and, with ``first_order``, of
    a first-order one): for each word, keep its heads whose probability is at least
    ``threshold`` (with ``relative``: ``threshold`` times the probability of the word's best
    head), at most ``top_k`` of them. The model then scores and decodes only the arcs kept.

    ``objective`` says how the pruner is trained and what its probabilities are:
    ``perceptron`` (the ``training`` section's learner on labeled arcs, ``epochs`` epochs;
    probabilities: the softmax of the scores over each word's heads), ``local`` (unlabeled arcs,
    head-softmax log-loss) or ``crf`` (unlabeled arcs, tree CRF log-loss; probabilities: arc
    marginals by the matrix-tree theorem, as TurboParser's pruner); the last two train by
    AdaGrad with step ``eta`` (keeping the average of the weights over all steps with
    ``average``) and ignore ``label_bits``. ``train_folds`` k >= 2 prunes the training
    sentences by a k-fold jackknife (each fold by a pruner trained on the others; 0: by the
    pruner itself, which on small training sets keeps far fewer heads there than on new data).
    """

    top_k: int = 10
    threshold: float = 0.0001
    relative: bool = False
    objective: str = "perceptron"
    eta: float = 0.1
    average: bool = False
    train_folds: int = 0
    epochs: int = 4
    arc_bits: int = 21
    label_bits: int = 15
    first_order: bool = False  # a first-order model (features.order 1) prunes too


@dataclass
class EnsembleConfig:
    """``dparse ensemble`` (Tchernowitz et al. 2016, Section 7): every part of the other
    parser's tree is raised by ``gamma1`` (arcs) or ``gamma2`` (sibling and grandparent parts)
    before decoding with ``decoder`` (a registered name) and its keyword ``options``."""

    gamma1: float = 1.0
    gamma2: float = 0.25
    decoder: str = "bgi-pp"
    options: dict = field(default_factory=dict)
