"""The easy-first non-directional parser (Goldberg and Elhadad 2010): model, parsing, training.

Parsing is Algorithm 1 in C (:mod:`dparse.transition.easyfirst_core`): one call per sentence,
the argmax found by a max-scan (``easyfirst-scan``, what the paper's own implementation does) or
an indexed heap (``easyfirst-heap``); both give the same parses. Training is Algorithm 2, the
structured perceptron with the valid-action update and parameter averaging
(:class:`AveragedLearner`'s ``w``/``u`` trick), on projectivized training trees
(:mod:`dparse.projectivize`). Each epoch the averaged weights parse the dev file and the best
epoch is kept, as for the graph parser. On several workers the epochs are mixed from shards
(:class:`EasyFirstShard`, :mod:`dparse.mixing`).

The tag column t_p reads and the prepositions and coordinators among its tags are resolved on
the training data when the config says ``auto`` (:mod:`dparse.postags`) and stored in the model.
A saved model is a directory with ``weights.bin`` (float32 weights, the layout sizes, the tag
column, the tag flags and the template groups), ``vocab.json``, ``templates.json`` (the version
of the templates of dparse/transition/easyfirst_core.pyx: a model of another version is
refused, :mod:`dparse.templates`) and ``config.yaml``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from dparse.config import ExperimentConfig
from dparse.conll import Sentence
from dparse.constraints import Constraints, checked, fixed_deprels
from dparse.epochs import (
    EpochReport,
    PerceptronTrainResult,
    mixing_engine,
    read_projective_training,
    run_perceptron_epochs,
    training_vocabulary,
)
from dparse.errors import ConfigError, DparseError
from dparse.learning import AveragedLearner
from dparse.mixing import ModelShard
from dparse.modeldir import (
    VOCAB_FILE,
    WEIGHTS_FILE,
    SavedModel,
    load_arrays,
    require_model_files,
    save_arrays,
)
from dparse.postags import TagSettings
from dparse.templates import EASYFIRST, check_templates, write_templates
from dparse.timer import ParseTimer
from dparse.transition.easyfirst_core import (
    TAG_LEXICAL,
    TAG_PREPOSITION,
    TEMPLATE_GROUPS,
    layout_size,
    train_sentence,
)
from dparse.transition.easyfirst_core import parse as parse_encoded_sentence
from dparse.trees import root_words
from dparse.vocab import TAG_COLUMNS, EncodedSentence, Vocabulary

if TYPE_CHECKING:  # training's modules: not imported to parse
    from dparse.batch.engines import WorkerOptions
    from dparse.mixing import ShardLearner

DECODERS = {"easyfirst-scan": False, "easyfirst-heap": True}  # name -> use_heap
MAX_UPDATES = 1000  # updates of one step after which the best valid action is forced
log = logging.getLogger(__name__)


def use_heap(decoder_name: str) -> bool:
    """Whether a decoder name asks for the heap argmax (else the max-scan)."""
    if decoder_name not in DECODERS:
        raise ConfigError(f"easy-first decoder must be one of {', '.join(DECODERS)}, "
                          f"got {decoder_name!r}")
    return DECODERS[decoder_name]


def tag_flags(vocab: Vocabulary, tags: TagSettings) -> np.ndarray:
    """uint8 [n_tags]: per id of the ``tags.column`` vocabulary, TAG_LEXICAL for the
    prepositions and coordinators (lexicalized t_p) and TAG_PREPOSITION for the prepositions."""
    preps = set(tags.prepositions)
    return vocab.tag_classes(tags.column, {TAG_LEXICAL: preps | set(tags.coordinators),
                                           TAG_PREPOSITION: preps})


def template_bits(spec: str | None) -> int:
    """The TEMPLATE_GROUPS bits of ``features.templates`` (none or a comma-separated
    subset of the groups' names)."""
    if not spec or spec == "none":
        return 0
    bits = 0
    for name in spec.split(","):
        if name.strip() not in TEMPLATE_GROUPS:
            raise ConfigError(f"features.templates: unknown group {name.strip()!r}; use none "
                              f"or a comma-separated subset of {', '.join(TEMPLATE_GROUPS)}")
        bits |= TEMPLATE_GROUPS[name.strip()]
    return bits


def tag_settings(cfg: ExperimentConfig, sentences: list[Sentence]) -> TagSettings:
    """The config's ``features.tag``, ``prepositions`` and ``coordinators`` resolved on the
    training ``sentences`` (``auto``: :mod:`dparse.postags`)."""
    f = cfg.features
    return TagSettings.resolve(f.tag, f.prepositions, f.coordinators, sentences)


@dataclass
class EasyFirstModel(SavedModel):
    """Weights (float32, or float64 in training) of the action and label features."""

    vocab: Vocabulary
    weights: np.ndarray = field(repr=False)
    action_bits: int
    label_bits: int
    tag: str
    flags: np.ndarray = field(repr=False)
    templates: int = 0  # TEMPLATE_GROUPS bits added to the paper's templates

    @property
    def size(self) -> int:
        return layout_size(self.action_bits, self.label_bits, len(self.vocab.labels))

    def parse_encoded(
        self, enc: EncodedSentence, single_root: bool = True, heap: bool = False,
        constraints: Constraints | None = None,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Heads int32 [n+1], label ids int32 [n+1] (entry 0 -1), and feature extractions;
        with ``constraints`` (checked for a projective tree already), only attachments that
        keep a tree with every fixed arc and no forbidden one within reach, fixed arcs as
        soon as they can be made (dparse.transition.easyfirst_core.parse)."""
        heads = np.full(len(enc) + 1, -1, dtype=np.int32)
        labels = np.full(len(enc) + 1, -1, dtype=np.int32)
        if len(enc) == 0:
            return heads, labels, 0
        allowed = fixed_labels = None
        if constraints is not None:
            allowed = constraints.allowed().astype(np.uint8)
            ids = {name: i for i, name in enumerate(self.vocab.labels)}
            fixed_labels = np.array([ids.get(rel, -1) if rel is not None else -1
                                     for rel in constraints.labels], dtype=np.int32)
        count = parse_encoded_sentence(
            enc.tokens, self.flags, self.weights, self.action_bits, self.label_bits,
            len(self.vocab.labels), TAG_COLUMNS[self.tag], heads, labels, single_root, heap,
            self.templates, enc.morph_ptr, enc.morph, allowed,
            None if constraints is None else constraints.heads, fixed_labels)
        return heads, labels, count

    def parse(
        self,
        sentences: Iterable[Sentence],
        decoder: str = "easyfirst-scan",
        single_root: bool = True,
        timer: ParseTimer | None = None,
    ) -> Iterator[Sentence]:
        """Parse a stream of sentences, yielding copies with HEAD and DEPREL replaced."""
        return self.parse_constrained(((sent, None) for sent in sentences), decoder,
                                      single_root, timer)

    def parse_constrained(
        self,
        items: Iterable[tuple[Sentence, Constraints | None]],
        decoder: str = "easyfirst-scan",
        single_root: bool = True,
        timer: ParseTimer | None = None,
    ) -> Iterator[Sentence]:
        """As :meth:`parse`, each sentence under its constraints (None: none): checked
        (InputError naming the sentence for a set no projective tree satisfies: easy-first
        builds projective trees), parsed by :meth:`parse_encoded`, the fixed labels written
        for their words."""
        timer = timer if timer is not None else ParseTimer()
        heap = use_heap(decoder)
        names = self.vocab.labels
        for sent, given in items:
            constraints = checked(given, True, single_root, decoder, sent)
            t0 = time.perf_counter()
            enc = self.vocab.encode(sent)
            t1 = time.perf_counter()
            heads, labels, _ = self.parse_encoded(enc, single_root, heap, constraints)
            deprels = [""] + [names[i] for i in labels[1:].tolist()]
            timer.record(len(sent), t1 - t0, time.perf_counter() - t1)
            yield sent.with_parse(heads, fixed_deprels(deprels, constraints))

    def write_files(self, directory: Path) -> None:
        """Write the weights, the vocabulary and the templates' version into ``directory``
        (created if needed)."""
        directory.mkdir(parents=True, exist_ok=True)
        save_arrays(
            directory / WEIGHTS_FILE, weights=np.asarray(self.weights, dtype=np.float32),
            action_bits=self.action_bits, label_bits=self.label_bits, tag=self.tag,
            flags=self.flags, templates=self.templates)
        self.vocab.save(directory / VOCAB_FILE)
        write_templates(directory, EASYFIRST)

    @classmethod
    def read_files(cls, directory: Path) -> EasyFirstModel:
        """Read the files ``write_files`` wrote."""
        require_model_files(directory, VOCAB_FILE)
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        data = load_arrays(directory / WEIGHTS_FILE)
        if "action_bits" not in data:
            raise DparseError(f"{directory}: not an easy-first model")
        check_templates(directory, EASYFIRST)
        model = cls(vocab, np.ascontiguousarray(data["weights"], dtype=np.float32),
                    int(data["action_bits"]), int(data["label_bits"]), str(data["tag"]),
                    np.ascontiguousarray(data["flags"], dtype=np.uint8),
                    int(data["templates"]) if "templates" in data else 0)
        if model.weights.shape[0] != model.size:
            raise DparseError(f"{directory}: weights do not match the layout")
        return model


def train_epoch(
    model: EasyFirstModel,
    learner: AveragedLearner,
    encoded: list[EncodedSentence],
    order: Iterable[int],
    single_root: bool = True,
    progress: bool = False,
    desc: str = "",
) -> dict[str, int]:
    """One pass of Algorithm 2 over ``encoded`` in ``order`` (the weights the C code writes
    marked in ``learner.touched`` when the learner keeps it); returns the summed counts of
    :func:`dparse.transition.easyfirst_core.train_sentence` (steps, first_valid, updates, capped,
    label_correct, extractions)."""
    from tqdm import tqdm  # here: parsing, which imports this module, never needs it

    totals = dict.fromkeys(
        ("steps", "first_valid", "updates", "capped", "label_correct", "extractions"), 0)
    n_labels = len(model.vocab.labels)
    col = TAG_COLUMNS[model.tag]
    for i in tqdm(order, desc=desc, unit="sent", disable=not progress, leave=False,
                  dynamic_ncols=True):
        enc = encoded[i]
        one_root = single_root and root_words(enc.heads) == 1
        counts = train_sentence(
            enc.tokens, model.flags, enc.heads, enc.labels, learner.w, learner.u,
            float(learner.c), model.action_bits, model.label_bits, n_labels, col, one_root,
            MAX_UPDATES, templates=model.templates, morph_ptr=enc.morph_ptr, morph=enc.morph,
            touched=learner.touched)
        for key, value in counts.items():
            totals[key] += value
        learner.tick()
    return totals


def epoch_accuracy(counts: dict[str, int]) -> tuple[float, float]:
    """An epoch's training "UAS" and "LAS" from its counts (:func:`train`)."""
    steps = max(counts["steps"], 1)
    return 100 * counts["first_valid"] / steps, 100 * counts["label_correct"] / steps


@dataclass
class EasyFirstShard(ModelShard):
    """One shard of easy-first training (a :class:`dparse.mixing.ShardJob`): the model (its
    weights unused: the learner's are), the shard's encoded sentences and the single-root
    rule. Its updates (what ``--mixing updates`` weighs the shards by) are the action
    updates."""

    model: EasyFirstModel
    instances: list[EncodedSentence]
    single_root: bool
    method: ClassVar[str] = "perceptron"
    C: ClassVar[float] = 1.0

    def epoch(self, learner: ShardLearner, order: np.ndarray) -> dict[str, int]:
        counts = train_epoch(self.model, learner, self.instances, order, self.single_root)
        learner.updates += counts["updates"]  # made in C, not through learner.update
        return counts


def train(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[EpochReport], None] | None = None,
    workers: WorkerOptions | None = None,
) -> PerceptronTrainResult:
    """Train an easy-first parser as the config says; returns the best epoch's averaged model.
    With ``workers`` the epochs are mixed from that many shards (:mod:`dparse.mixing`).

    The reported training "UAS" is the share of attachments whose first choice was valid (the
    parser's accuracy given the gold history); "LAS" is the share of arcs whose label the
    classifier chose right before learning from it.
    """
    start = time.perf_counter()
    use_heap(cfg.decoder.name)  # a bad decoder name fails before training
    template_bits(cfg.features.templates)  # ... and so do bad template groups
    with mixing_engine(workers, __name__) as engine:
        train_sents, proj, dev_sents = read_projective_training(cfg, "easy-first")
        train_sents, vocab = training_vocabulary(cfg, train_sents, dev_sents)
        tags = tag_settings(cfg, train_sents)
        log.info("easy-first: %s", tags.describe())
        model = EasyFirstModel(vocab, np.zeros(0, dtype=np.float32), cfg.features.arc_bits,
                               cfg.features.label_bits, tags.column, tag_flags(vocab, tags),
                               template_bits(cfg.features.templates))
        encoded = [vocab.encode(s) for s in train_sents]
        single_root = cfg.decoder.single_root

        def epoch(learner: AveragedLearner, order: np.ndarray, desc: str) -> dict[str, int]:
            return train_epoch(model, learner, encoded, order, single_root, progress, desc)

        def parse_dev(sents: list[Sentence]) -> list[Sentence]:
            return list(model.parse(sents, cfg.decoder.name, single_root))

        shell = replace(model, weights=np.zeros(0, dtype=np.float32))  # the workers' copy

        def shard_job(part: np.ndarray) -> EasyFirstShard:
            return EasyFirstShard(shell, [encoded[i] for i in part], single_root)

        return run_perceptron_epochs(cfg, model, proj, len(encoded), epoch, epoch_accuracy,
                                     parse_dev, dev_sents, on_epoch, start, workers, engine,
                                     shard_job, progress)
