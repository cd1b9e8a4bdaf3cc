"""The training losses of a batch, each averaged over its scored words (those with a gold
head; labels: those with a gold head and a known label). Arc scores are [B, N+1, N+1] (head
first), ``heads`` and ``labels`` int64 [B, N+1] (-1 where not annotated or padding); the hinge
loss also takes a second-order network's parts (:mod:`dparse.neural.secondorder`)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from dparse.decoders import Decoder
from dparse.graph.model import PartScratch
from dparse.neural.crf import arc_mask, log_partition, tree_scores
from dparse.neural.secondorder import BatchParts


def head_selection_loss(scores: torch.Tensor, heads: torch.Tensor,
                        lengths: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of each word's gold head among the nodes of its sentence (itself left
    out): the local loss of Dozat and Manning (2017)."""
    allowed = arc_mask(lengths, scores.shape[-1])
    logits = scores.masked_fill(~allowed, float("-inf")).transpose(1, 2)  # [B, m, h]
    scored = heads >= 0
    return F.cross_entropy(logits[scored], heads[scored])


def annotated_trees(heads: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """bool [B]: the sentences whose every word has a gold head (the others' gold tree is
    not a tree, so that the tree losses leave them out)."""
    complete = ((heads >= 0) | (torch.arange(heads.shape[1], device=heads.device)[None, :]
                                > lengths[:, None]))
    complete[:, 0] = True
    return complete.all(dim=1)


def crf_loss(scores: torch.Tensor, heads: torch.Tensor, lengths: torch.Tensor, *,
             projective: bool, single_root: bool) -> torch.Tensor:
    """The negative log-likelihood of the gold trees under the tree CRF
    (:mod:`dparse.neural.crf`), per word: log Z minus the gold tree's score. Sentences with an
    unannotated head are left out (their gold tree is not a tree)."""
    whole = annotated_trees(heads, lengths)
    if not whole.any():
        return scores.sum() * 0.0
    scores, heads, lengths = scores[whole].double(), heads[whole], lengths[whole]
    nll = log_partition(scores, lengths, projective=projective, single_root=single_root)
    nll = nll - tree_scores(scores, heads, lengths)
    return (nll.sum() / lengths.sum()).float()


def label_loss(label_scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of each word's gold label; ``label_scores`` [B, N+1, L] at its gold
    head. Also a tag head's loss: ``label_scores`` its tag scores, ``labels`` the gold tags."""
    scored = labels >= 0
    if not scored.any():
        return label_scores.sum() * 0.0
    return F.cross_entropy(label_scores[scored], labels[scored])


def hinge_loss(scores: torch.Tensor, heads: torch.Tensor, lengths: torch.Tensor,
               decoder: Decoder, single_root: bool, parts: BatchParts | None = None
               ) -> torch.Tensor:
    """The structured hinge loss with cost-augmented decoding by ``decoder`` (any dparse
    decoder: the one the model parses with), per word: each sentence's tree y* that
    ``decoder`` finds under the scores plus 1 on every arc not in the gold tree, and
    s(y*) + cost(y*) - s(gold), which is 0 when the gold tree wins by a margin of its Hamming
    cost (>= 0 for an exact decoder; an inexact one may return a tree that scores below gold,
    clipped to 0). Sentences with an unannotated head are left out.

    With ``parts`` (a second-order network's, :class:`dparse.neural.secondorder.BatchParts`)
    a tree's score s also sums its sibling and grandparent parts of the kinds the decoder
    reads, over the arcs the first-order scores keep and the gold arcs (the others -inf), so
    that the gradient is the found tree's parts minus the gold tree's."""
    whole = annotated_trees(heads, lengths).tolist()
    kinds = [] if parts is None else [k for k in parts.factors if k in decoder.parts]
    scratch = PartScratch(zeroed=decoder.reads_pruned_parts)
    margins = []
    words = 0
    trees: list[tuple[int, np.ndarray]] = []  # (sentence, heads): found, gold, found, ...
    augmented = scores.detach().double().cpu().numpy()
    gold = heads.cpu().numpy()
    for b, n in enumerate(lengths.tolist()):
        if not whole[b]:
            continue
        first = augmented[b, :n + 1, :n + 1]
        arc = first + 1.0
        arc[gold[b, 1:n + 1], np.arange(1, n + 1)] -= 1.0
        arrays: dict[str, np.ndarray] = {}
        if parts is not None:
            allowed, arrays = parts.arrays(b, first, gold[b, :n + 1], kinds, scratch)
            arc[allowed == 0] = -np.inf
        found = decoder.decode(np.ascontiguousarray(arc), single_root=single_root, **arrays)
        cost = int((found[1:] != gold[b, 1:n + 1]).sum())
        dependents = torch.arange(1, n + 1, device=scores.device)
        predicted = scores[b, torch.as_tensor(found[1:], dtype=torch.long,
                                              device=scores.device), dependents].sum()
        margins.append(predicted + cost - scores[b, heads[b, 1:n + 1], dependents].sum())
        trees += [(b, found), (b, gold[b, :n + 1])]
        words += n
    if kinds and margins:
        assert parts is not None
        part_scores = parts.tree_scores(trees, kinds)
        margins = list(torch.stack(margins) + part_scores[0::2] - part_scores[1::2])
    total = scores.sum() * 0.0
    for margin in margins:
        total = total + torch.clamp(margin, min=0.0)
    return total / max(words, 1)
