"""What every trainer shares: epoch reports, keeping the best epoch on dev, reading the
config's treebank splits, the epochs of the perceptron-trained projective parsers (easy-first,
shift-reduce, the reranker: serial, or mixed from shards on several workers) and saving a
trained model as a model directory.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from dparse.columns import blank_columns, unread_columns
from dparse.config import ExperimentConfig, save_config
from dparse.conll import Sentence, read_treebank
from dparse.errors import ConfigError, DparseError
from dparse.gold import read_gold
from dparse.learning import AveragedLearner
from dparse.metrics import evaluate, format_score
from dparse.mixing import Engine, MixedTraining, ShardJob, run_mixed_epochs, shards
from dparse.modeldir import CONFIG_FILE, writing_model_dir
from dparse.projectivize import ProjectivizeReport, projectivize
from dparse.vocab import Vocabulary

if TYPE_CHECKING:  # the cluster's modules: imported to train on several workers only
    from dparse.batch.engines import WorkerOptions

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


def data_file(cfg: ExperimentConfig, relative: str) -> Path:
    """The path of a treebank file of the config's data section; DparseError naming it and
    the data root when it is missing."""
    path = cfg.data_path(relative)
    if not path.exists():
        raise DparseError(
            f"{path}: treebank not found (data root {cfg.data_root!r}; set --data-root or "
            "DPARSE_DATA)"
        )
    return path


def read_unparsed(cfg: ExperimentConfig, relative: str) -> list[Sentence]:
    """Read one treebank file of the config's data section, heads not needed (a tagger's or
    a tokenizer's): at least one sentence."""
    path = data_file(cfg, relative)
    sentences = read_treebank(path, fmt=cfg.data.format, encoding=cfg.data.encoding,
                              require_heads=False)
    if not sentences:
        raise DparseError(f"{path}: no sentences")
    return sentences


def read_split(cfg: ExperimentConfig, relative: str) -> list[Sentence]:
    """Read one treebank file of the config's data section: gold trees (:mod:`dparse.gold`),
    at least one."""
    path = data_file(cfg, relative)
    role = ("training (data.train)" if relative == cfg.data.train
            else "model selection (data.dev; null for none)")
    return read_gold(path, role, cfg.data.format, cfg.data.encoding, cfg.data.skip_invalid_trees)


def training_vocabulary(cfg: ExperimentConfig, train: list[Sentence], dev: list[Sentence]
                        ) -> tuple[list[Sentence], Vocabulary]:
    """The training sentences with the columns the model does not read blanked
    (``data.columns``, :mod:`dparse.columns`; each such column logged as a warning), and the
    vocabulary built on them, which blanks the same columns in every sentence it encodes."""
    unread, reasons = unread_columns(cfg.data.columns, train, dev)
    for reason in reasons:
        log.warning("%s: %s", cfg.name, reason)
    train = blank_columns(train, unread)
    return train, Vocabulary.build(train, unread)


@dataclass
class TrainResult:
    """What a trainer returns: the selected model (any parser type, with ``write_files``), the
    number of its epoch, the epoch reports and the seconds of the whole run."""

    model: Any
    best_epoch: int
    epochs: list[EpochReport] = field(default_factory=list)
    seconds: float = 0.0
    mixing: Any = None  # trained on several workers: the dparse.mixing.MixingLog


@dataclass
class PerceptronTrainResult(TrainResult):
    """A perceptron-trained projective parser's (easy-first, shift-reduce, reranker): also its
    own counts of each epoch and what projectivization changed."""

    projectivized: ProjectivizeReport | None = None
    counts: list[dict[str, int]] = field(default_factory=list)


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


@contextmanager
def mixing_engine(workers: WorkerOptions | None, module: str) -> Iterator[Engine | None]:
    """The engine of a perceptron trainer's ``workers`` (its workers importing ``module``:
    :func:`dparse.batch.engines.training_engine`), entered first so that the cluster starts
    while the treebank is read; None without ``workers`` (serial training)."""
    if workers is None:
        yield None
        return
    from dparse.batch.engines import training_engine

    with training_engine(workers, warm_up=[module]) as engine:
        yield engine


def run_perceptron_epochs(
    cfg: ExperimentConfig,
    model: Any,
    projectivized: ProjectivizeReport,
    n_sentences: int,
    epoch: Callable[[AveragedLearner, np.ndarray, str], dict[str, int]],
    accuracy: Callable[[dict[str, int]], tuple[float, float | None]],
    parse_dev: Callable[[list[Sentence]], list[Sentence]],
    dev_sents: list[Sentence],
    on_epoch: Callable[[EpochReport], None] | None,
    start: float,
    workers: WorkerOptions | None = None,
    engine: Engine | None = None,
    shard_job: Callable[[np.ndarray], ShardJob] | None = None,
    progress: bool = False,
) -> PerceptronTrainResult:
    """The epochs of a perceptron-trained parser over its ``n_sentences`` training sentences;
    after each, the averaged weights (in ``model.weights``) parse dev (``parse_dev``), and the
    best epoch's weights are kept in ``model``; ``accuracy(counts)`` gives an epoch's train UAS
    and LAS from its counts; the result's ``seconds`` count from ``start`` (a perf_counter).

    Serial (``engine`` None): a learner of ``model.size`` weights (``training.learner`` and
    ``C``) visits the sentences in a seeded order through ``epoch(learner, order, desc)``.
    Mixed (an ``engine`` of ``workers``: :func:`mixing_engine`): the sentences are cut into
    ``workers.workers`` shards (:func:`dparse.mixing.shards`; one shard too, which with
    ``training.shuffle`` false is serial training, byte for byte), ``shard_job(indices)`` is a
    shard's :class:`dparse.mixing.ShardJob` (its epoch returns counts, summed over the shards)
    and the epochs run by iterative parameter mixing; ``result.mixing`` is the MixingLog and
    ``progress`` shows a bar of the epochs."""
    tc = cfg.training
    result = PerceptronTrainResult(model, 0, projectivized=projectivized)
    best = BestEpoch()

    def close_epoch(number: int, counts: dict[str, int], seconds: dict[str, float],
                    weights: np.ndarray) -> None:
        model.weights = weights
        dev_uas = dev_las = None
        if dev_sents:
            t0 = time.perf_counter()
            report = evaluate(dev_sents, parse_dev(dev_sents), punct=tc.punct)
            dev_uas, dev_las = report.uas, report.las
            seconds["dev"] = time.perf_counter() - t0
        result.counts.append(counts)
        best.close_epoch(result, EpochReport(number, *accuracy(counts), dev_uas, dev_las,
                                             seconds), model.weights,
                         dev_las if tc.select_by == "las" else dev_uas, on_epoch)

    if engine is None:
        learner = AveragedLearner(model.size, tc.learner, tc.C)
        rng = np.random.default_rng(tc.seed)
        for number in range(1, tc.epochs + 1):
            order = rng.permutation(n_sentences) if tc.shuffle else np.arange(n_sentences)
            t0 = time.perf_counter()
            counts = epoch(learner, order, f"epoch {number}/{tc.epochs}")
            close_epoch(number, counts, {"train": time.perf_counter() - t0}, learner.averaged())
        return best.finish(model, result, start)

    assert workers is not None and shard_job is not None
    jobs = [shard_job(part) for part in shards(n_sentences, workers.workers, tc.seed)]
    training = MixedTraining(engine, jobs, tc.seed if tc.shuffle else None, workers.mixing)

    def close_mixed(number: int, parts: list[dict[str, int]], weights: np.ndarray) -> None:
        counts = {key: sum(part[key] for part in parts) for key in parts[0]}
        seconds = {"train": max(training.log.shard_seconds[-1]),  # the slowest shard's
                   "mix": training.log.mix_seconds[-1]}
        close_epoch(number, counts, seconds, weights)

    result.mixing = run_mixed_epochs(training, tc.epochs, close_mixed, progress)
    return best.finish(model, result, start)


def save_model(result: TrainResult, cfg: ExperimentConfig, directory: Path) -> None:
    """Write a trainer's selected model (any parser type) and its resolved config as the model
    directory ``directory``, whole or not at all (:mod:`dparse.modeldir`)."""
    with writing_model_dir(directory) as staging:
        result.model.write_files(staging)
        save_config(cfg, staging / CONFIG_FILE)
