"""The forest reranker: model, two-stage parsing, training and the line search of beta.

Hayashi, Kondo and Matsumoto (2013), Sections 5-6. The first stage is a shift-reduce parser
(:mod:`dparse.transition.shiftreduce`); its packed forest of each sentence is reranked by a
linear model over hyperedge-factored local features and, in ``nonlocal`` models, non-local
features scored by cube pruning (features and decoders: :mod:`dparse.rerank.reranker`):

- training (equation 1): the averaged perceptron (``training.learner``; ``pa`` also works) on
  the jackknifed training forests (:mod:`dparse.rerank.jackknife`) against each forest's oracle
  tree (the forest tree with the most correct heads; with label features, its gold arcs carry
  their gold labels), the first-stage scores left out; the best epoch on dev is kept; on
  several workers the epochs are mixed from shards (:class:`RerankShard`,
  :mod:`dparse.mixing`) and the jackknife's folds run as tasks on the same workers;
- parsing (equation 4): the best tree under ``w . f(tree) + beta * first-stage score``, beta
  tuned on the dev forests by a line search over ``rerank.beta_grid`` (the paper tunes it by
  MERT, a line search over one parameter) unless the config fixes it;
- labels: the first stage's arc classifier labels the reranked tree, as it labels its own
  (``rerank.labels`` only adds label features to the reranker's arc scores).

A saved model is a directory: ``weights.bin`` (the reranker's float32 weights, its layout and
settings, beta), ``vocab.json``, ``templates.json`` (the versions of the templates the reranker
reads: dparse/_ext/arcfeatures.pyx, dparse/graph/o3features.pyx and dparse/rerank/reranker.pyx; a
model of other versions is refused, :mod:`dparse.templates`) and ``config.yaml``, and the
first-stage model in ``first-stage/`` (its own ``weights.bin``, with its templates' version,
``vocab.json`` and ``config.yaml``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from dparse.config import ExperimentConfig, load_config, save_config
from dparse.conll import Sentence
from dparse.constraints import Constraints, checked, fixed_deprels
from dparse.epochs import (
    EpochReport,
    PerceptronTrainResult,
    mixing_engine,
    read_split,
    run_perceptron_epochs,
)
from dparse.errors import ConfigError, DparseError
from dparse.hypergraph.forest import Forest
from dparse.hypergraph.hypergraph import Hypergraph
from dparse.learning import AveragedLearner
from dparse.mixing import ModelShard
from dparse.modeldir import (
    CONFIG_FILE,
    VOCAB_FILE,
    WEIGHTS_FILE,
    SavedModel,
    load_arrays,
    require_model_files,
    save_arrays,
    writing_model_dir,
)
from dparse.outputs import write_text
from dparse.postags import TagSettings
from dparse.projectivize import projectivize
from dparse.punct import excluded
from dparse.rerank.checks import beta_grid
from dparse.rerank.jackknife import jackknife_forests, read_jackknife_forests, stamp_key
from dparse.rerank.reranker import WORD_CLASSES, RerankSentence
from dparse.templates import ARC, O3, RERANK, check_templates, write_templates
from dparse.timer import ParseTimer
from dparse.transition.shiftreduce import ShiftReduceModel
from dparse.transition.shiftreduce import train as train_first_stage
from dparse.transition.shiftreduce_labeler import label_tree
from dparse.vocab import TAG_COLUMNS, EncodedSentence, Vocabulary

if TYPE_CHECKING:  # the cluster's modules: imported to train on several workers only
    from dparse.batch.engines import WorkerOptions

DECODER_NAME = "rerank"
FIRST_STAGE_DIR = "first-stage"
STAMP_FILE = "stamp.json"
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WordClasses:
    """Which words the PP-attachment and coordination features see as prepositions and
    coordinating conjunctions: ``table`` (uint8, per id of the ``tag`` vocabulary, upos or xpos)
    holds the ``WORD_CLASSES`` flags of the tags the config's ``features.prepositions`` and
    ``features.coordinators`` list (:meth:`dparse.vocab.Vocabulary.tag_classes`); ``auto``
    column and lists are resolved on the training sentences (:mod:`dparse.postags`)."""

    tag: str
    table: np.ndarray

    @classmethod
    def from_config(cls, cfg: ExperimentConfig, vocab: Vocabulary,
                    sentences: list[Sentence]) -> WordClasses:
        f = cfg.features
        tags = TagSettings.resolve(f.tag, f.prepositions, f.coordinators, sentences)
        _log.info("reranker word classes: %s", tags.describe())
        return cls(tags.column, vocab.tag_classes(tags.column, {
            WORD_CLASSES["preposition"]: tags.prepositions,
            WORD_CLASSES["conjunction"]: tags.coordinators}))

    def of(self, enc: EncodedSentence) -> np.ndarray:
        """uint8 [n+1]: the class flags of each node of an encoded sentence."""
        return self.table[enc.tokens[:, TAG_COLUMNS[self.tag]]]


@dataclass
class Reranked:
    """One sentence ready for the reranker: its encoding, word classes, forest (with its
    Hypergraph) and the first stage's 1-best heads (the forest's Viterbi tree)."""

    enc: EncodedSentence
    classes: np.ndarray
    forest: Forest
    graph: Hypergraph
    first_best: np.ndarray

    @classmethod
    def of(cls, enc: EncodedSentence, classes: np.ndarray, forest: Forest,
           first_best: np.ndarray | None = None) -> Reranked:
        graph = Hypergraph(forest, trusted=True)
        if first_best is None:
            first_best = graph.viterbi()[1]
        return cls(enc, classes, forest, graph, first_best.astype(np.int32))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled without its Hypergraph (C structures), made again from the forest when
        read (a training shard sent to a worker)."""
        return Reranked.of, (self.enc, self.classes, self.forest, self.first_best)


@dataclass
class RerankModel(SavedModel):
    """The reranker's weights (float64 in memory: the decoders read float64) and settings, and
    the first-stage parser."""

    first: ShiftReduceModel
    first_cfg: ExperimentConfig
    weights: np.ndarray = field(repr=False)
    arc_bits: int
    ho_bits: int
    nonlocal_features: bool
    guide: bool
    k: int
    classes: WordClasses
    label_bits: int = 0  # 0: no label features
    beta: float = 0.0

    @property
    def n_labels(self) -> int:
        """L of the label features (the first stage's labels), 0 without them."""
        return len(self.first.vocab.labels) if self.label_bits else 0

    @property
    def size(self) -> int:
        return (1 << self.arc_bits) + (1 << self.ho_bits) + (1 << self.label_bits) * self.n_labels

    def sentence(self, item: Reranked) -> RerankSentence:
        """The feature machinery of one sentence under this model's settings."""
        enc = item.enc
        return RerankSentence(enc.tokens, enc.morph_ptr, enc.morph, item.classes,
                              item.first_best if self.guide else None, self.arc_bits,
                              self.ho_bits, self.nonlocal_features, self.label_bits,
                              self.n_labels)

    def rerank(self, item: Reranked, weights: np.ndarray, beta: float, k: int) -> np.ndarray:
        """The best tree (heads int32 [n+1]) of the item's forest under ``weights`` (float64)
        plus ``beta`` times the first-stage scores; non-local features with cube pruning (k
        items per vertex) when the model has them and k >= 1."""
        sent = self.sentence(item)
        scores = sent.edge_scores(item.graph, weights)
        if beta:
            scores += beta * item.forest.edge_score
        return sent.best_tree(item.graph, weights, scores, k if self.nonlocal_features else 0)[1]

    def labels(self, enc: EncodedSentence, heads: np.ndarray) -> list[str]:
        """The first stage's labels of the arcs of ``heads`` (DEPREL strings, entry 0 empty)."""
        first = self.first
        ids = label_tree(enc.tokens, first.weights, first.action_bits, first.label_bits,
                         len(first.vocab.labels), first.tagcol, heads)
        return [""] + [first.vocab.labels[i] for i in ids[1:].tolist()]

    def parse(
        self,
        sentences: Iterable[Sentence],
        timer: ParseTimer | None = None,
        on_forest: Callable[[int, Forest], None] | None = None,
    ) -> Iterator[Sentence]:
        """Parse a stream of sentences with both stages, yielding copies with HEAD and DEPREL
        replaced; ``on_forest`` gets the first stage's forest of each non-empty sentence."""
        return self.parse_constrained(((sent, None) for sent in sentences), timer, on_forest)

    def parse_constrained(
        self,
        items: Iterable[tuple[Sentence, Constraints | None]],
        timer: ParseTimer | None = None,
        on_forest: Callable[[int, Forest], None] | None = None,
    ) -> Iterator[Sentence]:
        """As :meth:`parse`, each sentence under its constraints (None: none): checked
        (InputError naming the sentence for a set no projective tree satisfies), its forest
        built by the first stage's constrained search
        (:meth:`ShiftReduceModel.forest_encoded`), so that every tree the reranker chooses
        from has every fixed arc and no forbidden one; the fixed labels written for their
        words."""
        timer = timer if timer is not None else ParseTimer()
        for index, (sent, given) in enumerate(items):
            constraints = checked(given, True, self.first.single_root, DECODER_NAME, sent)
            t0 = time.perf_counter()
            enc = self.first.vocab.encode(sent)
            t1 = time.perf_counter()
            if len(enc) == 0:
                heads, deprels = np.full(1, -1, dtype=np.int32), [""]
            else:
                first_best, _, forest = self.first.forest_encoded(enc, None, constraints)
                if on_forest is not None:
                    on_forest(index + 1, forest)
                item = Reranked.of(enc, self.classes.of(enc), forest, first_best)
                heads = self.rerank(item, self.weights, self.beta, self.k)
                if constraints is not None and not constraints.satisfied_by(heads):
                    raise DparseError(f"{constraints.name}: the reranked tree breaks a "
                                      "constraint that every tree of its forest keeps")
                deprels = fixed_deprels(self.labels(enc, heads), constraints)
            timer.record(len(sent), t1 - t0, time.perf_counter() - t1)
            yield sent.with_parse(heads, deprels)

    def write_files(self, directory: Path) -> None:
        """Write the reranker's files (its templates' versions too) and the first stage's into
        ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        save_arrays(directory / WEIGHTS_FILE, weights=np.asarray(self.weights, dtype=np.float32),
                    arc_bits=self.arc_bits, ho_bits=self.ho_bits,
                    nonlocal_features=self.nonlocal_features, guide=self.guide, k=self.k,
                    label_bits=self.label_bits, beta=self.beta, tag=self.classes.tag,
                    word_classes=self.classes.table)
        self.first.vocab.save(directory / VOCAB_FILE)
        write_templates(directory, ARC, O3, RERANK)
        self.first.write_files(directory / FIRST_STAGE_DIR)
        save_config(self.first_cfg, directory / FIRST_STAGE_DIR / CONFIG_FILE)

    @classmethod
    def read_files(cls, directory: Path) -> RerankModel:
        """Read what ``write_files`` wrote (the first stage's search settings from its
        config)."""
        directory = Path(directory)
        require_model_files(directory, VOCAB_FILE)
        check_templates(directory, ARC, O3, RERANK)
        first_dir = directory / FIRST_STAGE_DIR
        require_model_files(first_dir, CONFIG_FILE)
        first_cfg = load_config(first_dir / CONFIG_FILE)
        first = ShiftReduceModel.read_files(first_dir).configure(first_cfg)
        data = load_arrays(directory / WEIGHTS_FILE)
        if "ho_bits" not in data:
            raise DparseError(f"{directory}: not a forest reranker model")
        classes = WordClasses(str(data["tag"]), np.asarray(data["word_classes"], dtype=np.uint8))
        model = cls(first, first_cfg, np.asarray(data["weights"], dtype=np.float64),
                    int(data["arc_bits"]), int(data["ho_bits"]), bool(data["nonlocal_features"]),
                    bool(data["guide"]), int(data["k"]), classes, int(data["label_bits"]),
                    float(data["beta"]))
        if model.weights.shape[0] != model.size:
            raise DparseError(f"{directory}: weights do not match the layout")
        return model


# -- training -------------------------------------------------------------------------------------

def first_stage_config(cfg: ExperimentConfig) -> ExperimentConfig:
    """The first-stage config named by ``rerank.first_stage``, with the reranker's data
    section (both stages train and tune on the same files)."""
    path = Path(cfg.rerank.first_stage)
    if not path.is_file():
        raise ConfigError(f"rerank.first_stage: {path}: no such config file")
    first = load_config(path, data_root=cfg.data_root)
    if first.parser != "shiftreduce":
        raise ConfigError(f"rerank.first_stage: {path} is a {first.parser} config; the forest "
                          "reranker needs a shift-reduce one (parser: shiftreduce)")
    first.data = cfg.data
    return first


def first_stage_model(first_cfg: ExperimentConfig, work: Path, progress: bool,
                      log: Callable[[str], None]) -> ShiftReduceModel:
    """The first-stage model trained on the whole training file, kept in ``work/first-stage``
    and reused while its stamp (the jackknife's key, with fold 0) matches."""
    directory = work / FIRST_STAGE_DIR
    key = dict(stamp_key(first_cfg, 0), fold=0)
    try:
        same = json.loads((directory / STAMP_FILE).read_text(encoding="utf-8")) == key
    except (OSError, ValueError):
        same = False
    if same:
        log(f"first stage: up to date ({directory})")
    else:
        t0 = time.perf_counter()
        result = train_first_stage(first_cfg, progress=progress)
        with writing_model_dir(directory) as staging:
            result.model.write_files(staging)
            save_config(first_cfg, staging / CONFIG_FILE)
            write_text(staging / STAMP_FILE, json.dumps(key, sort_keys=True))
        log(f"first stage: trained on the whole training file in "
            f"{time.perf_counter() - t0:.1f}s (best epoch {result.best_epoch}) -> {directory}")
    return ShiftReduceModel.load(directory).configure(first_cfg)


@dataclass
class TrainingItem:
    """A training sentence: its forest and the tree the reranker learns (the forest oracle)."""

    item: Reranked
    oracle: np.ndarray
    gold: np.ndarray


def _training_items(model: RerankModel, sentences: list[Sentence],
                    forests: list[Forest | None], progress: bool) -> list[TrainingItem]:
    out = []
    for sent, forest in tqdm(zip(sentences, forests, strict=True), total=len(sentences),
                             desc="training forests", unit="sent", disable=not progress,
                             leave=False, dynamic_ncols=True):
        if forest is None:
            continue
        enc = model.first.vocab.encode(sent)
        item = Reranked.of(enc, model.classes.of(enc), forest)
        gold = np.asarray(sent.heads, dtype=np.int32)
        out.append(TrainingItem(item, item.graph.oracle(gold)[2].astype(np.int32), gold))
    return out


def _dev_items(model: RerankModel, sentences: list[Sentence],
               progress: bool) -> list[Reranked | None]:
    """The first stage's forest of each dev sentence (None for a sentence without words)."""
    out: list[Reranked | None] = []
    for sent in tqdm(sentences, desc="dev forests", unit="sent", disable=not progress,
                     leave=False, dynamic_ncols=True):
        enc = model.first.vocab.encode(sent)
        if len(enc) == 0:
            out.append(None)
            continue
        first_best, _, forest = model.first.forest_encoded(enc)
        out.append(Reranked.of(enc, model.classes.of(enc), forest, first_best))
    return out


def _scored(sentences: list[Sentence], punct: str) -> list[np.ndarray]:
    """Per sentence, bool [n+1]: the words that count in UAS under the punctuation rule."""
    out = []
    for sent in sentences:
        keep = np.zeros(len(sent) + 1, dtype=bool)
        keep[1:] = ~excluded(sent, punct)
        out.append(keep)
    return out


def tune_beta(model: RerankModel, items: list[Reranked | None], sentences: list[Sentence],
              grid: list[float], punct: str, progress: bool = False) -> list[tuple[float, float]]:
    """Dev UAS (percent, under ``punct``) of ``model`` with each beta of ``grid``: the line
    search of equation 4's scale of the first-stage score. Returns (beta, UAS) pairs."""
    weights = np.asarray(model.weights, dtype=np.float64)
    k = model.k if model.nonlocal_features else 0
    scored = _scored(sentences, punct)
    total = max(sum(int(m.sum()) for m in scored), 1)
    correct = np.zeros(len(grid))
    for item, sent, keep in tqdm(zip(items, sentences, scored, strict=True),
                                 total=len(items), desc="beta line search", unit="sent",
                                 disable=not progress, leave=False, dynamic_ncols=True):
        if item is None:
            continue
        rs = model.sentence(item)
        local = rs.edge_scores(item.graph, weights)
        gold = np.asarray(sent.heads)
        for b, beta in enumerate(grid):
            heads = rs.best_tree(item.graph, weights, local + beta * item.forest.edge_score, k)[1]
            correct[b] += int(((heads == gold) & keep).sum())
    return [(beta, 100.0 * c / total) for beta, c in zip(grid, correct, strict=True)]


def rerank_epoch(model: RerankModel, learner: AveragedLearner, items: list[TrainingItem],
                 order: np.ndarray, train_k: int, progress: bool = False, desc: str = ""
                 ) -> dict[str, int]:
    """One online pass over the training ``items`` in ``order``: each forest's best tree
    under the learner's weights (cube pruning with ``train_k`` items per vertex; 0: local
    features only, Viterbi) learnt against its oracle tree. Returns the counts: updated
    sentences, words, correct heads of the predicted and of the oracle trees."""
    counts = dict.fromkeys(("updated", "words", "correct", "oracle_correct"), 0)
    for i in tqdm(order, desc=desc, unit="sent", disable=not progress, leave=False,
                  dynamic_ncols=True):
        t = items[i]
        rs = model.sentence(t.item)
        scores = rs.edge_scores(t.item.graph, learner.w)
        pred = rs.best_tree(t.item.graph, learner.w, scores, train_k)[1]
        pred_labels = rs.best_labels(pred, learner.w)
        oracle_labels = rs.best_labels(t.oracle, learner.w)
        known = (t.oracle == t.gold) & (t.item.enc.labels >= 0)  # gold arc, known label
        oracle_labels[known] = t.item.enc.labels[known]
        if (pred != t.oracle).any() or (model.n_labels and
                                        (pred_labels != oracle_labels).any()):
            plus = rs.tree_features(t.oracle, oracle_labels)
            minus = rs.tree_features(pred, pred_labels)
            learner.update(np.concatenate([plus, minus]),
                           np.concatenate([np.ones(plus.size), -np.ones(minus.size)]),
                           float((pred != t.oracle).sum()))
            counts["updated"] += 1
        learner.tick()
        counts["words"] += len(pred) - 1
        counts["correct"] += int((pred[1:] == t.gold[1:]).sum())
        counts["oracle_correct"] += int((t.oracle[1:] == t.gold[1:]).sum())
    return counts


def epoch_accuracy(counts: dict[str, int]) -> tuple[float, None]:
    """An epoch's training UAS (of the reranked trees) from its counts; no LAS (the reranker
    learns no labels of its own)."""
    return 100.0 * counts["correct"] / max(counts["words"], 1), None


@dataclass
class RerankShard(ModelShard):
    """One shard of the reranker's training (a :class:`dparse.mixing.ShardJob`): the model
    (its weights and its first stage's unused), the shard's training items, cube pruning's
    ``train_k`` and the learner."""

    model: RerankModel
    instances: list[TrainingItem]
    train_k: int
    method: str
    C: float

    def epoch(self, learner: AveragedLearner, order: np.ndarray) -> dict[str, int]:
        return rerank_epoch(self.model, learner, self.instances, order, self.train_k)


def make_fold(cfg: ExperimentConfig, fold: int, progress: bool = False) -> str:
    """Make only fold ``fold`` of the jackknifed training forests (for one job of a cluster
    array); returns what was done, in one line."""
    if cfg.rerank.work is None:
        raise ConfigError("rerank.work: the directory of the jackknifed forests is not set")
    path = jackknife_forests(first_stage_config(cfg), cfg.rerank.folds, Path(cfg.rerank.work),
                             only_fold=fold, progress=progress, log=_log.info)[0]
    return (f"fold {fold} of {cfg.rerank.folds}: {path}; train without --fold once every "
            "fold is made")


def train(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[EpochReport], None] | None = None,
    jobs: int = 1,
    workers: WorkerOptions | None = None,
) -> PerceptronTrainResult:
    """Train a forest reranker as the config says: the first stage on the whole training
    file and the jackknifed training forests (both kept in ``rerank.work`` and reused), then
    the averaged perceptron on the forests' oracle trees (``training.epochs``, the best epoch
    on dev kept, decoded with the config's beta or 0), then the line search of beta on dev.
    ``jobs`` folds of the jackknife are made at a time; with ``workers`` the folds are tasks
    on their engine (``jobs`` unused) and the epochs are mixed from that many shards
    (:mod:`dparse.mixing`)."""
    start = time.perf_counter()
    rc, tc = cfg.rerank, cfg.training
    if rc.work is None:
        raise ConfigError("rerank.work: the directory of the jackknifed forests is not set")
    if rc.beta is None and not cfg.data.dev:
        raise ConfigError("rerank.beta: null tunes beta on dev, but data.dev is null; give "
                          "a dev file or a fixed beta")
    work = Path(rc.work)
    first_cfg = first_stage_config(cfg)
    with mixing_engine(workers, __name__) as engine:
        jackknife_forests(first_cfg, rc.folds, work, jobs=jobs, progress=progress,
                          log=_log.info, engine=engine)
        first = first_stage_model(first_cfg, work, progress, _log.info)
        sentences = read_split(cfg, cfg.data.train)
        forests = read_jackknife_forests(work, rc.folds, len(sentences), first_cfg)
        f = cfg.features
        model = RerankModel(first, first_cfg, np.zeros(0), f.arc_bits, f.ho_bits,
                            rc.features == "nonlocal", rc.guide, rc.k,
                            WordClasses.from_config(cfg, first.vocab, sentences),
                            f.label_bits if rc.labels else 0)
        items = _training_items(model, sentences, forests, progress)
        proj = projectivize(s for s, f in zip(sentences, forests, strict=True)
                            if f is not None)[1]
        dev_sents = read_split(cfg, cfg.data.dev) if cfg.data.dev else []
        dev_items = _dev_items(model, dev_sents, progress)
        train_k = rc.train_k if model.nonlocal_features else 0
        epoch_beta = rc.beta if rc.beta is not None else 0.0
        _log.info(f"reranker: {len(items)} training forests of {len(sentences)} sentences, "
                  f"{len(dev_sents)} dev sentences; {rc.features} features"
                  + (f", cube pruning k = {train_k}" if train_k else ""))

        def epoch(learner: AveragedLearner, order: np.ndarray, desc: str) -> dict[str, int]:
            return rerank_epoch(model, learner, items, order, train_k, progress, desc)

        def parse_dev(sents: list[Sentence]) -> list[Sentence]:
            weights = np.asarray(model.weights, dtype=np.float64)
            out = []
            for sent, item in zip(sents, dev_items, strict=True):
                if item is None:
                    out.append(sent)
                    continue
                heads = model.rerank(item, weights, epoch_beta, model.k)
                out.append(sent.with_parse(heads, model.labels(item.enc, heads)))
            return out

        # the workers' copy: no weights of either stage
        shell = replace(model, weights=np.zeros(0),
                        first=replace(first, weights=np.zeros(0, dtype=np.float32)))

        def shard_job(part: np.ndarray) -> RerankShard:
            return RerankShard(shell, [items[i] for i in part], train_k, tc.learner, tc.C)

        result = run_perceptron_epochs(cfg, model, proj, len(items), epoch, epoch_accuracy,
                                       parse_dev, dev_sents, on_epoch, start, workers, engine,
                                       shard_job, progress)
    model.weights = np.asarray(model.weights, dtype=np.float64)
    if rc.beta is None:
        curve = tune_beta(model, dev_items, dev_sents, beta_grid(rc.beta_grid),
                          tc.punct, progress)
        model.beta, best = max(curve, key=lambda bu: (bu[1], -bu[0]))
        _log.info("beta line search on dev (UAS): " + ", ".join(
            f"{b:g}: {u:.2f}" for b, u in curve) + f"; beta = {model.beta:g} ({best:.2f})")
    else:
        model.beta = rc.beta
    result.seconds = time.perf_counter() - start
    return result
