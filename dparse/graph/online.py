"""One online training pass of a graph-based model (any order) over the training sentences."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from dparse.decoders import Decoder, configured_decoder
from dparse.graph.model import GraphModel, PartScratch
from dparse.learning import AveragedLearner, combine
from dparse.mixing import ModelShard
from dparse.timer import ParseTimer
from dparse.vocab import EncodedSentence


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

    @classmethod
    def merged(cls, parts: list[EpochStats]) -> EpochStats:
        """The statistics of shards' epochs as one (counts and seconds summed)."""
        total = cls()
        for part in parts:
            total.tokens += part.tokens
            total.correct_heads += part.correct_heads
            total.correct_labeled += part.correct_labeled
            total.update_seconds += part.update_seconds
            total.timer.score += part.timer.score
            total.timer.decode += part.timer.decode
        return total


@dataclass
class GraphShard(ModelShard):
    """One shard of a graph model's training (a :class:`dparse.mixing.ShardJob`): the model
    (its weights unused: the learner's are), the shard's sentences with their pruned arcs, and
    how the trainer predicts them."""

    model: GraphModel
    instances: list[EncodedSentence]
    decoder_name: str
    decoder_options: dict
    single_root: bool
    keep_invalid: bool
    method: str
    C: float

    def epoch(self, learner: AveragedLearner, order: np.ndarray) -> EpochStats:
        decoder = configured_decoder(self.decoder_name, self.decoder_options)
        return run_epoch(self.model, learner, [self.instances[i] for i in order], decoder,
                         self.single_root, "shard", progress=False,
                         keep_invalid=self.keep_invalid)


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
    from tqdm import tqdm  # here: parsing, which imports this module, never needs it

    stats = EpochStats()
    bar = tqdm(sentences, desc=desc, unit="sent", disable=not progress, leave=False,
               dynamic_ncols=True)
    scratch = PartScratch(zeroed=decoder.reads_pruned_parts)
    for step, enc in enumerate(bar):
        heads, labels = model.predict(enc, decoder, single_root, learner.w,
                                      learner.cost_augmented, stats.timer, scratch=scratch)
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
                cost += max(0.0, learner.score(idx, val))
            learner.update(idx, val, cost)
        learner.tick()
        stats.update_seconds += time.perf_counter() - t0
        if progress and step % 500 == 0:
            bar.set_postfix(uas=f"{stats.uas:.2f}", las=f"{stats.las:.2f}")
    bar.close()
    return stats
