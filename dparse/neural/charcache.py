"""The character CNN's word vectors at parse time, each distinct spelling computed once.

A parse meets the same words again and again (en_ewt test: 3,600 distinct spellings in its
first 13,145 words), and in eval mode a word's character vector depends on its characters
only, so :class:`CharVectorCache` keeps every spelling's vector it has computed (keyed by the
word's character ids) and computes those of new spellings together, as one matrix product.
The cache belongs to the CNN's weights as they are: it empties itself when they have changed
since it was filled (a training step, loading other weights: any in-place change bumps a
tensor's version counter). It holds at most :data:`CACHE_WORDS` spellings and starts afresh
when full.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from dparse.neural.encoder import CharCNN
from dparse.neural.vocab import NeuralSentence

CACHE_WORDS = 200_000


class CharVectorCache:
    """Character vectors float32 [filters] by spelling (the ids of its characters)."""

    def __init__(self) -> None:
        self.rows: dict[bytes, int] = {}
        self.table = torch.zeros(0)
        self.weights: tuple[tuple[int, int], ...] = ()

    def clear(self) -> None:
        self.rows.clear()
        self.table = torch.zeros(0)

    def vectors(self, cnn: CharCNN, sentences: Sequence[NeuralSentence], size: int,
                device: torch.device) -> torch.Tensor:
        """The character vectors float32 [B, size, filters] of the nodes of ``sentences``
        padded to ``size`` nodes (zeros in the padding), as ``cnn`` gives them in eval
        mode (call under inference mode)."""
        weights = tuple((id(p), p._version) for p in cnn.parameters())
        if weights != self.weights:
            self.clear()
            self.weights = weights
        keys = []
        for s in sentences:
            lengths = np.count_nonzero(s.chars, axis=1)
            keys.append([row[:k].tobytes()
                         for row, k in zip(s.chars, lengths.tolist(), strict=True)])
        new = list(dict.fromkeys(k for ks in keys for k in ks if k not in self.rows))
        if len(self.rows) + len(new) > CACHE_WORDS:
            self.clear()
            new = list(dict.fromkeys(k for ks in keys for k in ks))
        if new:
            spelled = [np.frombuffer(k, dtype=np.int64) for k in new]
            width = max(len(ids) for ids in spelled)
            chars = np.zeros((len(new), width), dtype=np.int64)
            for i, ids in enumerate(spelled):
                chars[i, :len(ids)] = ids
            computed = cnn.spellings(torch.from_numpy(chars).to(device))
            start = len(self.rows)
            self.rows.update((k, start + i) for i, k in enumerate(new))
            self.table = computed if start == 0 else torch.cat([self.table, computed])
        # row len(self.rows) of the padded table: the padding nodes' zeros
        index = np.full((len(sentences), size), len(self.rows), dtype=np.int64)
        for i, ks in enumerate(keys):
            index[i, :len(ks)] = [self.rows[k] for k in ks]
        padded = torch.cat([self.table, self.table.new_zeros((1, self.table.shape[1]))])
        return padded[torch.from_numpy(index).to(device)]
