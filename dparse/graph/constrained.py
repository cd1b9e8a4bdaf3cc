"""Constrained parsing with the graph models: fixed and forbidden arcs
(:mod:`dparse.constraints`) as disallowed arcs of the decoder contract.

The arcs a constraint rules out (every other head of a fixed word, a forbidden arc) are
disallowed (-inf, parts holding them 0: :func:`constrain_scores`); each decoder uses a
disallowed arc only when no tree avoids them. With a model, the arcs scored are the pruner's
kept arcs that the constraints allow, plus the arcs of one tree (projective for a projective
decoder) with every fixed arc, no forbidden one and the fewest pruned arcs
(:func:`allowed_arcs`): a fixed arc the pruner removed is scored with all its parts, and the
decoder always has a tree satisfying the constraints. What each decoder returns:

- exact decoders (cle, eisner, eisner2-*, eisner3*; dd2 when it certifies): the best tree
  with every fixed arc and no forbidden one, among those the model's pruner keeps when one
  exists (the unconstrained parse's trees too are the pruner's);
- approximate ones (bgi, bgi-pp, cube, dd2 uncertified): their search over the same arcs; a
  tree that breaks a constraint anyway (a greedy search can end where only a ruled-out arc
  completes the tree) is replaced by the exact first-order tree (cle, or eisner for a
  projective decoder) over the same arc scores, so every output satisfies the constraints.

Fixed labels replace the predicted DEPREL of their words (labels are first-order arc-label
parts, so a fixed arc's label does not change which tree is best; the cube decoder's label
tuples are searched with the model's labels).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from dparse.conll import Sentence
from dparse.constraints import Constraints
from dparse.decoders import Decoder, Scores, get_decoder
from dparse.graph.model import GraphModel, PartScratch
from dparse.timer import ParseTimer
from dparse.vocab import EncodedSentence

# the arcs (as (head, modifier) axis pairs) that each part's indices hold: a part with any
# disallowed arc is zeroed (docs/design.md, 'Score arrays and parts')
PART_ARCS = {
    "sib": ((0, 1), (0, 2)),  # sib[h, m, s]: h -> m (m != h), h -> s
    "grand": ((0, 1), (1, 2)),  # grand[g, h, m]: g -> h, h -> m
    "trisib": ((0, 1), (0, 2), (0, 3)),  # trisib[h, a, b, c]: h -> a (a != h), h -> b, h -> c
    "gsib": ((0, 1), (1, 2), (1, 3)),  # gsib[g, h, m, s]: g -> h, h -> m (m != h), h -> s
}


def constrain_scores(arc: Scores, parts: dict[str, Scores], allowed: np.ndarray
                     ) -> tuple[Scores, dict[str, Scores]]:
    """Copies of ``arc`` [n+1, n+1] and the higher-order ``parts`` with the arcs that
    ``allowed`` (bool [n+1, n+1]) leaves out disallowed: -inf arcs, every part holding one 0
    (a part's own "arc" h -> h, the innermost-sibling marker, counts as allowed)."""
    n1 = arc.shape[0]
    ok = allowed.copy()
    np.fill_diagonal(ok, True)
    arc = np.where(allowed, arc, -np.inf)
    out = {}
    for name, scores in parts.items():
        keep = np.ones(scores.shape, dtype=bool)
        for h, m in PART_ARCS[name]:
            shape = [1] * scores.ndim
            shape[h], shape[m] = n1, n1
            keep &= ok.reshape(shape)
        out[name] = np.where(keep, scores, 0.0)
    return arc, out


def allowed_arcs(model: GraphModel, enc: EncodedSentence, constraints: Constraints,
                 projective: bool, single_root: bool) -> np.ndarray:
    """uint8 [n+1, n+1]: the arcs a constrained parse scores: those the model's pruner keeps
    (every arc without one) and the constraints allow, plus those of one tree satisfying the
    constraints (projective if ``projective``) with the fewest arcs the pruner removed."""
    permitted = constraints.allowed()
    kept = model.allowed(enc)
    if kept is None:
        return permitted.astype(np.uint8)
    allowed = permitted & (kept > 0)
    rescue_scores = np.where(allowed, 0.0, np.where(permitted, -1.0, -np.inf))
    rescue = get_decoder("eisner" if projective else "cle").decode(rescue_scores,
                                                                   single_root=single_root)
    allowed[rescue[1:], np.arange(1, len(rescue))] = True
    return allowed.astype(np.uint8)


def predict_constrained(model: GraphModel, enc: EncodedSentence, decoder: Decoder,
                        single_root: bool, constraints: Constraints,
                        timer: ParseTimer | None = None, scratch: PartScratch | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Heads int32 [n+1] and label ids int32 [n+1] as :meth:`GraphModel.predict` gives them,
    over :func:`allowed_arcs` (module doc: what each decoder guarantees). Call
    ``constraints.check`` first: the constraints must admit a tree of the decoder's kind."""
    saved = enc.allowed
    enc.allowed = allowed_arcs(model, enc, constraints, decoder.projective, single_root)
    try:
        heads, labels = model.predict(enc, decoder, single_root, timer=timer, scratch=scratch)
        if not constraints.satisfied_by(heads):
            arc, label, _ = model.score_parts(enc, None, False)
            exact = get_decoder("eisner" if decoder.projective else "cle")
            heads = exact.decode(arc, single_root=single_root)
            labels = label[heads[1:], np.arange(1, len(heads))]
            labels = np.concatenate([[-1], labels]).astype(np.int32)
    finally:
        enc.allowed = saved
    return heads, labels


def parse_constrained(model: GraphModel, items: Iterable[tuple[Sentence, Constraints]],
                      decoder: Decoder, single_root: bool, timer: ParseTimer
                      ) -> Iterator[Sentence]:
    """As :meth:`GraphModel.parse`, each sentence under its constraints: checked (InputError
    naming the sentence for a set that admits no tree of the decoder's kind), then parsed by
    :func:`predict_constrained`, the fixed labels written for their words
    (:meth:`GraphModel.parse_items`, the loop both share)."""
    return model.parse_items(items, decoder, single_root, timer, predict_constrained)
