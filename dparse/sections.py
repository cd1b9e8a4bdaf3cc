"""The core sections of an experiment config (``data``, ``features``, ``decoder``,
``training``) as typed dataclasses, and the whole :class:`ExperimentConfig`: data only,
importing nothing of dparse, so that both :mod:`dparse.config` (which reads and validates
them, and re-exports them) and each parser family's checks (registered in
:mod:`dparse.families`, which dparse.config imports) can name them. Each family's own sections
live in its subpackage (``dparse/graph/sections.py``, ...).
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
class ExperimentConfig:
    """A whole experiment: what to train on, with which features, decoder and learner.

    The core sections are fields; the sections of the parser families
    (:func:`dparse.families.family_sections`: ``pruner``, ``umst``, ``rerank``, ...) are the
    mapping ``family_sections``, key -> section, in registry order, which
    :func:`dparse.config.load_config` fills with every registered section; each is also an
    attribute (``cfg.pruner``)."""

    name: str = "experiment"
    parser: str = "graph"
    data: DataConfig = field(default_factory=DataConfig)
    features: FeatureConfig = field(default_factory=FeatureConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    family_sections: dict[str, Any] = field(default_factory=dict)
    data_root: str = DEFAULT_DATA_ROOT

    def __getattr__(self, name: str) -> Any:
        """A family's section by its key (``cfg.umst``). Called only for names that are not
        fields; reads ``__dict__`` so that an instance being unpickled (no fields yet) raises
        AttributeError rather than recursing."""
        sections = self.__dict__.get("family_sections")
        if sections is None or name not in sections:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return sections[name]

    def data_path(self, relative: str) -> Path:
        """A treebank path resolved against the data root (absolute paths are kept)."""
        path = Path(relative)
        return path if path.is_absolute() else Path(self.data_root) / path

    def to_dict(self) -> dict[str, Any]:
        """The resolved config (what is saved next to a model): ``name``, ``parser``, the core
        sections, then the families' sections in registry order."""
        out = dataclasses.asdict(self)
        del out["data_root"]
        out.update(out.pop("family_sections"))
        return out


# The core sections, by key: a YAML file holds any of them and any family's (absent ones take
# the defaults).
CORE_SECTIONS: dict[str, type] = {
    "data": DataConfig,
    "features": FeatureConfig,
    "decoder": DecoderConfig,
    "training": TrainingConfig,
}

# A parser family's check of its section(s) of a loaded config (:mod:`dparse.families`):
# ``check(cfg, source)`` raises ConfigError starting with ``source`` (the config file) and
# naming the key.
SectionCheck = Callable[[ExperimentConfig, str], None]
