"""Online training of the graph-based models (first, second and third order), with model
selection on a dev file.

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
from typing import TYPE_CHECKING

import numpy as np

from dparse._ext.arcfeatures import FeatureSpace
from dparse.aligned import aligned_zeros
from dparse.config import ExperimentConfig
from dparse.decoders import Decoder, configured_decoder
from dparse.epochs import (
    BestEpoch,
    EpochReport,
    TrainResult,
    mixing_engine,
    read_split,
    training_vocabulary,
)
from dparse.errors import InputError
from dparse.graph.model import ArcFactoredModel, GraphModel
from dparse.graph.online import EpochStats, GraphShard, run_epoch
from dparse.graph.pruner import pruning_recall, train_pruner
from dparse.graph.secondorder import SecondOrderModel
from dparse.graph.thirdorder import ThirdOrderModel
from dparse.learning import AveragedLearner
from dparse.metrics import evaluate
from dparse.mixing import Engine, MixedTraining, run_mixed_epochs, shards
from dparse.timer import ParseTimer
from dparse.vocab import EncodedSentence, Vocabulary

if TYPE_CHECKING:
    from dparse.batch.engines import WorkerOptions  # imported to train on several workers only
    from dparse.calibration import TemperatureFit
    from dparse.conll import Sentence

log = logging.getLogger(__name__)


def new_model(
    cfg: ExperimentConfig, vocab: Vocabulary, encoded: list[EncodedSentence], progress: bool,
    engine: Engine | None = None,
) -> GraphModel:
    """An untrained model of the configured order (a second- or third-order model, or a
    first-order one with ``pruner.first_order``, first trains its first-order pruner on the
    same data, its folds on ``engine``'s workers)."""
    if cfg.features.order == 1:
        # First-order models read their arc features in the blocked layout (one cache line
        # per template key); the higher-order models keep the hashed one, which their loaders
        # assume.
        space = FeatureSpace(cfg.features.arc_bits, cfg.features.label_bits, len(vocab.labels),
                             "blocked")
        pruner = (train_pruner(cfg, vocab, encoded, progress, engine)
                  if cfg.pruner.first_order else None)
        return ArcFactoredModel(vocab, space, aligned_zeros(space.size, np.float32), pruner)
    space = FeatureSpace(cfg.features.arc_bits, cfg.features.label_bits, len(vocab.labels))
    pruner = train_pruner(cfg, vocab, encoded, progress, engine)
    if cfg.features.order == 3:
        return ThirdOrderModel.untrained(vocab, cfg, pruner)
    return SecondOrderModel.untrained(vocab, space, cfg, pruner)


def training_decoder_spec(cfg: ExperimentConfig) -> tuple[str, dict]:
    """The name and options of the decoder that predicts the training sentences:
    ``training.decoder`` with ``training.decoder_options``, or when that is null the
    ``decoder`` section's."""
    tc = cfg.training
    if tc.decoder is None:
        return cfg.decoder.name, dict(cfg.decoder.options)
    return tc.decoder, dict(tc.decoder_options)


def training_decoder(cfg: ExperimentConfig) -> Decoder:
    """The decoder that predicts the training sentences (:func:`training_decoder_spec`)."""
    return configured_decoder(*training_decoder_spec(cfg))


def parsing_decoder(cfg: ExperimentConfig) -> Decoder:
    """The ``decoder`` section's decoder with its options: what parsing and dev epochs use."""
    return configured_decoder(cfg.decoder.name, cfg.decoder.options)


def train(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[EpochReport], None] | None = None,
    workers: WorkerOptions | None = None,
) -> TrainResult:
    """Train a model as the config says; returns the best epoch's averaged model. With
    ``workers`` the epochs are mixed from that many shards (:mod:`dparse.mixing`; one shard
    too) and the pruner's jackknife runs on the same workers; None: serial training."""
    with mixing_engine(workers, __name__) as engine:
        return _train(cfg, progress, on_epoch, engine, workers)


def _train(cfg: ExperimentConfig, progress: bool,
           on_epoch: Callable[[EpochReport], None] | None, engine: Engine | None,
           workers: WorkerOptions | None) -> TrainResult:
    start = time.perf_counter()
    train_sents = read_split(cfg, cfg.data.train)
    dev_sents = read_split(cfg, cfg.data.dev) if cfg.data.dev else []
    train_sents, vocab = training_vocabulary(cfg, train_sents, dev_sents)
    encoded = [vocab.encode(s) for s in train_sents]
    model = new_model(cfg, vocab, encoded, progress, engine)
    dev_decoder = parsing_decoder(cfg)
    single_root = cfg.decoder.single_root
    tc = cfg.training
    best = BestEpoch()
    result = TrainResult(model=model, best_epoch=0)
    pruner = getattr(model, "pruner", None)
    if pruner is not None and dev_sents:
        dev_encoded = [vocab.encode(s) for s in dev_sents]
        for enc in dev_encoded:
            enc.allowed = pruner.allowed(enc)
        recall, heads = pruning_recall(dev_encoded)
        log.info("pruner keeps %.2f%% of gold dev arcs, %.2f heads per word", recall, heads)

    def close_epoch(epoch: int, stats: EpochStats, weights: np.ndarray) -> None:
        seconds = {"score": stats.timer.score, "decode": stats.timer.decode,
                   "update": stats.update_seconds}
        model.weights = weights
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

    if engine is None:
        decoder = training_decoder(cfg)
        learner = AveragedLearner(model.size, tc.learner, tc.C)
        rng = np.random.default_rng(tc.seed)
        for epoch in range(1, tc.epochs + 1):
            order = rng.permutation(len(encoded)) if tc.shuffle else np.arange(len(encoded))
            stats = run_epoch(model, learner, [encoded[i] for i in order], decoder, single_root,
                              desc=f"epoch {epoch}/{tc.epochs}", progress=progress,
                              keep_invalid=tc.invalid_updates == "keep")
            close_epoch(epoch, stats, learner.averaged())
    else:
        assert workers is not None
        name, options = training_decoder_spec(cfg)
        shell = model.with_weights(np.zeros(0, dtype=np.float32))  # the workers' copy
        jobs = [GraphShard(shell, [encoded[i] for i in part], name, options, single_root,
                           tc.invalid_updates == "keep", tc.learner, tc.C)
                for part in shards(len(encoded), workers.workers, tc.seed)]
        result.mixing = run_mixed_epochs(
            MixedTraining(engine, jobs, tc.seed if tc.shuffle else None, workers.mixing),
            tc.epochs, lambda epoch, parts, weights: close_epoch(
                epoch, EpochStats.merged(parts), weights), progress)
    best.finish(model, result, start)
    if dev_sents and model.gives_marginals:
        model.calibration = fit_dev_temperature(model, dev_decoder, single_root, dev_sents)
    return result


def fit_dev_temperature(model: GraphModel, decoder: Decoder, single_root: bool,
                        dev_sents: list[Sentence]) -> TemperatureFit | None:
    """The temperature of the trained model's head probabilities under which the dev gold
    trees are most likely (:meth:`GraphModel.fit_temperature`), saved with the model; None
    (logged) when no dev tree can be scored."""
    t0 = time.perf_counter()
    try:
        fit = model.fit_temperature(dev_sents, decoder, single_root)
    except InputError as exc:
        log.warning("no temperature fitted for head probabilities: %s", exc)
        return None
    log.info("head probabilities: temperature %.4f fitted on %d dev sentences (%d skipped), "
             "dev NLL per sentence %.3f at T=1, %.3f at T (%.1f s)", fit.temperature,
             fit.sentences, fit.skipped, fit.nll_at_1, fit.nll, time.perf_counter() - t0)
    return fit
