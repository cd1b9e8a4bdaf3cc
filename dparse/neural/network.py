"""The whole network of a neural parser: the encoder, the biaffine arc and label scorers, the
tag heads and, of second order, the sibling and grandparent scorers
(:mod:`dparse.neural.secondorder`), over a batch of :class:`dparse.neural.vocab.NeuralSentence`
(``Batch``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from dparse.neural.biaffine import ArcScorer, LabelScorer
from dparse.neural.encoder import Encoder
from dparse.neural.secondorder import BatchParts, SecondOrderScorer
from dparse.neural.sections import NeuralConfig
from dparse.neural.vocab import NeuralSentence, NeuralVocabulary


@dataclass
class Batch:
    """Sentences padded to N+1 nodes: ``words``, ``tags`` int64 [B, N+1], ``chars`` int64
    [B, N+1, C], ``heads`` and ``labels`` int64 [B, N+1] (-1 where unknown or padding),
    ``lengths`` int64 [B], ``targets`` the gold tag ids int64 [B, N+1] of each predicted
    column (-1 where unknown or padding), ``pretrained`` the pretrained word ids int64
    [B, N+1] (PAD in padding; None without pretrained vectors), ``char_vectors`` the
    character CNN's output float32 [B, N+1, filters] when a parse has it (None: the encoder
    computes it), ``extra`` the ids int64 [B, N+1, K] of each other tag column the network
    reads (PAD in padding)."""

    words: torch.Tensor
    chars: torch.Tensor
    tags: torch.Tensor
    heads: torch.Tensor
    labels: torch.Tensor
    lengths: torch.Tensor
    targets: dict[str, torch.Tensor] = field(default_factory=dict)
    pretrained: torch.Tensor | None = None
    char_vectors: torch.Tensor | None = None
    extra: dict[str, torch.Tensor] = field(default_factory=dict)

    @classmethod
    def of(cls, sentences: Sequence[NeuralSentence], device: torch.device) -> Batch:
        size = max(len(s) for s in sentences) + 1
        width = max(s.chars.shape[1] for s in sentences)
        b = len(sentences)
        words = np.zeros((b, size), dtype=np.int64)
        tags = np.zeros((b, size), dtype=np.int64)
        chars = np.zeros((b, size, width), dtype=np.int64)
        heads = np.full((b, size), -1, dtype=np.int64)
        labels = np.full((b, size), -1, dtype=np.int64)
        for i, s in enumerate(sentences):
            t = len(s) + 1
            words[i, :t], tags[i, :t], heads[i, :t], labels[i, :t] = (s.words, s.tags, s.heads,
                                                                      s.labels)
            chars[i, :t, :s.chars.shape[1]] = s.chars
        lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        targets = {}
        for column in sentences[0].targets:
            gold = np.full((b, size), -1, dtype=np.int64)
            for i, s in enumerate(sentences):
                gold[i, :len(s) + 1] = s.targets[column]
            targets[column] = torch.from_numpy(gold).to(device)
        extra = {}
        for column in sentences[0].extra:
            k = max(s.extra[column].shape[1] for s in sentences)
            ids = np.zeros((b, size, k), dtype=np.int64)
            for i, s in enumerate(sentences):
                table = s.extra[column]
                ids[i, :len(table), :table.shape[1]] = table
            extra[column] = torch.from_numpy(ids).to(device)
        pretrained = None
        if sentences[0].pretrained is not None:
            ids = np.zeros((b, size), dtype=np.int64)
            for i, s in enumerate(sentences):
                ids[i, :len(s) + 1] = s.pretrained
            pretrained = torch.from_numpy(ids).to(device)
        return cls(*(torch.from_numpy(a).to(device) for a in (words, chars, tags, heads,
                                                               labels, lengths)), targets,
                   pretrained, extra=extra)


class ParserNetwork(nn.Module):
    """Encoder, arc scorer, label scorer, a linear tag head for each column the vocabulary
    predicts (:mod:`dparse.neural`) and, with ``cfg.order`` 2, the second-order scorers
    (``second_order``; None for first order); with the vocabulary's pretrained words, the encoder's
    pretrained table: ``vectors`` float32 [len(vocab.pretrained), dim] (in training: the
    file's vectors) or None (zeros: a saved model's weights fill it)."""

    def __init__(self, cfg: NeuralConfig, vocab: NeuralVocabulary,
                 vectors: np.ndarray | None = None) -> None:
        super().__init__()
        specials = 3
        n_pretrained = len(vocab.pretrained) + specials if vocab.pretrained is not None else 0
        self.encoder = Encoder(cfg, len(vocab.words) + specials, len(vocab.chars) + specials,
                               len(vocab.tags) + specials if vocab.reads_tags else 0,
                               n_pretrained, vocab.pretrained_dim,
                               {c: len(names) + specials for c, names in vocab.extra.items()})
        if vectors is not None:
            with torch.no_grad():
                self.encoder.pretrained[specials:] = torch.from_numpy(vectors)
        self.arcs = ArcScorer(self.encoder.out_dim, cfg.arc_dim, cfg.dropout)
        self.labels = LabelScorer(self.encoder.out_dim, cfg.label_dim, len(vocab.labels),
                                  cfg.dropout)
        self.tag_heads = nn.ModuleDict({column: nn.Linear(self.encoder.out_dim, len(names))
                                        for column, names in vocab.predicts.items()})
        # built last: a first-order network draws its initial weights as before
        self.second_order = (SecondOrderScorer(self.encoder.out_dim, cfg.part_dim, cfg.dropout,
                                               cfg.prune_top_k, cfg.prune_threshold)
                             if cfg.order == 2 else None)

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The node vectors [B, N+1, D] and the arc scores [B, N+1, N+1] (head first)."""
        x = self.encoder(batch.words, batch.chars, batch.tags, batch.lengths,
                         batch.pretrained, batch.char_vectors, batch.extra)
        return x, self.arcs(x)

    def tag_scores(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Each predicted column's tag scores [B, N+1, tags] from the node vectors."""
        return {column: head(x) for column, head in self.tag_heads.items()}

    def batch_parts(self, x: torch.Tensor) -> BatchParts | None:
        """The second-order projections of the node vectors (None for a first-order
        network)."""
        if self.second_order is None:
            return None
        return BatchParts(self.second_order(x), self.second_order)
