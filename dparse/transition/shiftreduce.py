"""The beam shift-reduce parser with dynamic programming: model, parsing, forests, training.

Huang and Sagae (2010)'s arc-standard beam search with merged states, in the plain
(``spurious``) system or Hayashi, Kondo and Matsumoto (2013)'s system without spurious
ambiguity (``nonspurious``: a scan action, 3n steps, one derivation per tree); the search runs
in C: the transition system in :mod:`dparse.transition.shiftreduce_state`, the feature
templates in :mod:`~dparse.transition.shiftreduce_templates`, the beam search in
:mod:`~dparse.transition.shiftreduce_search`, the arc labeler in
:mod:`~dparse.transition.shiftreduce_labeler` and a training step in
:mod:`~dparse.transition.shiftreduce_training`. Training is the averaged perceptron on the
beam with early update (Collins and Roark 2004) or max-violation update (Huang et al. 2012), on
projectivized training trees; the best epoch on dev is kept. On several workers the epochs are
mixed from shards (:class:`ShiftReduceShard`, :mod:`dparse.mixing`).

Labels: the transitions are unlabeled (as in the paper); a multi-class perceptron classifier
labels every arc of the finished tree from features of the head, the dependent, its outer
children and the grandparent. It is trained on the gold trees in the same epochs.

Packed forests: :meth:`ShiftReduceModel.forests` yields a :class:`dparse.hypergraph.Forest` per
sentence built from the merged search graph (a vertex per kept state with its top stack
element, a binary hyperedge per reduce, a leaf per shift, scan edges folded into their
antecedents); the Viterbi derivation of each forest is the parser's best tree and score.

A saved model is a directory with ``weights.bin`` (float32 weights, the layout sizes, the tag
column: ``features.tag``, with ``auto`` resolved on the training data by
:func:`dparse.postags.resolve_column`, ``upos_pair``, and ``templates``, the version of the
feature templates of dparse/transition/shiftreduce_templates.pyx: models of other versions are
refused, :mod:`dparse.templates`), ``vocab.json`` and ``config.yaml``.
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
from dparse.decoders import get_decoder
from dparse.epochs import (
    EpochReport,
    PerceptronTrainResult,
    mixing_engine,
    read_projective_training,
    run_perceptron_epochs,
    training_vocabulary,
)
from dparse.errors import ConfigError, DparseError
from dparse.hypergraph.forest import Forest
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
from dparse.postags import resolve_column
from dparse.projectivize import projectivize_heads
from dparse.templates import SHIFTREDUCE, UNVERSIONED, check_version
from dparse.timer import ParseTimer
from dparse.transition.shiftreduce_search import parse as parse_encoded_sentence
from dparse.transition.shiftreduce_templates import PAIRED_TAGS, TEMPLATES_VERSION, layout_size
from dparse.transition.shiftreduce_training import UPDATES, train_sentence
from dparse.trees import root_words
from dparse.vocab import TAG_COLUMNS, EncodedSentence, Vocabulary

if TYPE_CHECKING:  # training's modules: not imported to parse
    from dparse.batch.engines import WorkerOptions
    from dparse.mixing import ShardLearner

SYSTEMS = {"spurious": 0, "nonspurious": 1}
#: The config keys (section, key) that :func:`train` and the search read: a model trained from
#: a config depends on these and on the content of data.train and data.dev only (what the
#: stamps of dparse.rerank.jackknife key on; keep this list in step with ``train``).
CONFIG_KEYS = (("data", "format"), ("data", "encoding"), ("data", "skip_invalid_trees"),
               ("data", "columns"),
               ("features", "arc_bits"), ("features", "label_bits"), ("features", "tag"),
               ("decoder", "single_root"), ("shiftreduce", "system"), ("shiftreduce", "beam"),
               ("shiftreduce", "update"), ("shiftreduce", "upos_pair"), ("training", "learner"),
               ("training", "epochs"), ("training", "seed"), ("training", "shuffle"),
               ("training", "select_by"), ("training", "punct"))
DECODER_NAME = "shiftreduce"
log = logging.getLogger(__name__)


def system_id(name: str) -> int:
    """The C id of a transition system name."""
    if name not in SYSTEMS:
        raise ConfigError(f"shiftreduce.system must be one of {', '.join(SYSTEMS)}, got {name!r}")
    return SYSTEMS[name]


def unforceable(sent: Sentence, single_root: bool) -> str | None:
    """Why the gold tree of ``sent`` cannot be forced into the beam (``no words``, ``missing
    heads``, or ``several root dependents`` with ``single_root``), None if it can: then its
    projectivized heads have a derivation (projectivizing a single-rooted tree keeps it so)."""
    if len(sent) == 0:
        return "no words"
    if (sent.heads[1:] < 0).any():
        return "missing heads"
    if single_root and root_words(sent.heads) != 1:
        return "several root dependents"
    return None


@dataclass
class ShiftReduceModel(SavedModel):
    """Weights (float32, or float64 in training) of the action and label features, and the
    search settings (``system``, ``beam``, ``single_root``) parsing uses; with ``upos_pair``
    (only with ``tag`` xpos) the templates read the pair (XPOS, UPOS) as the tag."""

    vocab: Vocabulary
    weights: np.ndarray = field(repr=False)
    action_bits: int
    label_bits: int
    tag: str
    system: str = "nonspurious"
    beam: int = 12
    single_root: bool = True
    upos_pair: bool = False

    @property
    def size(self) -> int:
        return layout_size(self.action_bits, self.label_bits, len(self.vocab.labels))

    @property
    def tagcol(self) -> int:
        """The tag column the C search reads (PAIRED_TAGS: XPOS and UPOS together)."""
        return PAIRED_TAGS if self.upos_pair else TAG_COLUMNS[self.tag]

    def configure(self, cfg: ExperimentConfig) -> ShiftReduceModel:
        """Take the search settings (system, beam, single root) of ``cfg``; returns self."""
        sc = cfg.shiftreduce
        self.system, self.beam, self.single_root = sc.system, sc.beam, cfg.decoder.single_root
        return self

    def _search(self, enc: EncodedSentence, gold: np.ndarray | None, keep_chart: bool,
                constraints: Constraints | None = None):
        heads = np.full(len(enc) + 1, -1, dtype=np.int32)
        labels = np.full(len(enc) + 1, -1, dtype=np.int32)
        allowed = fixed = None
        if constraints is not None:
            allowed, fixed = constraints.allowed().astype(np.uint8), constraints.heads
        out = parse_encoded_sentence(
            enc.tokens, self.weights, self.action_bits, self.label_bits, len(self.vocab.labels),
            self.tagcol, system_id(self.system), self.single_root, self.beam, heads, labels,
            gold, keep_chart, allowed, fixed)
        if out is None:  # the constraints emptied a beam: search again with an escort
            assert constraints is not None and allowed is not None
            out = parse_encoded_sentence(
                enc.tokens, self.weights, self.action_bits, self.label_bits,
                len(self.vocab.labels), self.tagcol, system_id(self.system), self.single_root,
                self.beam, heads, labels, self._escort(enc, allowed), keep_chart, allowed,
                fixed)
            if out is None:
                raise DparseError(f"{constraints.name}: the constrained beam search lost its "
                                  "escort (a bug: please report it)")
        return heads, labels, out

    def _escort(self, enc: EncodedSentence, allowed: np.ndarray) -> np.ndarray:
        """The tree (heads int32 [n+1]) whose derivation a constrained search keeps in its
        beam when the constraints alone emptied one: the projective tree of allowed arcs
        (single-rooted as the model) with the most arcs of the unconstrained parse (Eisner's
        algorithm). Its canonical derivation makes only transitions the constraints allow,
        so the search ends with a tree that keeps them (the escort's, or a better one)."""
        plain, _, _ = self._search(enc, None, False)
        n1 = len(plain)
        agree = np.zeros((n1, n1))
        agree[plain[1:], np.arange(1, n1)] = 1.0
        escort = get_decoder("eisner").decode(np.where(allowed > 0, agree, -np.inf),
                                              single_root=self.single_root)
        return np.asarray(escort, dtype=np.int32)

    def parse_encoded(self, enc: EncodedSentence, gold: np.ndarray | None = None,
                      constraints: Constraints | None = None
                      ) -> tuple[np.ndarray, np.ndarray, float]:
        """Heads int32 [n+1], label ids int32 [n+1] (entry 0 -1) and the best derivation's
        score; with ``gold`` (int32 [n+1], a projective tree) the gold state is forced into
        every beam; with ``constraints`` (checked for a projective tree already) only
        transitions that keep them are searched
        (:func:`dparse.transition.shiftreduce_search.parse`), and if they empty a beam (a
        dead end the local checks do not foresee) the search runs again with an escort
        (:meth:`_escort`) forced into every beam: the tree keeps every constraint."""
        if len(enc) == 0:
            return np.full(1, -1, dtype=np.int32), np.full(1, -1, dtype=np.int32), 0.0
        return self._search(enc, gold, False, constraints)

    def forest_encoded(self, enc: EncodedSentence, gold: np.ndarray | None = None,
                       constraints: Constraints | None = None
                       ) -> tuple[np.ndarray, np.ndarray, Forest]:
        """Heads, label ids and the packed forest of the search (n >= 1); with
        ``constraints``, every tree of the forest keeps them."""
        heads, labels, chart = self._search(enc, gold, True, constraints)
        return heads, labels, Forest(len(enc), *chart.forest())

    def _gold(self, sent: Sentence, force_gold: bool, index: int) -> np.ndarray | None:
        if not force_gold or len(sent) == 0:
            return None
        problem = unforceable(sent, self.single_root)
        if problem == "missing heads":
            raise DparseError(f"sentence {index + 1} of the input: force_gold needs the "
                              "input's heads, and some are missing")
        if problem is not None:
            raise DparseError(f"sentence {index + 1} of the input: force_gold with "
                              "decoder.single_root needs exactly one root dependent")
        return projectivize_heads(sent.heads).astype(np.int32)

    def parse(
        self,
        sentences: Iterable[Sentence],
        timer: ParseTimer | None = None,
        force_gold: bool = False,
        on_forest: Callable[[int, Forest], None] | None = None,
    ) -> Iterator[Sentence]:
        """Parse a stream of sentences, yielding copies with HEAD and DEPREL replaced; with
        ``on_forest``, call it with the 1-based position and the packed forest of each
        non-empty sentence before yielding the sentence (its time counts as decoding)."""
        return self.parse_constrained(((sent, None) for sent in sentences), timer, force_gold,
                                      on_forest)

    def parse_constrained(
        self,
        items: Iterable[tuple[Sentence, Constraints | None]],
        timer: ParseTimer | None = None,
        force_gold: bool = False,
        on_forest: Callable[[int, Forest], None] | None = None,
    ) -> Iterator[Sentence]:
        """As :meth:`parse`, each sentence under its constraints (None: none): checked
        (InputError naming the sentence for a set no projective tree satisfies), searched
        over the transitions that keep them (:meth:`parse_encoded`), the fixed labels
        written for their words."""
        timer = timer if timer is not None else ParseTimer()
        names = self.vocab.labels
        for index, (sent, constraints) in enumerate(items):
            t0 = time.perf_counter()
            enc = self.vocab.encode(sent)
            gold = self._gold(sent, force_gold, index)
            constraints = checked(constraints, True, self.single_root, DECODER_NAME, sent)
            t1 = time.perf_counter()
            if on_forest is not None and len(enc):
                heads, labels, forest = self.forest_encoded(enc, gold, constraints)
                on_forest(index + 1, forest)
            else:
                heads, labels, _ = self.parse_encoded(enc, gold, constraints)
            deprels = [""] + [names[i] for i in labels[1:].tolist()]
            timer.record(len(sent), t1 - t0, time.perf_counter() - t1)
            yield sent.with_parse(heads, fixed_deprels(deprels, constraints))

    def write_files(self, directory: Path) -> None:
        """Write the weights and the vocabulary into ``directory`` (created if needed)."""
        directory.mkdir(parents=True, exist_ok=True)
        save_arrays(directory / WEIGHTS_FILE, weights=np.asarray(self.weights, dtype=np.float32),
                    action_bits=self.action_bits, label_bits=self.label_bits, tag=self.tag,
                    system=self.system, upos_pair=self.upos_pair, templates=TEMPLATES_VERSION)
        self.vocab.save(directory / VOCAB_FILE)

    @classmethod
    def read_files(cls, directory: Path) -> ShiftReduceModel:
        """Read the files ``write_files`` wrote (search settings: the defaults; the loader
        sets them from the config)."""
        require_model_files(directory, VOCAB_FILE)
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        data = load_arrays(directory / WEIGHTS_FILE)
        if "system" not in data:
            raise DparseError(f"{directory}: not a shift-reduce model")
        check_version(directory, SHIFTREDUCE,
                      int(data["templates"]) if "templates" in data else UNVERSIONED)
        model = cls(vocab, np.ascontiguousarray(data["weights"], dtype=np.float32),
                    int(data["action_bits"]), int(data["label_bits"]), str(data["tag"]),
                    str(data["system"]), upos_pair=bool(data["upos_pair"]))
        if model.weights.shape[0] != model.size:
            raise DparseError(f"{directory}: weights do not match the layout")
        return model


def train_epoch(
    model: ShiftReduceModel,
    learner: AveragedLearner,
    encoded: list[EncodedSentence],
    order: Iterable[int],
    update: str = "early",
    progress: bool = False,
    desc: str = "",
) -> dict[str, int]:
    """One perceptron pass over ``encoded`` in ``order`` (the weights the C code writes marked
    in ``learner.touched`` when the learner keeps it); returns the summed counts of
    :func:`dparse.transition.shiftreduce_training.train_sentence` (updated, steps, total_steps,
    correct, label_correct) and ``words`` and ``skipped`` (trees without a derivation)."""
    from tqdm import tqdm  # here: parsing, which imports this module, never needs it

    totals = dict.fromkeys(("updated", "steps", "total_steps", "correct", "label_correct",
                            "words", "skipped"), 0)
    n_labels = len(model.vocab.labels)
    kind = UPDATES[update]
    system = system_id(model.system)
    col = model.tagcol
    for i in tqdm(order, desc=desc, unit="sent", disable=not progress, leave=False,
                  dynamic_ncols=True):
        enc = encoded[i]
        if len(enc) == 0:
            continue
        counts = train_sentence(
            enc.tokens, enc.heads, enc.labels, learner.w, learner.u, float(learner.c),
            model.action_bits, model.label_bits, n_labels, col, system, model.single_root,
            model.beam, kind, learner.touched)
        learner.tick()
        if counts.pop("status") != 0:
            totals["skipped"] += 1
            continue
        for key, value in counts.items():
            totals[key] += value
        totals["words"] += len(enc)
    return totals


def epoch_accuracy(counts: dict[str, int]) -> tuple[float, float]:
    """An epoch's training "UAS" and "LAS" from its counts (:func:`train`)."""
    words = max(counts["words"], 1)
    return 100 * counts["correct"] / words, 100 * counts["label_correct"] / words


@dataclass
class ShiftReduceShard(ModelShard):
    """One shard of shift-reduce training (a :class:`dparse.mixing.ShardJob`): the model (its
    weights unused: the learner's are; its search settings used) and the shard's encoded
    sentences, learnt with ``update``. Its updates (what ``--mixing updates`` weighs the shards
    by) are the sentences whose action weights were updated."""

    model: ShiftReduceModel
    instances: list[EncodedSentence]
    update: str
    method: ClassVar[str] = "perceptron"
    C: ClassVar[float] = 1.0

    def epoch(self, learner: ShardLearner, order: np.ndarray) -> dict[str, int]:
        counts = train_epoch(self.model, learner, self.instances, order, self.update)
        learner.updates += counts["updated"]  # made in C, not through learner.update
        return counts


def train(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[EpochReport], None] | None = None,
    sentences: list[Sentence] | None = None,
    workers: WorkerOptions | None = None,
) -> PerceptronTrainResult:
    """Train a shift-reduce parser as the config says (on ``sentences`` instead of data.train
    when given, as the jackknife of :mod:`dparse.rerank.jackknife` does); returns the best
    epoch's averaged model. With ``workers`` the epochs are mixed from that many shards
    (:mod:`dparse.mixing`).

    The reported training "UAS" is the share of words whose head the beam's best tree got
    right before the update; "LAS" the share of gold arcs the label classifier labeled right
    before learning from them.
    """
    start = time.perf_counter()
    sc = cfg.shiftreduce
    system_id(sc.system)
    with mixing_engine(workers, __name__) as engine:
        train_sents, proj, dev_sents = read_projective_training(cfg, "shift-reduce", sentences)
        train_sents, vocab = training_vocabulary(cfg, train_sents, dev_sents)
        column = resolve_column(cfg.features.tag, train_sents)
        log.info("shift-reduce: POS column %s", column)
        upos_pair = sc.upos_pair and column == "xpos"
        if sc.upos_pair and not upos_pair:  # features.tag auto found no XPOS to pair
            log.warning("shift-reduce: shiftreduce.upos_pair ignored: the POS column is %s",
                        column)
        model = ShiftReduceModel(vocab, np.zeros(0, dtype=np.float32), cfg.features.arc_bits,
                                 cfg.features.label_bits, column, sc.system, sc.beam,
                                 cfg.decoder.single_root, upos_pair)
        encoded = [vocab.encode(s) for s in train_sents]
        if cfg.decoder.single_root:  # trees with several root dependents have no derivation
            encoded = [e for e in encoded if root_words(e.heads) == 1]

        def epoch(learner: AveragedLearner, order: np.ndarray, desc: str) -> dict[str, int]:
            return train_epoch(model, learner, encoded, order, sc.update, progress, desc)

        def parse_dev(sents: list[Sentence]) -> list[Sentence]:
            return list(model.parse(sents))

        shell = replace(model, weights=np.zeros(0, dtype=np.float32))  # the workers' copy

        def shard_job(part: np.ndarray) -> ShiftReduceShard:
            return ShiftReduceShard(shell, [encoded[i] for i in part], sc.update)

        return run_perceptron_epochs(cfg, model, proj, len(encoded), epoch, epoch_accuracy,
                                     parse_dev, dev_sents, on_epoch, start, workers, engine,
                                     shard_job, progress)
