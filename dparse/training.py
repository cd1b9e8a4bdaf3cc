"""Online training of the labeled first-order model, with model selection on a dev file.

Each epoch visits the training sentences in a seeded random order; each sentence is scored
(cost-augmented for the passive-aggressive learner), decoded with the configured decoder and,
when the prediction differs from gold, learned from. After each epoch the averaged weights parse
the dev file; the epoch with the best dev score (``training.select_by``) is kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from dparse._ext.arcfeatures import FeatureSpace, feature_delta
from dparse.config import ExperimentConfig, save_config
from dparse.conll import Sentence, read_treebank
from dparse.decoders import get_decoder
from dparse.errors import DparseError
from dparse.learning import AveragedLearner
from dparse.metrics import evaluate
from dparse.model import CONFIG_FILE, ArcFactoredModel, ParseTimer
from dparse.vocab import Vocabulary

log = logging.getLogger(__name__)


@dataclass
class EpochReport:
    """What one epoch did: training accuracy, dev scores, time by stage (seconds)."""

    epoch: int
    train_uas: float
    train_las: float
    dev_uas: float | None
    dev_las: float | None
    seconds: dict[str, float]


@dataclass
class TrainResult:
    """The selected model and the history of the run."""

    model: ArcFactoredModel
    best_epoch: int
    epochs: list[EpochReport] = field(default_factory=list)
    seconds: float = 0.0


def read_split(cfg: ExperimentConfig, relative: str) -> list[Sentence]:
    """Read one treebank file of the config's data section."""
    path = cfg.data_path(relative)
    if not path.exists():
        raise DparseError(
            f"{path}: treebank not found (data root {cfg.data_root!r}; set --data-root or "
            "DPARSE_DATA)"
        )
    return read_treebank(path, fmt=cfg.data.format, encoding=cfg.data.encoding)


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
    space = FeatureSpace(cfg.features.arc_bits, cfg.features.label_bits, len(vocab.labels))
    encoded = [vocab.encode(s) for s in train_sents]
    decoder = get_decoder(cfg.decoder.name)
    single_root = cfg.decoder.single_root
    tc = cfg.training
    learner = AveragedLearner(space.size, tc.learner, tc.C)
    rng = np.random.default_rng(tc.seed)
    model = ArcFactoredModel(vocab, space, learner.averaged())
    best: tuple[float, int, np.ndarray] | None = None
    result = TrainResult(model=model, best_epoch=0)
    n_tokens = sum(len(e) for e in encoded)

    for epoch in range(1, tc.epochs + 1):
        order = rng.permutation(len(encoded)) if tc.shuffle else np.arange(len(encoded))
        seconds = {"score": 0.0, "decode": 0.0, "update": 0.0}
        correct_heads = correct_labeled = seen = 0
        bar = tqdm(order, desc=f"epoch {epoch}/{tc.epochs}", unit="sent", disable=not progress,
                   leave=False, dynamic_ncols=True)
        for step, i in enumerate(bar):
            enc = encoded[i]
            t0 = time.perf_counter()
            arc, label = model.score(enc, weights=learner.w,
                                     cost_augmented=learner.cost_augmented)
            t1 = time.perf_counter()
            heads = decoder.decode(arc, single_root=single_root)
            t2 = time.perf_counter()
            labels = np.full(len(heads), -1, dtype=np.int32)
            labels[1:] = label[heads[1:], np.arange(1, len(heads))]
            right_head = heads[1:] == enc.heads[1:]
            correct_heads += int(right_head.sum())
            n_right = int((right_head & (labels[1:] == enc.labels[1:])).sum())
            correct_labeled += n_right
            seen += len(enc)
            if n_right < len(enc):
                idx, val = feature_delta(enc.tokens, enc.morph_ptr, enc.morph, space,
                                         enc.heads, enc.labels, heads, labels)
                cost = 2.0 * int((~right_head).sum()) + float(len(enc) - n_right)
                learner.update(idx, val, cost)
            learner.tick()
            seconds["score"] += t1 - t0
            seconds["decode"] += t2 - t1
            seconds["update"] += time.perf_counter() - t2
            if progress and step % 500 == 0:
                bar.set_postfix(uas=f"{100 * correct_heads / max(seen, 1):.2f}",
                                las=f"{100 * correct_labeled / max(seen, 1):.2f}")
        bar.close()
        model.weights = learner.averaged()
        dev_uas = dev_las = None
        if dev_sents:
            t0 = time.perf_counter()
            parsed = list(model.parse(dev_sents, decoder, single_root, ParseTimer()))
            report = evaluate(dev_sents, parsed, punct=tc.punct)
            dev_uas, dev_las = report.uas, report.las
            seconds["dev"] = time.perf_counter() - t0
            key = dev_las if tc.select_by == "las" else dev_uas
            if best is None or key > best[0]:
                best = (key, epoch, model.weights)
        else:
            best = (0.0, epoch, model.weights)
        rep = EpochReport(epoch, 100 * correct_heads / n_tokens, 100 * correct_labeled / n_tokens,
                          dev_uas, dev_las, seconds)
        result.epochs.append(rep)
        if on_epoch is not None:
            on_epoch(rep)

    assert best is not None
    model.weights = best[2]
    result.best_epoch = best[1]
    result.seconds = time.perf_counter() - start
    return result


def save_model(result: TrainResult, cfg: ExperimentConfig, directory: Path) -> None:
    """Write the selected model and its resolved config into ``directory``."""
    result.model.save(directory)
    save_config(cfg, directory / CONFIG_FILE)
