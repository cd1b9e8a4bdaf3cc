"""An exponential moving average of a network's weights (``neural.average``), kept beside the
trained weights and swapped in to score dev and to be saved.

After step t the average moves towards the weights by ``1 - min(decay, (1 + t) / (10 + t))``:
the early steps, when the average has seen little, count more (the warm-up keeps it from
being dominated by the random initialization).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn


class WeightAverage:
    """The running average of ``network``'s floating-point parameters (float32 copies on the
    network's device), ``decay`` in (0, 1)."""

    def __init__(self, network: nn.Module, decay: float) -> None:
        self.network = network
        self.decay = decay
        self.steps = 0
        self.average = {name: p.detach().clone() for name, p in network.named_parameters()
                        if p.requires_grad}

    @torch.no_grad()
    def update(self) -> None:
        """Move the average towards the network's current weights (call after each step)."""
        self.steps += 1
        rate = 1.0 - min(self.decay, (1.0 + self.steps) / (10.0 + self.steps))
        for name, p in self.network.named_parameters():
            if name in self.average:
                self.average[name].lerp_(p.detach(), rate)

    @contextmanager
    def swapped_in(self) -> Iterator[None]:
        """The network holds the averaged weights inside the block, its own after it."""
        self._swap()
        try:
            yield
        finally:
            self._swap()

    @torch.no_grad()
    def _swap(self) -> None:
        """Exchange the network's weights and the average, in place."""
        for name, p in self.network.named_parameters():
            if name in self.average:
                own = p.detach().clone()
                p.copy_(self.average[name])
                self.average[name].copy_(own)
