"""Training a neural parser: Adam over batches of sentences of similar length, gradients
clipped, the best epoch on dev kept (:class:`dparse.epochs.BestEpoch`).

The learning rate is ``neural.lr`` throughout, or falls linearly to 0 over the run
(``neural.schedule: linear``); with ``neural.average`` the dev scores and the kept weights are
those of the weights' moving average (:mod:`dparse.neural.averaging`).

Deterministic on the CPU: the network's initialization and dropout draw from torch's
generator seeded by ``training.seed``, the batches and their order from numpy's; with the same
``neural.threads`` the same config and data give the same weights, byte for byte. Pretrained
vectors (``neural.vectors``, a path from the data root) are read before the network is built
and draw nothing from either generator.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from dparse.decoders import configured_decoder
from dparse.epochs import BestEpoch, EpochReport, TrainResult, read_split
from dparse.metrics import evaluate
from dparse.neural.averaging import WeightAverage
from dparse.neural.checks import tag_columns
from dparse.neural.losses import crf_loss, head_selection_loss, hinge_loss, label_loss
from dparse.neural.model import NeuralModel, select_device
from dparse.neural.network import Batch, ParserNetwork
from dparse.neural.vectors import read_vectors
from dparse.neural.vocab import NeuralSentence, NeuralVocabulary
from dparse.sections import ExperimentConfig


@dataclass
class NeuralEpochReport(EpochReport):
    """An epoch's report with its mean training loss (train UAS and LAS: each word's
    highest-scoring head and, at its gold head, label, before any tree decoding)."""

    loss: float = 0.0

    def summary(self, dev_file: str | None, punct: str) -> str:
        return f"{super().summary(dev_file, punct)}; loss {self.loss:.4f}"


def length_batches(sentences: Sequence[NeuralSentence], tokens: int,
                   rng: np.random.Generator) -> list[list[int]]:
    """The indices of ``sentences`` cut into batches of about ``tokens`` words of sentences
    of similar length (sorted by length, ties in a random order), the batches in a random
    order."""
    order = rng.permutation(len(sentences))
    order = order[np.argsort([len(sentences[i]) for i in order], kind="stable")]
    batches: list[list[int]] = [[]]
    words = 0
    for i in order.tolist():
        if batches[-1] and words + len(sentences[i]) > tokens:
            batches.append([])
            words = 0
        batches[-1].append(i)
        words += len(sentences[i])
    return [batches[i] for i in rng.permutation(len(batches))]


def train(cfg: ExperimentConfig, progress: bool = False,
          on_epoch: Callable[[EpochReport], None] | None = None) -> TrainResult:
    """Train the network of ``cfg`` (``parser: neural``) and return the best epoch's model."""
    start = time.perf_counter()
    n, tc = cfg.neural, cfg.training
    torch.set_num_threads(n.threads)
    device = select_device(n.device)
    torch.manual_seed(tc.seed)
    rng = np.random.default_rng(tc.seed)
    train_sents = read_split(cfg, cfg.data.train)
    dev_sents = read_split(cfg, cfg.data.dev) if cfg.data.dev else []
    vectors = read_vectors(cfg.data_path(n.vectors), n.vectors_max) if n.vectors else None
    reads = tag_columns(n.tags)
    vocab = NeuralVocabulary.build(train_sents, n.min_count, "upos" in reads,
                                   tag_columns(n.tag_heads),
                                   vectors.words if vectors else None,
                                   vectors.dim if vectors else 0,
                                   [c for c in reads if c != "upos"])
    encoded = [vocab.encode(s) for s in train_sents]
    encoded = [e for e in encoded if len(e)]
    network = ParserNetwork(n, vocab, vectors.matrix if vectors else None).to(device)
    model = NeuralModel(vocab, n, network)
    decoder = configured_decoder(cfg.decoder.name, cfg.decoder.options)
    single_root = bool(cfg.decoder.single_root)
    optimizer = torch.optim.Adam(network.parameters(), lr=n.lr, betas=(0.9, n.beta2))
    average = WeightAverage(network, n.average) if n.average > 0 else None
    result = TrainResult(model, 0)
    best = BestEpoch()
    for epoch in range(1, tc.epochs + 1):
        t0 = time.perf_counter()
        network.train()
        total = heads_right = labels_right = 0
        loss_sum = 0.0
        batches = length_batches(encoded, n.batch_tokens, rng)
        bar = tqdm(batches, desc=f"epoch {epoch}/{tc.epochs}", unit="batch",
                   disable=not progress, leave=False)
        for step, indices in enumerate(bar):
            if n.schedule == "linear":
                done = (epoch - 1 + step / len(batches)) / tc.epochs
                for group in optimizer.param_groups:
                    group["lr"] = n.lr * (1.0 - done)
            batch = Batch.of([encoded[i] for i in indices], device)
            x, arcs = network(batch)
            if n.loss == "crf":
                arc_loss = crf_loss(arcs, batch.heads, batch.lengths,
                                    projective=decoder.projective, single_root=single_root)
            elif n.loss == "hinge":
                arc_loss = hinge_loss(arcs, batch.heads, batch.lengths, decoder, single_root,
                                      network.batch_parts(x))
                if n.order == 2:  # its first-order scores prune the parts: head selection too
                    arc_loss = arc_loss + head_selection_loss(arcs, batch.heads, batch.lengths)
            else:
                arc_loss = head_selection_loss(arcs, batch.heads, batch.lengths)
            label_scores = network.labels.at_heads(x, batch.heads.clamp(min=0))
            loss = arc_loss + label_loss(label_scores, batch.labels)
            for column, scores in network.tag_scores(x).items():
                loss = loss + label_loss(scores, batch.targets[column])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(network.parameters(), n.clip)
            optimizer.step()
            if average is not None:
                average.update()
            with torch.no_grad():
                scored = batch.heads >= 0
                found = arcs.argmax(dim=1) == batch.heads
                labelled = found & (label_scores.argmax(dim=2) == batch.labels)
                total += int(scored.sum())
                heads_right += int((found & scored).sum())
                labels_right += int((labelled & scored).sum())
            loss_sum += loss.item() * len(indices)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        seconds = {"train": time.perf_counter() - t0}
        with average.swapped_in() if average is not None else nullcontext():
            dev_uas = dev_las = None
            if dev_sents:
                t1 = time.perf_counter()
                scores = evaluate(dev_sents, list(model.parse(dev_sents, decoder, single_root)),
                                  punct=tc.punct)
                dev_uas, dev_las = scores.uas, scores.las
                seconds["dev"] = time.perf_counter() - t1
            report = NeuralEpochReport(epoch, 100.0 * heads_right / max(total, 1),
                                       100.0 * labels_right / max(total, 1), dev_uas, dev_las,
                                       seconds, loss=loss_sum / max(len(encoded), 1))
            best.close_epoch(result, report, model.weights,
                             dev_las if tc.select_by == "las" else dev_uas, on_epoch)
    return best.finish(model, result, start)
