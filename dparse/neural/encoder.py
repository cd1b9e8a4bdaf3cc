"""The encoder: each node's vector from its word, characters and (optionally) tag, through a
BiLSTM.

Inputs of a batch of B sentences padded to N+1 nodes (node 0 the root): ``words``, ``tags``
int64 [B, N+1], ``chars`` int64 [B, N+1, C], ``lengths`` int64 [B] (words per sentence), and
with pretrained vectors ``pretrained`` int64 [B, N+1] (the pretrained word ids).
Output float32 [B, N+1, 2 * lstm_dim]; a node's vector depends only on its own sentence
(packed sequences, padded characters masked), so a sentence encodes alike in any batch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from dparse.neural.sections import NeuralConfig
from dparse.neural.vocab import PAD, UNK


class CharCNN(nn.Module):
    """A word's vector from its characters: embeddings, one convolution, max over positions.

    Each distinct word of a batch is convolved once, as one matrix product over its windows
    of ``kernel`` characters (the convolution's weights, applied without conv1d: several
    times faster on a CPU at these sizes)."""

    def __init__(self, n_chars: int, dim: int, filters: int, kernel: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_chars, dim, padding_idx=PAD)
        self.conv = nn.Conv1d(dim, filters, kernel, padding=kernel // 2)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """chars int64 [B, T, C] -> float32 [B, T, filters]."""
        b, t, c = chars.shape
        words, inverse = torch.unique(chars.reshape(b * t, c), dim=0, return_inverse=True)
        return self.spellings(words)[inverse].reshape(b, t, -1)

    def spellings(self, words: torch.Tensor) -> torch.Tensor:
        """words int64 [W, C] (character ids, PAD after the word) -> float32 [W, filters];
        a row of PAD only (a padding node) gives zeros."""
        kernel = self.conv.kernel_size[0]
        left = self.conv.padding[0]
        c = words.shape[1]
        x = F.pad(self.embed(words), (0, 0, left, kernel - 1 - left))  # [W, C + k - 1, D]
        windows = x.unfold(1, kernel, 1).reshape(len(words), c, -1)  # [W, C, D * k]
        out = windows @ self.conv.weight.reshape(len(self.conv.weight), -1).t() + self.conv.bias
        out = out.masked_fill((words == PAD)[:, :, None], float("-inf")).amax(dim=1)
        # a padding node (no character) has -inf everywhere: 0 instead
        return torch.where(torch.isfinite(out), out, torch.zeros_like(out))


class Encoder(nn.Module):
    """Word embeddings (with word dropout in training), the character CNN and the tag
    embeddings (with ``tags: upos``) concatenated, then a BiLSTM (:mod:`dparse.neural`).

    With pretrained vectors (``n_pretrained`` rows of ``pretrained_dim``: the three special
    ids' rows zero), a word's embedding is its trained embedding plus its pretrained vector
    times a trained matrix (``project`` [word_dim, pretrained_dim], no bias, initialized to
    zero: training starts from the network without vectors, whatever the file's scale). The
    table is a buffer (``pretrained``: saved with the weights, never trained). Word dropout
    replaces the trained word id only: a dropped word keeps its pretrained vector, as a word
    unseen in training but in the vectors file has at parse time."""

    def __init__(self, cfg: NeuralConfig, n_words: int, n_chars: int, n_tags: int,
                 n_pretrained: int = 0, pretrained_dim: int = 0,
                 extra: dict[str, int] | None = None) -> None:
        super().__init__()
        self.word_dropout = cfg.word_dropout
        self.words = nn.Embedding(n_words, cfg.word_dim, padding_idx=PAD)
        self.chars = CharCNN(n_chars, cfg.char_dim, cfg.char_filters, cfg.char_kernel)
        self.tags = nn.Embedding(n_tags, cfg.tag_dim, padding_idx=PAD) if n_tags else None
        # each other tag column read (xpos, feats: ``extra``, its number of ids): the sum of
        # its symbols' embeddings (a FEATS value's features)
        self.extra_tags = nn.ModuleDict({column: nn.Embedding(n, cfg.tag_dim, padding_idx=PAD)
                                         for column, n in (extra or {}).items()})
        size = (cfg.word_dim + cfg.char_filters + (cfg.tag_dim if n_tags else 0)
                + cfg.tag_dim * len(self.extra_tags))
        self.dropout = nn.Dropout(cfg.dropout)
        self.lstm = nn.LSTM(size, cfg.lstm_dim, cfg.lstm_layers, batch_first=True,
                            bidirectional=True, dropout=cfg.dropout if cfg.lstm_layers > 1 else 0.0)
        self.out_dim = 2 * cfg.lstm_dim
        self.project: nn.Parameter | None = None
        if n_pretrained:  # zeros: draws nothing from the generator, the other modules init alike
            self.register_buffer("pretrained", torch.zeros(n_pretrained, pretrained_dim))
            self.project = nn.Parameter(torch.zeros(cfg.word_dim, pretrained_dim))

    def forward(self, words: torch.Tensor, chars: torch.Tensor, tags: torch.Tensor,
                lengths: torch.Tensor, pretrained: torch.Tensor | None = None,
                char_vectors: torch.Tensor | None = None,
                extra: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
        """The node vectors; ``char_vectors`` [B, N+1, filters]: the character CNN's output
        when the caller has it (a parse's :mod:`dparse.neural.charcache`), else computed;
        ``extra`` the ids [B, N+1, K] of each column of ``extra_tags``."""
        if self.training and self.word_dropout > 0:
            dropped = torch.rand(words.shape, device=words.device) < self.word_dropout
            words = words.masked_fill(dropped & (words > UNK + 1), UNK)  # never PAD, ROOT
        embedded = self.words(words)
        if self.project is not None:
            embedded = embedded + F.linear(F.embedding(pretrained, self.pretrained),
                                           self.project)
        parts = [embedded, self.chars(chars) if char_vectors is None else char_vectors]
        if self.tags is not None:
            parts.append(self.tags(tags))
        for column, embed in self.extra_tags.items():
            assert extra is not None
            parts.append(embed(extra[column]).sum(dim=2))
        x = self.dropout(torch.cat(parts, dim=-1))
        packed = pack_padded_sequence(x, (lengths + 1).cpu(), batch_first=True,
                                      enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        return self.dropout(out)
