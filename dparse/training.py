"""Online training of the labeled first-order model, with model selection on a dev file.

Each epoch visits the training sentences in a seeded random order; each sentence is scored
(cost-augmented for the passive-aggressive learner), decoded with the training decoder
(``training.decoder``, else the ``decoder`` section's) and, when the prediction differs from
gold, learned from. After each epoch the averaged weights parse the dev file with the parsing
decoder (the ``decoder`` section's: the model is selected for how it will be used); the epoch
with the best dev score (``training.select_by``) is kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from tqdm import tqdm

from dparse._ext.arcfeatures import FeatureSpace
from dparse.aligned import aligned_zeros
from dparse.config import ExperimentConfig, save_config
from dparse.conll import Sentence
from dparse.decoders import Decoder, configured_decoder
from dparse.errors import ConfigError, DparseError
from dparse.gold import read_gold
from dparse.learning import AveragedLearner, combine
from dparse.metrics import evaluate, format_score
from dparse.model import CONFIG_FILE, ArcFactoredModel, GraphModel, ParseTimer
from dparse.modeldir import writing_model_dir
from dparse.projectivize import ProjectivizeReport, projectivize
from dparse.vocab import EncodedSentence, Vocabulary

log = logging.getLogger(__name__)


@dataclass
class EpochReport:
    """What one epoch did: training accuracy, dev scores, time by stage (seconds). None: not
    applicable (no dev file, no scored dev token, or no labels: ``las_note`` says why)."""

    epoch: int
    train_uas: float
    train_las: float | None
    dev_uas: float | None
    dev_las: float | None
    seconds: dict[str, float]
    las_note: ClassVar[str] = ""

    def summary(self, dev_file: str | None, punct: str) -> str:
        """One line: train and dev UAS and LAS (``n/a`` and why where not applicable) and the
        seconds by stage; ``dev_file`` and ``punct`` as the config's data.dev and
        training.punct."""
        las_why = f" ({self.las_note})" if self.las_note else ""
        if self.dev_uas is not None:
            dev = f"dev UAS {format_score(self.dev_uas, 0)} LAS {format_score(self.dev_las, 0)}"
            dev += las_why if self.dev_las is None else ""
        elif dev_file:
            dev = f"dev {dev_file}: no scored tokens (punct {punct})"
        else:
            dev = "no dev file"
        train_las = format_score(self.train_las, 0) + (las_why if self.train_las is None else "")
        secs = " ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return (f"epoch {self.epoch}: train UAS {self.train_uas:.2f} LAS {train_las}; {dev}; "
                f"{secs}")


@dataclass
class TrainResult:
    """The selected model and the history of the run."""

    model: GraphModel
    best_epoch: int
    epochs: list[EpochReport] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class BestEpoch:
    """The weights of the epoch with the best dev score so far (without a dev file: the last)."""

    score: float | None = None
    epoch: int = 0
    weights: np.ndarray | None = None

    def offer(self, epoch: int, weights: np.ndarray, dev_score: float | None) -> None:
        """Keep ``weights`` if ``dev_score`` beats the best so far (or there is no dev score)."""
        if dev_score is None or self.score is None or dev_score > self.score:
            self.score, self.epoch, self.weights = dev_score, epoch, weights

    def close_epoch(self, result: Any, report: EpochReport, weights: np.ndarray,
                    dev_score: float | None,
                    on_epoch: Callable[[EpochReport], None] | None) -> None:
        """The end of an epoch of any trainer: offer its weights, keep its report in
        ``result.epochs`` and pass it to ``on_epoch``."""
        self.offer(report.epoch, weights, dev_score)
        result.epochs.append(report)
        if on_epoch is not None:
            on_epoch(report)

    def finish(self, model: Any, result: Any, start: float) -> Any:
        """The end of training: the best epoch's weights into ``model``, its number and the
        seconds since ``start`` (a perf_counter) into ``result``; returns ``result``."""
        model.weights = self.weights
        result.best_epoch = self.epoch
        result.seconds = time.perf_counter() - start
        return result


def read_split(cfg: ExperimentConfig, relative: str) -> list[Sentence]:
    """Read one treebank file of the config's data section: gold trees (:mod:`dparse.gold`),
    at least one."""
    path = cfg.data_path(relative)
    if not path.exists():
        raise DparseError(
            f"{path}: treebank not found (data root {cfg.data_root!r}; set --data-root or "
            "DPARSE_DATA)"
        )
    role = ("training (data.train)" if relative == cfg.data.train
            else "model selection (data.dev; null for none)")
    return read_gold(path, role, cfg.data.format, cfg.data.encoding, cfg.data.skip_invalid_trees)


@dataclass
class PerceptronTrainResult:
    """A perceptron-trained parser (easy-first, shift-reduce): the selected model, the history
    of the run (epoch reports and the parser's own counts) and what projectivization changed."""

    model: Any
    best_epoch: int
    projectivized: ProjectivizeReport
    epochs: list[EpochReport] = field(default_factory=list)
    counts: list[dict[str, int]] = field(default_factory=list)
    seconds: float = 0.0


def read_projective_training(
    cfg: ExperimentConfig, parser: str, sentences: list[Sentence] | None = None
) -> tuple[list[Sentence], ProjectivizeReport, list[Sentence]]:
    """For a projective parser trained by the perceptron: checks ``training.learner``, reads
    the training sentences (those with every head annotated, the others counted in the log;
    of ``sentences`` instead of data.train when given) projectivized, and the dev sentences
    (empty without a dev file)."""
    if cfg.training.learner != "perceptron":
        raise ConfigError(f"the {parser} parser trains with training.learner: perceptron")
    source = read_split(cfg, cfg.data.train) if sentences is None else sentences
    annotated = [s for s in source if not (s.heads[1:] < 0).any()]
    if len(annotated) < len(source):
        log.info("%s: %d of %d training sentences left out: some of their heads are not "
                 "annotated", parser, len(source) - len(annotated), len(source))
    train_sents, proj = projectivize(annotated)
    dev_sents = read_split(cfg, cfg.data.dev) if cfg.data.dev else []
    return train_sents, proj, dev_sents


def run_perceptron_epochs(
    cfg: ExperimentConfig,
    result: PerceptronTrainResult,
    learner: AveragedLearner,
    n_sentences: int,
    epoch: Callable[[np.ndarray, str], tuple[dict[str, int], float, float]],
    parse_dev: Callable[[list[Sentence]], list[Sentence]],
    dev_sents: list[Sentence],
    on_epoch: Callable[[EpochReport], None] | None,
    start: float,
) -> PerceptronTrainResult:
    """The epochs of a perceptron-trained parser: each visits the ``n_sentences`` training
    sentences in a seeded order through ``epoch(order, desc)`` (its counts, train UAS and
    LAS), then the averaged weights parse dev (``parse_dev``) and the best epoch on dev is
    kept in ``result.model``; ``result.seconds`` counts from ``start`` (a perf_counter)."""
    tc, model = cfg.training, result.model
    rng = np.random.default_rng(tc.seed)
    best = BestEpoch()
    for number in range(1, tc.epochs + 1):
        order = rng.permutation(n_sentences) if tc.shuffle else np.arange(n_sentences)
        t0 = time.perf_counter()
        counts, train_uas, train_las = epoch(order, f"epoch {number}/{tc.epochs}")
        seconds = {"train": time.perf_counter() - t0}
        model.weights = learner.averaged()
        dev_uas = dev_las = None
        if dev_sents:
            t0 = time.perf_counter()
            report = evaluate(dev_sents, parse_dev(dev_sents), punct=tc.punct)
            dev_uas, dev_las = report.uas, report.las
            seconds["dev"] = time.perf_counter() - t0
        result.counts.append(counts)
        best.close_epoch(result, EpochReport(number, train_uas, train_las, dev_uas, dev_las,
                                             seconds), model.weights,
                         dev_las if tc.select_by == "las" else dev_uas, on_epoch)
    return best.finish(model, result, start)


@dataclass
class EpochStats:
    """Accuracy on the training sentences as they were predicted, and time by stage."""

    tokens: int = 0
    correct_heads: int = 0
    correct_labeled: int = 0
    update_seconds: float = 0.0
    timer: ParseTimer = field(default_factory=ParseTimer)

    @property
    def uas(self) -> float:
        return 100.0 * self.correct_heads / max(self.tokens, 1)

    @property
    def las(self) -> float:
        return 100.0 * self.correct_labeled / max(self.tokens, 1)


def run_epoch(
    model: GraphModel,
    learner: AveragedLearner,
    sentences: list[EncodedSentence],
    decoder: Decoder,
    single_root: bool,
    desc: str,
    progress: bool = True,
    keep_invalid: bool = False,
) -> EpochStats:
    """One online pass: predict each sentence with the current weights (cost-augmented when
    the learner needs it) and learn from every wrong prediction. An invalid update (the
    prediction does not outscore gold: a search error of an approximate decoder) is skipped,
    or with ``keep_invalid`` made as if the prediction had tied gold."""
    stats = EpochStats()
    bar = tqdm(sentences, desc=desc, unit="sent", disable=not progress, leave=False,
               dynamic_ncols=True)
    for step, enc in enumerate(bar):
        heads, labels = model.predict(enc, decoder, single_root, learner.w,
                                      learner.cost_augmented, stats.timer)
        t0 = time.perf_counter()
        right_head = heads[1:] == enc.heads[1:]
        n_right = int((right_head & (labels[1:] == enc.labels[1:])).sum())
        stats.correct_heads += int(right_head.sum())
        stats.correct_labeled += n_right
        stats.tokens += len(enc)
        if n_right < len(enc):
            idx, val = model.delta(enc, heads, labels)
            # Labeled Hamming cost: 2 for a wrong head, 1 for a right head with a wrong label.
            cost = 2.0 * int((~right_head).sum()) + float(len(enc) - n_right)
            if keep_invalid:
                idx, val = combine(idx, val)
                cost += max(0.0, float(learner.w[idx] @ val))
            learner.update(idx, val, cost)
        learner.tick()
        stats.update_seconds += time.perf_counter() - t0
        if progress and step % 500 == 0:
            bar.set_postfix(uas=f"{stats.uas:.2f}", las=f"{stats.las:.2f}")
    bar.close()
    return stats


def new_model(
    cfg: ExperimentConfig, vocab: Vocabulary, encoded: list[EncodedSentence], progress: bool
) -> GraphModel:
    """An untrained model of the configured order (a second- or third-order model first
    trains its first-order pruner on the same data)."""
    if cfg.features.order == 1:
        # First-order models read their arc features in the blocked layout (one cache line
        # per template key); the higher-order models keep the hashed one, which their loaders
        # assume.
        space = FeatureSpace(cfg.features.arc_bits, cfg.features.label_bits, len(vocab.labels),
                             "blocked")
        return ArcFactoredModel(vocab, space, aligned_zeros(space.size, np.float32))
    space = FeatureSpace(cfg.features.arc_bits, cfg.features.label_bits, len(vocab.labels))
    from dparse.secondorder import SecondOrderModel, train_pruner

    pruner = train_pruner(cfg, vocab, encoded, progress)
    if cfg.features.order == 3:
        from dparse.thirdorder import ThirdOrderModel

        return ThirdOrderModel.untrained(vocab, cfg, pruner)
    return SecondOrderModel.untrained(vocab, space, cfg, pruner)


def training_decoder(cfg: ExperimentConfig) -> Decoder:
    """The decoder that predicts the training sentences: ``training.decoder`` with
    ``training.decoder_options``, or when that is null the ``decoder`` section's."""
    tc = cfg.training
    if tc.decoder is None:
        return parsing_decoder(cfg)
    return configured_decoder(tc.decoder, tc.decoder_options)


def parsing_decoder(cfg: ExperimentConfig) -> Decoder:
    """The ``decoder`` section's decoder with its options: what parsing and dev epochs use."""
    return configured_decoder(cfg.decoder.name, cfg.decoder.options)


def train(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[EpochReport], None] | None = None,
) -> TrainResult:
    """Train a model as the config says; returns the best epoch's averaged model."""
    start = time.perf_counter()
    train_sents = read_split(cfg, cfg.data.train)
    dev_sents = read_split(cfg, cfg.data.dev) if cfg.data.dev else []
    vocab = Vocabulary.build(train_sents)
    encoded = [vocab.encode(s) for s in train_sents]
    model = new_model(cfg, vocab, encoded, progress)
    decoder = training_decoder(cfg)
    dev_decoder = parsing_decoder(cfg)
    single_root = cfg.decoder.single_root
    tc = cfg.training
    learner = AveragedLearner(model.size, tc.learner, tc.C)
    rng = np.random.default_rng(tc.seed)
    best = BestEpoch()
    result = TrainResult(model=model, best_epoch=0)
    pruner = getattr(model, "pruner", None)
    if pruner is not None and dev_sents:
        from dparse.secondorder import pruning_recall

        dev_encoded = [vocab.encode(s) for s in dev_sents]
        for enc in dev_encoded:
            enc.allowed = pruner.allowed(enc)
        recall, heads = pruning_recall(dev_encoded)
        log.info("pruner keeps %.2f%% of gold dev arcs, %.2f heads per word", recall, heads)

    for epoch in range(1, tc.epochs + 1):
        order = rng.permutation(len(encoded)) if tc.shuffle else np.arange(len(encoded))
        stats = run_epoch(model, learner, [encoded[i] for i in order], decoder, single_root,
                          desc=f"epoch {epoch}/{tc.epochs}", progress=progress,
                          keep_invalid=tc.invalid_updates == "keep")
        seconds = {"score": stats.timer.score, "decode": stats.timer.decode,
                   "update": stats.update_seconds}
        model.weights = learner.averaged()
        dev_uas = dev_las = None
        if dev_sents:
            t0 = time.perf_counter()
            parsed = list(model.parse(dev_sents, dev_decoder, single_root, ParseTimer()))
            report = evaluate(dev_sents, parsed, punct=tc.punct)
            dev_uas, dev_las = report.uas, report.las
            seconds["dev"] = time.perf_counter() - t0
        best.close_epoch(result, EpochReport(epoch, stats.uas, stats.las, dev_uas, dev_las,
                                             seconds), model.weights,
                         dev_las if tc.select_by == "las" else dev_uas, on_epoch)
    return best.finish(model, result, start)


def save_model(result: TrainResult, cfg: ExperimentConfig, directory: Path) -> None:
    """Write the selected model and its resolved config as the model directory ``directory``,
    whole or not at all (:mod:`dparse.modeldir`)."""
    with writing_model_dir(directory) as staging:
        result.model.write_files(staging)
        save_config(cfg, staging / CONFIG_FILE)
