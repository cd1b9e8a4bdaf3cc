"""The sections of an experiment config as typed dataclasses, and the whole
:class:`ExperimentConfig`: data only, importing nothing of dparse, so that both
:mod:`dparse.config` (which reads and validates them, and re-exports them) and each parser
family's checks (registered in :mod:`dparse.families`, which dparse.config imports) can name them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_DATA_ROOT = "../shared/data"


@dataclass
class DataConfig:
    """Treebank files (relative to the data root) and how to read them.

    Every training and dev sentence must be a tree (:mod:`dparse.gold`); with
    ``skip_invalid_trees`` those that are not are left out (and counted on stderr) instead of
    stopping training with an error. ``columns``: the token columns the model reads (``auto``:
    those the dev file fills about as often as the training file; ``all``; or a
    comma-separated subset of lemma, upos, xpos, feats; :mod:`dparse.columns`).
    """

    train: str = ""
    dev: str | None = None
    test: str | None = None
    format: str | None = None
    encoding: str = "utf-8"
    skip_invalid_trees: bool = False
    columns: str = "auto"


@dataclass
class FeatureConfig:
    """Sizes of the hashed weight vector: 2**arc_bits arc weights, 2**label_bits label rows.

    Second order (``order: 2``) adds consecutive-sibling parts (unless ``siblings`` is false)
    and grandparent parts (unless ``grandparents`` is false), with 2**sib_bits and
    2**grand_bits weights.

    Third order (``order: 3``, dparse.graph.thirdorder): labeled arcs (2**label_bits label rows)
    plus the higher-order feature ``groups`` ("none" or a comma-separated subset of sib, grand,
    trisib, gsib, sibgrand, valency, position) in 2**ho_bits weights, with the labels of
    every arc of a part conjoined in if ``label_tuples``; each arc the pruner keeps enters the
    chart with its ``labels_per_arc`` best labels; ``first_order_labels`` stacks the pruner's
    best label of each arc as a label feature.

    The easy-first parser reads 2**arc_bits rows of action weights and the tag column ``tag``
    (``upos``, ``xpos`` or ``auto``: chosen from the training data), in which the
    space-separated ``prepositions`` and ``coordinators`` tags are lexicalized (and
    prepositions fire the PP-attachment features); ``auto`` lists follow the chosen column
    (UPOS: ADP and CCONJ; PTB XPOS: IN and CC; rules in :mod:`dparse.postags`). The
    shift-reduce parser and the reranker's word classes read the same keys. Easy-first
    ``templates`` adds template groups to the paper's: ``none`` or a comma-separated subset of
    ``lexical`` (suffix, lemma and the other tag column of the window's heads), ``feats``
    (their morphological features, hashed whole) and ``atoms`` (each morphological feature of
    the two structures a location joins, apart), for morphologically rich languages.
    """

    arc_bits: int = 23
    label_bits: int = 17
    order: int = 1
    sib_bits: int = 22
    grand_bits: int = 22
    grandparents: bool = True
    siblings: bool = True
    groups: str = "sib,grand,trisib,gsib,sibgrand,valency,position"
    label_tuples: bool = True
    labels_per_arc: int = 2
    ho_bits: int = 22
    first_order_labels: bool = False
    tag: str = "auto"
    prepositions: str = "auto"
    coordinators: str = "auto"
    templates: str = "none"


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
class DecoderConfig:
    """The decoder that parsing uses (and training, unless ``training.decoder`` is set), by
    registered name, with keyword ``options``. ``single_root``: exactly one word attached to
    the root (true), any number (false), or ``auto``: true when every training tree has one
    root word, false otherwise (the CoNLL 2007 Basque data, where 1007 of 2595 training trees
    have several), decided by :func:`dparse.config.load_config` from the training file, so
    that a saved model's config records the choice."""

    name: str = "cle"
    single_root: bool | str = True
    options: dict = field(default_factory=dict)


@dataclass
class TrainingConfig:
    """Online training: learner, epochs, seeded shuffling, model selection on dev.

    ``decoder`` (a registered name, with keyword ``decoder_options``) is the decoder that
    predicts the training sentences; None trains with the ``decoder`` section's. The dev
    epochs are always decoded with the ``decoder`` section's (the parsing) decoder.
    """

    learner: str = "pa"
    epochs: int = 10
    C: float = 0.05
    seed: int = 1
    shuffle: bool = True
    select_by: str = "las"
    punct: str = "include"
    decoder: str | None = None
    decoder_options: dict = field(default_factory=dict)
    # pa: what happens when the cost-augmented prediction does not outscore gold (a search
    # error of an approximate decoder; PA's loss is then <= 0): "skip" the update (PA's own
    # rule), or "keep" it, stepping as if the prediction had tied gold (loss = its cost).
    # The perceptron updates on every wrong prediction either way.
    invalid_updates: str = "skip"


@dataclass
class UmstConfig:
    """The undirected MST parser (``parser: umst``, dparse.undirected.parser): LEP moves, the
    directed model that scores them and labels arcs, the MST algorithm and the length-dictionary
    pruner."""

    lep_steps: int = 0
    directed_model: str | None = None
    edge_features: str = "left-right"
    method: str = "kkt"
    prune: str = "length-dictionary"
    prune_column: str = "auto"
    prune_quantile: float = 1.0
    prune_min_count: int = 1
    # Undirected-only templates added to the stripped first-order features: "none" (the
    # first-order set alone) or a comma-separated subset of between-counts, between-xpos,
    # context, morph (dparse/_ext/arcfeatures.pyx, edge_features).
    edge_templates: str = "none"

    def edge_template_names(self) -> list[str]:
        """The template groups of ``edge_templates`` ([] for none)."""
        if self.edge_templates == "none":
            return []
        return [n.strip() for n in self.edge_templates.split(",")]


@dataclass
class EnsembleConfig:
    """``dparse ensemble`` (Tchernowitz et al. 2016, Section 7): every part of the other
    parser's tree is raised by ``gamma1`` (arcs) or ``gamma2`` (sibling and grandparent parts)
    before decoding with ``decoder`` (a registered name) and its keyword ``options``."""

    gamma1: float = 1.0
    gamma2: float = 0.25
    decoder: str = "bgi-pp"
    options: dict = field(default_factory=dict)


@dataclass
class ShiftReduceConfig:
    """The beam shift-reduce parser (``parser: shiftreduce``, dparse.transition): transition
    ``system`` (nonspurious: Hayashi et al. 2013's arc-standard without spurious ambiguity, or
    spurious: plain arc-standard), ``beam`` width, perceptron ``update`` (early or
    max-violation), ``force_gold``: keep the gold state in the beam when parsing (the
    input's heads; for training forests that must contain the gold tree), and ``upos_pair``:
    with ``features.tag`` xpos, the templates read the pair (XPOS, UPOS) as the tag."""

    system: str = "nonspurious"
    beam: int = 12
    update: str = "early"
    force_gold: bool = False
    upos_pair: bool = False


@dataclass
class RerankConfig:
    """Forest reranking (``parser: rerank``, dparse.rerank; Hayashi, Kondo and Matsumoto 2013,
    Sections 5-6): ``first_stage`` names the shift-reduce config (a path relative to this
    config's file) whose packed forests are reranked; the training forests come from ``folds``
    jackknifed first-stage models (gold state forced into the beam), kept in ``work`` (null:
    the model directory's path + ``.work``; reused by later runs). ``features`` is ``local``
    (Viterbi over the forest) or ``nonlocal`` (cube pruning, ``k`` items per vertex when
    parsing, ``train_k`` when training); ``guide`` adds the first-stage 1-best tree's arcs as
    features; ``beta`` scales the first-stage score at parse time (null: tuned on dev by a line
    search over ``beta_grid``); ``labels`` scores each arc under its best label too (label rows
    of 2**features.label_bits, the first stage's label set). Parse-time keys of a trained model:
    ``k``, ``beta`` (null: the tuned one) and ``first_stage_beam`` (0: the first stage's own)."""

    first_stage: str = ""
    folds: int = 20
    work: str | None = None
    features: str = "local"
    k: int = 3
    train_k: int = 5
    guide: bool = True
    labels: bool = False
    beta: float | None = None
    beta_grid: str = "0:4:0.1"
    first_stage_beam: int = 0


@dataclass
class TaggingConfig:
    """A tagger (``parser: tagger``, dparse.tagging): a word type seen at least
    ``dictionary_min_count`` times in training may take only the classes it took there; types
    seen fewer than ``ambiguity_min_count`` times read the unknown ambiguity class, as new
    words do; with ``ambiguity_folds`` k >= 2 a training word reads the ambiguity class that
    the other folds of a k-fold jackknife give its form; ``lexicon``: a (form, UPOS) pair
    lemmatized in training takes its most frequent lemma there instead of a predicted rule;
    ``draft_folds`` k >= 2: a draft UPOS pass first, whose tags of the words to the right the
    UPOS pass reads, jackknifed in k folds on the training data (0: no draft). The weights are
    exact, one per feature and class that training updated (dparse.tagging.tagger)."""

    dictionary_min_count: int = 1000000
    ambiguity_min_count: int = 1
    ambiguity_folds: int = 5
    lexicon: bool = True
    draft_folds: int = 5


@dataclass
class TaggerConfig:
    """The tagger of a parser trained on predicted tags (a pipeline model): ``config`` (a
    tagger config, relative to this config's file) or ``model`` (a trained tagger's directory,
    whose config trains the folds); the training file is tagged by a ``folds``-fold jackknife,
    dev by the whole tagger, which the parser's model directory then carries. Empty: gold tags
    (no tagger)."""

    config: str = ""
    model: str = ""
    folds: int = 10


@dataclass
class ExperimentConfig:
    """A whole experiment: what to train on, with which features, decoder and learner."""

    name: str = "experiment"
    parser: str = "graph"
    data: DataConfig = field(default_factory=DataConfig)
    features: FeatureConfig = field(default_factory=FeatureConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)
    pruner: PrunerConfig = field(default_factory=PrunerConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    umst: UmstConfig = field(default_factory=UmstConfig)
    ensemble: EnsembleConfig = field(default_factory=EnsembleConfig)
    shiftreduce: ShiftReduceConfig = field(default_factory=ShiftReduceConfig)
    rerank: RerankConfig = field(default_factory=RerankConfig)
    tagging: TaggingConfig = field(default_factory=TaggingConfig)
    tagger: TaggerConfig = field(default_factory=TaggerConfig)
    data_root: str = DEFAULT_DATA_ROOT

    def data_path(self, relative: str) -> Path:
        """A treebank path resolved against the data root (absolute paths are kept)."""
        path = Path(relative)
        return path if path.is_absolute() else Path(self.data_root) / path

    def to_dict(self) -> dict[str, Any]:
        """The resolved config (what is saved next to a model)."""
        out = dataclasses.asdict(self)
        del out["data_root"]
        return out


# The config's sections, by key: a YAML file holds any of them (absent ones take the defaults).
SECTIONS = {
    "data": DataConfig,
    "features": FeatureConfig,
    "decoder": DecoderConfig,
    "pruner": PrunerConfig,
    "training": TrainingConfig,
    "umst": UmstConfig,
    "ensemble": EnsembleConfig,
    "shiftreduce": ShiftReduceConfig,
    "rerank": RerankConfig,
    "tagging": TaggingConfig,
    "tagger": TaggerConfig,
}

# A parser family's check of its section(s) of a loaded config (:mod:`dparse.families`):
# ``check(cfg, source)`` raises ConfigError starting with ``source`` (the config file) and
# naming the key.
SectionCheck = Callable[[ExperimentConfig, str], None]
