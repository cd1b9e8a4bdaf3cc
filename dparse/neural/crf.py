"""The tree CRF of first-order arc scores, batched in torch: log-partition functions over every
tree of a sentence and, by autograd, the arc marginals.

Scores are ``scores[b, h, m]`` [B, N+1, N+1] (head first, node 0 the root, as the graph
decoders' arc arrays: docs/design.md, 'Score arrays and parts'); sentence b has
``lengths[b]`` words (nodes 0..lengths[b]), positions past it are padding and never read.
Column 0 and the diagonal are ignored. The distribution is p(tree) ∝ exp(sum of its arcs'
scores) over non-projective trees (the Matrix-Tree Theorem: Koo et al. 2007, Smith and Smith
2007) or projective trees (the inside algorithm over Eisner's chart), each with exactly one
word attached to the root (``single_root``) or any number.
"""

from __future__ import annotations

import torch

# a score standing for a disallowed arc inside the charts: finite, so that the gradients of
# logsumexp over disallowed items stay 0 (exp of -inf - -inf would be NaN)
DISALLOWED = -1e9


def _word_mask(lengths: torch.Tensor, size: int) -> torch.Tensor:
    """bool [B, size]: position i is a word (1 <= i <= lengths[b])."""
    positions = torch.arange(size, device=lengths.device)
    return (positions >= 1) & (positions <= lengths[:, None])


def arc_mask(lengths: torch.Tensor, size: int) -> torch.Tensor:
    """bool [B, size, size]: the arcs h -> m a tree of sentence b may hold (m a word, h a word
    or the root, h != m)."""
    words = _word_mask(lengths, size)
    nodes = words.clone()
    nodes[:, 0] = True
    eye = torch.eye(size, dtype=torch.bool, device=lengths.device)
    return nodes[:, :, None] & words[:, None, :] & ~eye


def matrix_tree_log_partition(scores: torch.Tensor, lengths: torch.Tensor,
                              single_root: bool) -> torch.Tensor:
    """log Z [B] over the non-projective trees, by the determinant of the Laplacian of the
    arc weights exp(scores) (Koo et al. 2007: with a single root, its first row replaced by the
    root arcs' weights). Every tree has lengths[b] arcs, so the scores are shifted by their
    largest allowed entry before exp and n times the shift added back."""
    size = scores.shape[-1]
    allowed = arc_mask(lengths, size)
    masked = scores.masked_fill(~allowed, float("-inf"))
    shift = masked.flatten(1).amax(dim=1).detach()
    shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
    weights = torch.exp(masked - shift[:, None, None]).masked_fill(~allowed, 0.0)
    root = weights[:, 0, 1:]  # [B, N]: weight of 0 -> m
    inner = weights[:, 1:, 1:]  # [B, N, N]: weight of h -> m between words
    words = _word_mask(lengths, size)[:, 1:]
    incoming = inner.sum(dim=1)  # [B, N]: sum over heads h of the weight of h -> m
    diagonal = incoming if single_root else incoming + root
    # padding positions get 1 on the diagonal: the matrix is block diagonal with an identity
    diagonal = torch.where(words, diagonal, torch.ones_like(diagonal))
    laplacian = torch.diag_embed(diagonal) - inner
    if single_root:
        laplacian = torch.cat([root[:, None, :], laplacian[:, 1:, :]], dim=1)
    sign, logdet = torch.linalg.slogdet(laplacian)
    return logdet + lengths.to(scores.dtype) * shift


def inside_log_partition(scores: torch.Tensor, lengths: torch.Tensor,
                         single_root: bool) -> torch.Tensor:
    """log Z [B] over the projective trees, by the inside algorithm over Eisner's chart in
    log space, one span width at a time for every start and sentence at once."""
    size = scores.shape[-1]
    batch = scores.shape[0]
    scores = scores.masked_fill(~arc_mask(lengths, size), DISALLOWED)
    zeros = scores.new_zeros(batch, size)
    # [w][b, i]: items over the span i..i+w; right: head i, left: head i+w
    right_complete = [zeros]
    left_complete = [zeros]
    right_incomplete: list[torch.Tensor] = [zeros]
    left_incomplete: list[torch.Tensor] = [zeros]
    for w in range(1, size):
        count = size - w
        # split i..k, k+1..j for k = i .. j-1 (t = k - i)
        split = torch.stack([right_complete[t][:, :count]
                             + left_complete[w - 1 - t][:, t + 1: t + 1 + count]
                             for t in range(w)]).logsumexp(dim=0)
        right_incomplete.append(split + torch.diagonal(scores, offset=w, dim1=1, dim2=2))
        left_incomplete.append(split + torch.diagonal(scores, offset=-w, dim1=1, dim2=2))
        # right: i..k incomplete (k = i + t, t >= 1), k..j complete
        right_complete.append(torch.stack([right_incomplete[t][:, :count]
                                           + right_complete[w - t][:, t: t + count]
                                           for t in range(1, w + 1)]).logsumexp(dim=0))
        # left: i..k complete (t = k - i < w), k..j incomplete
        left_complete.append(torch.stack([left_complete[t][:, :count]
                                          + left_incomplete[w - t][:, t: t + count]
                                          for t in range(w)]).logsumexp(dim=0))
    # complete[b, w, i]: the span i..i+w, padded past its last start
    def table(items: list[torch.Tensor]) -> torch.Tensor:
        return torch.stack([torch.nn.functional.pad(item, (0, size - item.shape[1]),
                                                    value=DISALLOWED) for item in items], dim=1)

    rights = table(right_complete)
    index = torch.arange(batch, device=scores.device)
    if not single_root:
        return rights[index, lengths, 0]
    lefts = table(left_complete)
    heads = torch.arange(1, size, device=scores.device)  # the root's one child m
    widths = (lengths[:, None] - heads[None, :]).clamp(min=0)
    terms = (scores[:, 0, 1:] + lefts[:, heads - 1, 1]
             + rights[index[:, None], widths, heads[None, :]])
    terms = terms.masked_fill(heads[None, :] > lengths[:, None], DISALLOWED)
    return terms.logsumexp(dim=1)


def log_partition(scores: torch.Tensor, lengths: torch.Tensor, *, projective: bool,
                  single_root: bool) -> torch.Tensor:
    """log Z [B] over the projective or the non-projective trees."""
    if projective:
        return inside_log_partition(scores, lengths, single_root)
    return matrix_tree_log_partition(scores, lengths, single_root)


def marginals(scores: torch.Tensor, lengths: torch.Tensor, *, projective: bool,
              single_root: bool) -> torch.Tensor:
    """P(h -> m) [B, N+1, N+1]: the gradient of log Z with respect to the scores (0 for the
    arcs no tree holds)."""
    leaf = scores.detach().requires_grad_(True)
    with torch.enable_grad():
        total = log_partition(leaf, lengths, projective=projective,
                              single_root=single_root).sum()
        (grad,) = torch.autograd.grad(total, leaf)
    return grad


def tree_scores(scores: torch.Tensor, heads: torch.Tensor, lengths: torch.Tensor
                ) -> torch.Tensor:
    """The score [B] of each sentence's tree: the sum of scores[b, heads[b, m], m] over its
    words; heads [B, N+1] (entries past a sentence's length are ignored)."""
    size = scores.shape[-1]
    words = _word_mask(lengths, size)
    picked = scores.gather(1, heads.clamp(min=0)[:, None, :]).squeeze(1)
    return picked.masked_fill(~words, 0.0).sum(dim=1)
