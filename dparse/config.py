"""YAML experiment configs -> typed, validated objects.

A config has the sections ``data``, ``features``, ``decoder`` and ``training`` (see
``configs/en_ewt/o1-cle.yaml`` for every key, commented), and optionally ``pruner`` (second
order, ``configs/en_ewt/o2-dd.yaml``), ``umst`` and ``ensemble`` (``dparse ensemble``,
``configs/en_ewt/o1-bgi-pp.yaml``). ``--set key.path=value`` overrides
patch the YAML before validation; values are parsed as YAML scalars (``--set training.epochs=3``).
Treebank paths are relative to the data root: ``--data-root``, else ``$DPARSE_DATA``, else
``../shared/data``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dparse.columns import parse_columns_setting
from dparse.errors import ConfigError
from dparse.outputs import write_text

DEFAULT_DATA_ROOT = "../shared/data"
PUNCT_RULES = ("include", "conll", "ptb", "upos")
PARSERS = ("graph", "easyfirst", "umst", "shiftreduce", "rerank")
PRUNER_OBJECTIVES = ("perceptron", "local", "crf")


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
    """The first-order pruner of a second- or third-order model: for each word, keep its heads
    whose probability is at least ``threshold`` (with ``relative``: ``threshold`` times the
    probability of the word's best head), at most ``top_k`` of them.

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


@dataclass
class DecoderConfig:
    """The decoder that parsing uses (and training, unless ``training.decoder`` is set), by
    registered name, with keyword ``options``. ``single_root``: exactly one word attached to
    the root (true), any number (false), or ``auto``: true when every training tree has one
    root word, false otherwise (the CoNLL 2007 Basque data, where 1007 of 2595 training trees
    have several), decided by :func:`load_config` from the training file, so that a saved
    model's config records the choice."""

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
}


class YamlLoader(yaml.SafeLoader):
    """The safe loader, reading floats as YAML 1.2 does: ``1e-9`` and ``2E5`` are numbers (YAML
    1.1, PyYAML's default, wants a dot, ``1.0e-9``, and reads ``1e-9`` as a string)."""


YamlLoader.yaml_implicit_resolvers = {
    key: list(resolvers) for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def load_yaml(text: Any) -> Any:
    """A YAML document (a string or a file) read by :class:`YamlLoader`."""
    return yaml.load(text, Loader=YamlLoader)


def apply_overrides(raw: dict[str, Any], overrides: list[str], source: str) -> None:
    """Patch ``raw`` in place with ``key.path=value`` strings."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{source}: override {item!r} is not of the form key.path=value")
        node = raw
        parts = key.split(".")
        for part in parts[:-1]:
            if node.get(part) is None:  # absent, or a section left empty in the YAML
                node[part] = {}
            node = node[part]
            if not isinstance(node, dict):
                raise ConfigError(f"{source}: override {item!r}: {part!r} is not a section")
        try:
            node[parts[-1]] = load_yaml(value)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{source}: override {key}: {value!r} is not a YAML value") from exc


def _build(cls: type, raw: Any, where: str) -> Any:
    """Instantiate a config dataclass from a mapping, checking keys and value types."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(raw).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}"
        )
    values = {}
    for name, value in raw.items():
        default = getattr(cls(), name)
        if fields[name].type == "bool | str":  # true, false or "auto"
            ok = isinstance(value, bool) or value == "auto"
        elif isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(default, float):
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif isinstance(default, dict):
            ok = isinstance(value, dict)
        elif fields[name].type == "float | None":
            ok = value is None or isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value) if ok and value is not None else value
        else:
            ok = value is None or isinstance(value, str)
        if not ok:
            raise ConfigError(f"{where}.{name}: bad value {value!r}")
        values[name] = value
    return cls(**values)


def validate(cfg: ExperimentConfig, source: str) -> None:
    """Check the values that have a fixed set of choices or ranges."""
    if not cfg.data.train:
        raise ConfigError(f"{source}: data.train is required")
    if cfg.parser not in PARSERS:
        raise ConfigError(f"{source}: parser must be one of {', '.join(PARSERS)}")
    try:
        parse_columns_setting(cfg.data.columns)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None
    if cfg.features.tag not in ("auto", "upos", "xpos"):
        raise ConfigError(f"{source}: features.tag must be auto, upos or xpos")
    if cfg.features.order not in (1, 2, 3):
        raise ConfigError(f"{source}: features.order must be 1, 2 or 3")
    if cfg.training.invalid_updates not in ("skip", "keep"):
        raise ConfigError(f"{source}: training.invalid_updates must be skip or keep")
    if cfg.features.order == 3:
        _validate_third_order(cfg, source)
    if not cfg.features.siblings and cfg.features.order != 2:
        raise ConfigError(f"{source}: features.siblings: false is for second-order models "
                          "(features.order: 2)")
    if not cfg.features.siblings and not cfg.features.grandparents:
        raise ConfigError(f"{source}: features.siblings and features.grandparents are both "
                          "false: a second-order model needs one of them")
    if cfg.pruner.top_k < 1 or not 0.0 <= cfg.pruner.threshold < 1.0:
        raise ConfigError(f"{source}: pruner.top_k must be >= 1 and threshold in [0, 1)")
    if cfg.pruner.train_folds < 0 or cfg.pruner.train_folds == 1:
        raise ConfigError(f"{source}: pruner.train_folds must be 0 (no jackknife) or >= 2")
    if cfg.pruner.objective not in PRUNER_OBJECTIVES or cfg.pruner.eta <= 0.0:
        raise ConfigError(f"{source}: pruner.objective must be one of "
                          f"{', '.join(PRUNER_OBJECTIVES)} and pruner.eta positive")
    if (cfg.features.order == 3 and cfg.features.first_order_labels
            and cfg.pruner.objective != "perceptron"):
        raise ConfigError(f"{source}: features.first_order_labels needs a labeled pruner "
                          "(pruner.objective: perceptron)")
    if cfg.training.learner not in ("perceptron", "pa"):
        raise ConfigError(f"{source}: training.learner must be 'perceptron' or 'pa'")
    if cfg.training.epochs < 1:
        raise ConfigError(f"{source}: training.epochs must be at least 1")
    if cfg.training.C <= 0:
        raise ConfigError(f"{source}: training.C must be positive")
    if cfg.training.select_by not in ("uas", "las"):
        raise ConfigError(f"{source}: training.select_by must be 'uas' or 'las'")
    if cfg.training.punct not in PUNCT_RULES:
        raise ConfigError(f"{source}: training.punct must be one of {', '.join(PUNCT_RULES)}")
    if not 10 <= cfg.features.arc_bits <= 30 or not 8 <= cfg.features.label_bits <= 26:
        raise ConfigError(f"{source}: features.arc_bits in 10..30 and label_bits in 8..26")
    u = cfg.umst
    if u.method not in ("kkt", "boruvka") or u.prune not in ("length-dictionary", "none"):
        raise ConfigError(f"{source}: umst.method must be kkt or boruvka, umst.prune "
                          "length-dictionary or none")
    if u.lep_steps < 0 or u.prune_min_count < 1 or not 0.0 < u.prune_quantile <= 1.0:
        raise ConfigError(f"{source}: umst.lep_steps >= 0, prune_min_count >= 1, "
                          "prune_quantile in (0, 1]")
    if u.prune_column not in ("auto", "xpos", "upos"):
        raise ConfigError(f"{source}: umst.prune_column must be auto, xpos or upos")
    if u.edge_features not in ("left-right", "both"):
        raise ConfigError(f"{source}: umst.edge_features must be left-right or both")
    from dparse._ext.arcfeatures import EDGE_GROUPS

    names = u.edge_template_names()
    if any(n not in EDGE_GROUPS for n in names) or len(set(names)) < len(names):
        raise ConfigError(f"{source}: umst.edge_templates: {u.edge_templates!r} must be none or "
                          f"a comma-separated subset of {', '.join(EDGE_GROUPS)}")
    sr = cfg.shiftreduce
    if sr.system not in ("nonspurious", "spurious") or sr.update not in ("early",
                                                                          "max-violation"):
        raise ConfigError(f"{source}: shiftreduce.system must be nonspurious or spurious, "
                          "shiftreduce.update early or max-violation")
    if sr.beam < 1:
        raise ConfigError(f"{source}: shiftreduce.beam must be at least 1")
    if sr.upos_pair and cfg.features.tag == "upos":
        raise ConfigError(f"{source}: shiftreduce.upos_pair pairs XPOS with UPOS: it needs "
                          "features.tag xpos (or auto), not upos")
    if cfg.parser == "rerank":
        _validate_rerank(cfg, source)
    e = cfg.ensemble
    if not (0.0 <= e.gamma1 < float("inf") and 0.0 <= e.gamma2 < float("inf")):
        raise ConfigError(f"{source}: ensemble.gamma1 and ensemble.gamma2 must be finite and >= 0")
    if cfg.training.decoder is None and cfg.training.decoder_options:
        raise ConfigError(f"{source}: training.decoder_options needs training.decoder (with a "
                          "null training.decoder, training uses decoder.name and decoder.options)")
    if cfg.training.decoder is not None and cfg.parser != "graph":
        raise ConfigError(f"{source}: training.decoder is for graph parsers only "
                          f"(this config's parser is {cfg.parser})")
    decoders = [("ensemble.decoder", e.decoder, "ensemble.options", e.options)]
    if cfg.parser == "graph":
        decoders.append(("decoder.name", cfg.decoder.name, "decoder.options", cfg.decoder.options))
    if cfg.training.decoder is not None:
        decoders.append(("training.decoder", cfg.training.decoder, "training.decoder_options",
                         cfg.training.decoder_options))
    for key, name, options_key, options in decoders:
        check_decoder(source, key, name, options_key, options)


def _validate_rerank(cfg: ExperimentConfig, source: str) -> None:
    """The rerank keys (the first-stage config itself is read when training)."""
    r = cfg.rerank
    if not r.first_stage:
        raise ConfigError(f"{source}: rerank.first_stage must name the shift-reduce config")
    if r.folds < 2 or r.k < 1 or r.train_k < 1 or r.first_stage_beam < 0:
        raise ConfigError(f"{source}: rerank.folds must be >= 2, rerank.k and train_k >= 1, "
                          "rerank.first_stage_beam >= 0")
    if r.features not in ("local", "nonlocal"):
        raise ConfigError(f"{source}: rerank.features must be local or nonlocal")
    if r.beta is not None and not 0.0 <= r.beta < float("inf"):
        raise ConfigError(f"{source}: rerank.beta must be null or a finite number >= 0")
    try:
        beta_grid(r.beta_grid)
    except ValueError as exc:
        raise ConfigError(f"{source}: rerank.beta_grid: {exc}") from None


def beta_grid(spec: str) -> list[float]:
    """The betas of ``start:stop:step`` (stop included), e.g. ``0:4:0.1``."""
    parts = spec.split(":")
    try:
        start, stop, step = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"{spec!r} is not start:stop:step") from None
    if not (0.0 <= start <= stop < float("inf") and step > 0.0):
        raise ValueError(f"{spec!r} needs 0 <= start <= stop and step > 0")
    count = int(round((stop - start) / step)) + 1
    if count > 10000:
        raise ValueError(f"{spec!r} has more than 10000 values")
    return [round(start + i * step, 10) for i in range(count)]


def _validate_third_order(cfg: ExperimentConfig, source: str) -> None:
    """The third-order keys: groups, sizes, and decoders that can score the model."""
    from dparse.errors import DparseError
    from dparse.graph.thirdorder_settings import ThirdOrderSettings, check_decoder_fits

    f = cfg.features
    if f.labels_per_arc < 1 or not 10 <= f.ho_bits <= 30:
        raise ConfigError(f"{source}: features.labels_per_arc must be >= 1 and ho_bits in 10..30")
    try:
        settings = ThirdOrderSettings.from_config(cfg)
        for key, name in (("decoder.name", cfg.decoder.name),
                          ("training.decoder", cfg.training.decoder)):
            if name is not None:
                try:
                    check_decoder_fits(settings, name)
                except DparseError as exc:
                    raise ValueError(f"{key}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def check_decoder(source: str, key: str, name: str, options_key: str, options: dict) -> None:
    """ConfigError naming ``key`` unless ``name`` is a registered decoder, or naming
    ``options_key`` unless the decoder accepts ``options`` (tried on a two-word sentence, when
    there are options: a decoder's extension is loaded at its first call)."""
    import numpy as np

    from dparse.decoders import UnknownDecoderError, configured_decoder

    try:
        decoder = configured_decoder(name, options)
    except UnknownDecoderError as exc:
        raise ConfigError(f"{source}: {key}: {exc}") from None
    if not options:
        return
    try:
        decoder.decode(np.zeros((3, 3)))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source}: {options_key} {options} rejected by decoder {name!r}: "
                          f"{exc}") from None


def read_yaml(path: str | os.PathLike) -> Any:
    """The YAML document in ``path``; ConfigError naming the file if it cannot be read or
    parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return load_yaml(f)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None


def load_config(
    path: str | os.PathLike | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    data_root: str | None = None,
    raw: dict[str, Any] | None = None,
) -> ExperimentConfig:
    """Read a YAML config (or take an already-parsed mapping), apply overrides, validate."""
    source = str(path) if path is not None else "<config>"
    if raw is None:
        if path is None:
            raise ConfigError("no config given")
        raw = read_yaml(path) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a mapping")
    apply_overrides(raw, list(overrides), source)
    unknown = sorted(set(raw) - set(SECTIONS) - {"name", "parser"})
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(unknown)}")
    name = raw.get("name", Path(source).stem)
    if not isinstance(name, str):
        raise ConfigError(f"{source}: name must be a string, got {name!r}")
    cfg = ExperimentConfig(
        name=name,
        parser=str(raw.get("parser", "graph")),
        data_root=data_root or os.environ.get("DPARSE_DATA") or DEFAULT_DATA_ROOT,
        **{key: _build(cls, raw.get(key), f"{source}: {key}") for key, cls in SECTIONS.items()},
    )
    first = cfg.rerank.first_stage
    if first and path is not None and not Path(first).is_absolute():
        cfg.rerank.first_stage = os.path.normpath(Path(path).parent / first)
    validate(cfg, source)
    if cfg.decoder.single_root == "auto":
        train = str(cfg.data_path(cfg.data.train))
        try:
            st = os.stat(train)
        except OSError as exc:
            raise ConfigError(f"{source}: decoder.single_root auto reads the training file "
                              f"{train}: {exc.strerror}") from None
        cfg.decoder.single_root = _single_rooted_file(train, cfg.data.format,
                                                      cfg.data.encoding, st.st_mtime_ns,
                                                      st.st_size)
    return cfg


@functools.lru_cache(maxsize=64)
def _single_rooted_file(path: str, fmt: str | None, encoding: str, mtime_ns: int,
                        size: int) -> bool:
    """Whether every tree of the training file ``path`` has exactly one root word
    (``decoder.single_root: auto``); read once per process while the file is unchanged."""
    from dparse.conll import read_conll
    from dparse.trees import root_words

    return all(len(s.heads) < 2 or root_words(s.heads) == 1
               for s in read_conll(path, fmt=fmt, encoding=encoding))


def save_config(cfg: ExperimentConfig, path: Path) -> None:
    """Write the resolved config as YAML, whole or not at all (:mod:`dparse.outputs`)."""
    write_text(path, yaml.safe_dump(cfg.to_dict(), sort_keys=False))
