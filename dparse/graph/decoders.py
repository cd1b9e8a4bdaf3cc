"""The decoders of the graph-based parsers, registered by name (the contract:
:mod:`dparse.decoders`).

Registered here: ``cle`` (Chu-Liu-Edmonds, exact, non-projective), ``eisner`` (exact,
projective), and the exact projective second-order ``eisner2-sib`` (parts arc, sib) and
``eisner2-sibgp`` (parts arc, sib, grand), the exact projective third-order ``eisner3`` and
``eisner3-outermost`` (parts arc, sib, grand, trisib, gsib; the latter counts grand and gsib
parts only for outermost modifiers, as ``cube`` does), and the approximate non-projective
greedy ``bgi`` and ``bgi-pp`` (parts arc, sib, grand; options beam and improve, and alpha and
beta for ``bgi-pp``), and the approximate projective ``cube`` (generalized higher-order Eisner
with cube pruning; parts arc, sib, grand, trisib, gsib; options k and recombination).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dparse.decoders import Decoder, Heads, Scores, register_decoder
from dparse.graph.cle import chu_liu_edmonds
from dparse.graph.eisner import eisner
from dparse.graph.eisner2 import eisner2_sib, eisner2_sibgp

if TYPE_CHECKING:
    from dparse.graph.generalized_eisner import ChartScorer

# The extensions of the third-order, greedy and cube-pruning decoders are imported at their
# first call: a first- or second-order parse does not load them.


class _Extension(Decoder):
    """A first-order decoder implemented by a Cython function ``(arc, single_root) -> heads``."""

    function: ClassVar[Callable[[Scores, bool], Heads]]

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return self.function(arc, single_root)


@register_decoder
class ChuLiuEdmonds(_Extension):
    """Maximum spanning arborescence (Chu and Liu 1965; Edmonds 1967) in Tarjan's (1977) O(n^2)
    dense form; single root by reweighting the root arcs (Stanojevic and Cohen 2021), also
    O(n^2). See dparse/graph/cle.pyx."""

    name = "cle"
    exact = True
    projective = False
    function = staticmethod(chu_liu_edmonds)


@register_decoder
class Eisner(_Extension):
    """Best projective tree, Eisner's (1996) O(n^3) dynamic program; single root by building
    the root's span from one root arc. See dparse/graph/eisner.pyx."""

    name = "eisner"
    exact = True
    projective = True
    function = staticmethod(eisner)


@register_decoder
class Eisner2Sib(Decoder):
    """Best projective tree under arc and consecutive-sibling parts: second-order Eisner
    (McDonald and Pereira 2006), O(n^3) time and memory. A missing ``sib`` counts as zeros.
    See dparse/graph/eisner2.pyx."""

    name = "eisner2-sib"
    exact = True
    projective = True
    parts = ("arc", "sib")

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return eisner2_sib(arc, parts.get("sib"), single_root)


@register_decoder
class Eisner2SibGrand(Decoder):
    """Best projective tree under arc, consecutive-sibling and grandparent parts: Koo and
    Collins's (2010) Model 1, O(n^4) time, O(n^3) memory. A missing ``sib`` or ``grand`` counts
    as zeros. See dparse/graph/eisner2.pyx."""

    name = "eisner2-sibgp"
    exact = True
    projective = True
    parts = ("arc", "sib", "grand")

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return eisner2_sibgp(arc, parts.get("sib"), parts.get("grand"), single_root)


@register_decoder
class Eisner3(Decoder):
    """Best projective tree under arc, sibling, grandparent, tri-sibling and grand-sibling parts
    (every one of each, as docs/design.md, 'Score arrays and parts' defines them; the part set of
    Koo and Collins's 2010 Model 2): exact, O(n^5) time on dense scores, fast on pruned ones (-inf
    arcs). Missing parts count as zeros. See dparse/graph/eisner3.pyx; ``eisner3_scorer`` there
    decodes from a PartScorer (dparse/graph/partscorer.pyx) that scores parts on demand."""

    name = "eisner3"
    exact = True
    projective = True
    parts = ("arc", "sib", "grand", "trisib", "gsib")
    outermost: ClassVar[bool] = False  # grand and gsib for outermost modifiers only

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        from dparse.graph.eisner3 import eisner3

        return eisner3(arc, single_root=single_root, outermost=self.outermost, **parts)


@register_decoder
class Eisner3Outermost(Eisner3):
    """Koo and Collins's (2010) Model 2 as published: exact, O(n^4) time, O(n^3) memory. Parts
    as for ``eisner3``, except that grand[g, h, m] and gsib[g, h, s, m] count only for m the
    outermost modifier of h on its side (s the one before it, or h): the part semantics of
    ``cube``. See dparse/graph/eisner3.pyx."""

    name = "eisner3-outermost"
    outermost = True


def _integer_option(name: str, value: object, low: int) -> int:
    """``value`` as an int >= ``low`` (a greedy decoder option); ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _real_option(name: str, value: object, low: float, high: float = math.inf) -> float:
    """``value`` as a finite float in [low, high] (a greedy decoder option); ValueError
    otherwise."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        span = f">= {low}" if high == math.inf else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be a finite number {span}, got {value!r}")
    return float(value)


@register_decoder
class GreedyBGI(Decoder):
    """Basic greedy inference, BGI (Tchernowitz et al. 2016, Algorithm 1): adds the arc with
    the lowest loss - gain until the tree is complete; missing parts count as zeros. Options
    (constructor defaults, or keywords of one ``decode`` call): ``beam``, the beam width of
    Section 6 (int >= 1, default 1: plain greedy), and ``improve``, rounds of post-search arc
    swaps (Section 6, dparse/graph/improve.pyx; int >= 0, default 0). In C:
    dparse/graph/greedy_search.pyx, equal to the reference dparse/graph/greedy_reference.py."""

    name = "bgi"
    exact = False
    projective = False
    parts = ("arc", "sib", "grand")
    reads_pruned_parts = False  # the search and its improvement rounds read allowed arcs' parts
    option_names: ClassVar[tuple[str, ...]] = ("beam", "improve")
    partial_predictions: ClassVar[bool] = False  # BGI-PP's loss; alpha and beta are its options
    alpha = 1.0
    beta = 0.5

    def __init__(self, beam: int = 1, improve: int = 0) -> None:
        self.beam = _integer_option("beam", beam, 1)
        self.improve = _integer_option("improve", improve, 0)
        self._variants: dict[tuple[tuple[str, type, object], ...], GreedyBGI] = {}

    def decode(self, arc: ArrayLike, *, single_root: bool = True, **parts: object) -> Heads:
        """As :meth:`Decoder.decode`; keyword options (``option_names``) override the defaults."""
        given = {key: parts.pop(key) for key in self.option_names if key in parts}
        unknown = sorted(set(parts) - set(self.parts[1:]))
        if unknown:
            raise TypeError(
                f"decoder {self.name!r} got unknown keyword(s) {', '.join(unknown)}; parts: "
                f"{', '.join(self.parts)}; options: {', '.join(self.option_names)}"
            )
        decoder = self._variant(given) if given else self
        return Decoder.decode(decoder, arc, single_root=single_root, **parts)  # type: ignore[arg-type]

    def _variant(self, given: dict[str, object]) -> GreedyBGI:
        """This decoder with the options ``given`` changed (validated; the last 64 are kept,
        as a ConfiguredDecoder passes the same options on every call)."""
        key = tuple((name, type(value), value) for name, value in given.items())
        try:
            return self._variants[key]
        except (KeyError, TypeError):  # TypeError: an unhashable (so invalid) option value
            current = {name: getattr(self, name) for name in self.option_names}
            variant = type(self)(**(current | given))
        if len(self._variants) >= 64:
            self._variants.clear()
        self._variants[key] = variant
        return variant

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        from dparse.graph.greedy_search import greedy

        return greedy(arc, parts.get("sib"), parts.get("grand"), single_root,
                      self.partial_predictions, self.alpha, self.beta, self.beam,
                      self.improve)[0]


@register_decoder
class GreedyBGIPP(GreedyBGI):
    """Greedy inference with partial part predictions, BGI-PP (Tchernowitz et al. 2016,
    Algorithm 2). Options as for ``bgi``, plus ``alpha`` (softmax sharpness of the arc
    probabilities, finite, >= 0, default 1.0) and ``beta`` (the loss weight, in [0, 1],
    default 0.5); the defaults are untuned (the paper tunes alpha in [0, 2.5], beta in
    [0.2, 0.5])."""

    name = "bgi-pp"
    option_names: ClassVar[tuple[str, ...]] = ("alpha", "beta", "beam", "improve")
    partial_predictions = True

    def __init__(
        self, alpha: float = 1.0, beta: float = 0.5, beam: int = 1, improve: int = 0
    ) -> None:
        super().__init__(beam, improve)
        self.alpha = _real_option("alpha", alpha, 0.0)
        self.beta = _real_option("beta", beta, 0.0, 1.0)


@register_decoder
class CubePruning(Decoder):
    """Generalized higher-order Eisner with cube pruning (Zhang and McDonald 2012): projective,
    approximate. Parts arc, sib, grand, trisib, gsib, missing ones zero; grand and gsib count
    only for outermost grandchildren (the exact semantics: dparse/graph/generalized_eisner.pyx).
    Options (constructor defaults, or keywords of one ``decode`` call): ``k``, the items kept
    per chart cell (int >= 1, default 5), and ``recombination``, merging items with equal
    signatures (bool, default True). :meth:`parse` is the labeled entry for a model's scorer.
    """

    name = "cube"
    exact = False
    projective = True
    parts = ("arc", "sib", "grand", "trisib", "gsib")

    def __init__(self, k: int = 5, recombination: bool = True) -> None:
        self.k = _integer_option("k", k, 1)
        if not isinstance(recombination, (bool, np.bool_)):
            raise ValueError(f"recombination must be true or false, got {recombination!r}")
        self.recombination = bool(recombination)

    def decode(
        self,
        arc: ArrayLike,
        *,
        single_root: bool = True,
        k: int | None = None,
        recombination: bool | None = None,
        **parts: ArrayLike,
    ) -> Heads:
        """As :meth:`Decoder.decode`; ``k`` and ``recombination`` override the defaults."""
        decoder = self
        if k is not None or recombination is not None:
            decoder = CubePruning(
                self.k if k is None else k,
                self.recombination if recombination is None else recombination,
            )
        return Decoder.decode(decoder, arc, single_root=single_root, **parts)

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        from dparse.graph.generalized_eisner import ArrayScorer

        return self.parse(arc, ArrayScorer(arc, **parts), single_root=single_root)[0]

    def parse(
        self,
        arc: ArrayLike,
        scorer: ChartScorer,
        labels: ArrayLike | None = None,
        *,
        single_root: bool = True,
    ) -> tuple[Heads, NDArray[np.int32], float]:
        """Labeled decoding under any :class:`ChartScorer` (a model's parts).

        arc: float64 [n+1, n+1], whose finite entries are the arcs the chart may build (the
        scorer scores them); labels: int [n+1, n+1, L], each arc's candidate label ids best first, a
        negative entry ending the list (None: label 0). Returns (heads int32 [n+1], deprels
        int32 [n+1] label ids, score under the scorer); heads[0] == deprels[0] == -1.
        """
        from dparse.graph.generalized_eisner import GeneralizedEisner

        chart = GeneralizedEisner(self.k, self.recombination)
        return chart.parse(arc, scorer, labels, single_root)
