"""Parser combination by biased decoding (Tchernowitz, Yedidsion and Reichart 2016, Section 7).

A graph model scores a sentence; every part of another parser's tree T_o is raised before
decoding: ``arc[h, m] += gamma1`` for each arc h -> m of T_o, and ``sib[h, m, s] += gamma2``
and ``grand[g, h, m] += gamma2`` for each sibling and grandparent part that T_o contains
(docs/design.md, 'Score arrays and parts': ``sib[h, h, s]`` for the innermost modifier s of a side,
``sib[h, m, s]`` for consecutive modifiers m, s of one side; ``grand[g, h, m]`` for g -> h -> m,
none for arcs out of the root). As the paper does, the change is applied at test time only, to two
trained parsers, and gamma (one per part order) stands for the trust in the other parser, since the
two score on different scales.

Beyond the paper, several other trees may be given: each raises its own parts, so a part that k
of them contain gains k * gamma (a vote of the other parsers, weighed against the model).

Pruning is kept: an arc the model pruned (score -inf) stays -inf, and a part that contains a
pruned arc is not raised, so the combined parse stays inside the model's pruned graph.
Labels are the model's best label of each chosen arc, as in ``dparse parse``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

from dparse.conll import Sentence
from dparse.decoders import Decoder
from dparse.errors import InputError
from dparse.graph.model import GraphModel, best_labels
from dparse.timer import ParseTimer

__all__ = ["aligned", "bias_parts", "decode_scored", "ensemble_parse", "tree_parts"]

Index = tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]


def tree_parts(heads: NDArray[np.integer]) -> tuple[Index, Index]:
    """The sibling parts (h, m, s) and grandparent parts (g, h, m) of a tree ``heads`` int [n+1]
    (heads[0] == -1), each as three index arrays (usable as ``sib[index]``).

    Siblings: each head's modifiers on one side, innermost first, m1, m2, ..., mk give
    (h, h, m1), (h, m1, m2), ..., (h, m(k-1), mk). Grandparents: (heads[h], h, m) for every arc
    h -> m with h != 0. ``heads`` need not be a tree: every word needs a head in 0..n other
    than itself.
    """
    heads = np.asarray(heads, dtype=np.intp)
    m = np.arange(1, len(heads), dtype=np.intp)
    h = heads[1:]
    right = m > h
    # group by head, then side, then distance from the head (innermost first)
    order = np.lexsort((np.where(right, m, -m), right, h))
    hs, ms, sides = h[order], m[order], right[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (hs[1:] != hs[:-1]) | (sides[1:] != sides[:-1])
    previous = np.where(first, hs, np.roll(ms, 1))
    inner = h != 0
    return (hs, previous, ms), (heads[h[inner]], h[inner], m[inner])


def bias_parts(
    arc: NDArray[np.floating],
    parts: dict[str, NDArray[np.floating]],
    others: Sequence[NDArray[np.integer]],
    gamma1: float,
    gamma2: float,
) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]]]:
    """Copies of ``arc`` [n+1, n+1] and of the part arrays (``"sib"``, ``"grand"``:
    [n+1, n+1, n+1]; other keys are copied unchanged) with every part of each other tree in
    ``others`` (heads arrays int [n+1]) raised: arcs by ``gamma1``, sibling and grandparent parts
    by ``gamma2``, once per tree that contains them. Arcs scored -inf (pruned) stay -inf and
    parts holding one are not raised."""
    m = np.arange(1, arc.shape[0])
    biased = np.array(arc, dtype=np.float64)
    allowed = np.isfinite(biased)
    out = {name: np.array(value, dtype=np.float64) for name, value in parts.items()}
    for other in others:
        other = _checked_tree(other, arc.shape[0])
        biased[other[1:], m] += gamma1  # -inf + gamma1 stays -inf
        sib_index, grand_index = tree_parts(other)
        if "sib" in out:
            h, s1, s2 = sib_index
            # (h, h, s) needs only the arc h -> s
            keep = allowed[h, s2] & ((s1 == h) | allowed[h, s1])
            out["sib"][h[keep], s1[keep], s2[keep]] += gamma2
        if "grand" in out:
            g, h, c = grand_index
            keep = allowed[g, h] & allowed[h, c]
            out["grand"][g[keep], h[keep], c[keep]] += gamma2
    return biased, out


def _checked_tree(other_heads: NDArray[np.integer], size: int) -> NDArray[np.intp]:
    """``other_heads`` as intp [size]; ValueError unless every word has a head in 0..n other
    than itself."""
    other = np.asarray(other_heads, dtype=np.intp)
    if other.shape != (size,):
        raise ValueError(f"other tree has {other.shape[0] - 1} words, the scores {size - 1}")
    if other[1:].min(initial=0) < 0 or other.max(initial=0) >= len(other):
        raise ValueError("other tree has a head out of range 0..n")
    if (other[1:] == np.arange(1, len(other))).any():
        raise ValueError("other tree has a word that is its own head")
    return other


def decode_scored(
    decoder: Decoder,
    arc: NDArray[np.floating],
    label: NDArray[np.integer],
    parts: dict[str, NDArray[np.floating]],
    single_root: bool = True,
) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """Heads int32 [n+1] and label ids int32 [n+1] from a sentence's scores (as
    ``GraphModel.score_parts`` returns them); the decoder gets the part arrays it accepts."""
    accepted = {k: v for k, v in parts.items() if k in decoder.parts}
    heads = decoder.decode(arc, single_root=single_root, **accepted)
    return heads, best_labels(label, heads)


def aligned(
    sentences: Iterable[Sentence], *others: Iterable[Sentence]
) -> Iterator[tuple[Sentence, ...]]:
    """Tuples (sentence, its counterpart in each of ``others``), sentence by sentence;
    InputError naming the other file and line where a stream differs from ``sentences`` in
    sentence count, word count or a word form, or where an other parse makes a word its own
    head."""
    streams = [iter(other) for other in others]
    last: list[Sentence | None] = [None] * len(streams)  # each stream's last sentence
    k = 0
    for k, sent in enumerate(sentences, 1):
        row = [sent]
        for j, right in enumerate(streams):
            other = next(right, None)
            if other is None:
                name = "" if last[j] is None else f" {last[j].source}"  # the file that ran out
                raise InputError(sent.source, sent.lineno,
                                 f"sentence {k} has no counterpart in the other parse{name} "
                                 f"(it has {k - 1} sentences)")
            last[j] = other
            if other.form != sent.form:
                raise InputError(other.source, *_word_mismatch(sent, other, k))
            loops = np.flatnonzero(other.heads[1:] == np.arange(1, len(other) + 1))
            if len(loops):
                m = int(loops[0]) + 1
                raise InputError(other.source, other.line_of(m),
                                 f"other parse sentence {k} word {m} is its own head")
            row.append(other)
        yield tuple(row)
    for right in streams:
        extra = next(right, None)
        if extra is not None:
            raise InputError(extra.source, extra.lineno,
                             f"other parse sentence {k + 1} has no counterpart in the input "
                             f"(it has {k} sentences)")


def _word_mismatch(sent: Sentence, other: Sentence, k: int) -> tuple[int, str]:
    """The line of the other sentence and the problem, for sentences with different words."""
    if len(other) != len(sent):
        return other.lineno, (f"other parse sentence {k} has {len(other)} words but the input "
                              f"({sent.source}:{sent.lineno}) has {len(sent)}")
    m = next(i for i, (a, b) in enumerate(zip(sent.form, other.form, strict=True), 1) if a != b)
    return other.line_of(m), (f"other parse sentence {k} word {m} is {other.form[m - 1]!r} but "
                              f"the input ({sent.source}:{sent.line_of(m)}) has "
                              f"{sent.form[m - 1]!r}")


def ensemble_parse(
    model: GraphModel,
    sentences: Iterable[Sentence],
    others: Sequence[Iterable[Sentence]],
    decoder: Decoder,
    gamma1: float,
    gamma2: float,
    single_root: bool = True,
    timer: ParseTimer | None = None,
) -> Iterator[Sentence]:
    """Parse ``sentences`` with ``model``, biased towards the trees of each stream in ``others``
    (the same sentences parsed by other parsers, checked by :func:`aligned`; an other sentence
    without heads, all ``_``, gives no vote); yields copies with HEAD and DEPREL replaced.
    The sentences are encoded as the model's parse encodes them (``GraphModel.encoded``: a
    neural model scores them in batches). ``timer`` counts encoding, scoring and decoding
    (biasing included)."""
    timer = timer if timer is not None else ParseTimer()
    names = model.vocab.labels
    pending: deque[list[Sentence]] = deque()  # the others' trees of the sentences read ahead

    def items() -> Iterator[tuple[Sentence, None]]:
        for sent, *counterparts in aligned(sentences, *others):
            pending.append(counterparts)
            yield sent, None

    for sent, _, enc in model.encoded(items(), timer):
        counterparts = pending.popleft()
        t1 = time.perf_counter()
        arc, label, parts = model.score_parts(enc, None, False)
        t2 = time.perf_counter()
        votes = [o.heads for o in counterparts if (o.heads[1:] >= 0).all()]
        arc, parts = bias_parts(arc, parts, votes, gamma1, gamma2)
        heads, labels = decode_scored(decoder, arc, label, parts, single_root)
        deprels = [""] + [names[i] for i in labels[1:].tolist()]
        timer.score += t2 - t1
        timer.decode += time.perf_counter() - t2
        timer.sentences += 1
        timer.tokens += len(sent)
        yield sent.with_parse(heads, deprels)
