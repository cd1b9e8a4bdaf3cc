"""Decoders by stable name: the one entry point from scores to trees.

The contract (see DESIGN.md, "Python contract for decoders")::

    from dparse.decoders import get_decoder
    heads = get_decoder("cle").decode(arc)                  # arc: float64 [n+1, n+1], arc[h, m]
    heads = get_decoder("eisner").decode(arc, single_root=False)

Conventions: nodes 0..n, node 0 the artificial root; ``arc[h, m]`` scores the arc h -> m (higher
is better; column 0 and the diagonal are ignored; -inf or NaN marks a disallowed arc, used only
when no tree avoids it). Every decoder returns ``heads``, np.int32 [n+1] with ``heads[0] == -1``,
a valid tree in the sense of :func:`dparse.trees.is_tree` (projective for projective decoders);
``single_root=True`` (the default) attaches exactly one word to the root.

Registered here: ``cle`` (Chu-Liu-Edmonds, exact, non-projective), ``eisner`` (exact,
projective), and the exact projective second-order ``eisner2-sib`` (parts arc, sib) and
``eisner2-sibgp`` (parts arc, sib, grand), the exact projective third-order ``eisner3`` and
``eisner3-outermost`` (parts arc, sib, grand, trisib, gsib; the latter counts grand and gsib
parts only for outermost modifiers, as ``cube`` does), and the approximate non-projective
greedy ``bgi`` and ``bgi-pp`` (parts arc, sib, grand; options beam and improve, and alpha and
beta for ``bgi-pp``), and the approximate projective ``cube`` (generalized higher-order Eisner
with cube pruning; parts arc, sib, grand, trisib, gsib; options k and recombination); a part
keyword given as None is left out. A new decoder subclasses :class:`Decoder`, implements
:meth:`Decoder._decode` and is registered with :func:`register_decoder` (usable as a class
decorator).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from typing import ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dparse._ext.cle import chu_liu_edmonds
from dparse._ext.eisner import eisner
from dparse._ext.eisner2 import eisner2_sib, eisner2_sibgp
from dparse._ext.eisner3 import eisner3
from dparse._ext.generalized_eisner import ArrayScorer, ChartScorer, GeneralizedEisner
from dparse._ext.greedy import greedy
from dparse.errors import DparseError

__all__ = [
    "ChuLiuEdmonds",
    "ConfiguredDecoder",
    "CubePruning",
    "Decoder",
    "Eisner",
    "Eisner2Sib",
    "Eisner2SibGrand",
    "Eisner3",
    "Eisner3Outermost",
    "GreedyBGI",
    "GreedyBGIPP",
    "UnknownDecoderError",
    "as_scores",
    "available_decoders",
    "configured_decoder",
    "get_decoder",
    "register_decoder",
    "score_tree",
]

Heads = NDArray[np.int32]
Scores = NDArray[np.float64]

_FLOAT64 = np.dtype(np.float64)


class UnknownDecoderError(DparseError, LookupError):
    """No decoder is registered under the requested name (bad usage: the CLI exits 2)."""


def as_scores(scores: ArrayLike, name: str = "arc", ndim: int = 2) -> Scores:
    """``scores`` as a C-contiguous float64 array with ``ndim`` axes, all of length n+1, n >= 1.

    Returns the array itself when it already is one (no copy); converts other real dtypes.
    Raises ValueError naming the part otherwise.
    """
    if type(scores) is np.ndarray and scores.dtype is _FLOAT64 and scores.flags.c_contiguous:
        array = scores  # the fast path: no conversion, no copy
    else:
        array = np.asarray(scores)
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
            raise ValueError(f"{name} scores must be real numbers, got dtype {array.dtype}")
        array = np.ascontiguousarray(array, dtype=np.float64)
    shape = array.shape
    if len(shape) != ndim or shape[0] < 2 or shape.count(shape[0]) != ndim:
        want = ", ".join(["n+1"] * ndim)
        raise ValueError(f"{name} scores must have shape [{want}] with n >= 1, got {shape}")
    return array


class Decoder:
    """Base of all decoders: from part scores to the best (or a good) tree.

    Attributes: ``name`` (the registry key), ``exact`` (returns a maximum-score tree),
    ``projective`` (returns only projective trees), ``parts`` (the part arrays it accepts:
    "arc" always, first and positional; higher-order parts such as "sib" [n+1, n+1, n+1] or
    "grand" [n+1, n+1, n+1] by keyword).
    """

    name: ClassVar[str]
    exact: ClassVar[bool]
    projective: ClassVar[bool]
    parts: ClassVar[tuple[str, ...]] = ("arc",)

    def decode(self, arc: ArrayLike, *, single_root: bool = True, **parts: ArrayLike) -> Heads:
        """Best tree for ``arc`` (float64 [n+1, n+1]) and any higher-order ``parts``.

        Returns np.int32 [n+1], heads[0] == -1. Raises ValueError for malformed scores and
        TypeError for part keywords this decoder does not accept; a part given as None is
        left out (as if not given).
        """
        arc = as_scores(arc)
        if parts:
            unknown = sorted(set(parts) - set(self.parts[1:]))
            if unknown:
                raise TypeError(
                    f"decoder {self.name!r} got unknown part(s) {', '.join(unknown)}; "
                    f"it accepts {', '.join(self.parts)}"
                )
            size = arc.shape[0]
            parts = {
                key: self._check_part(key, value, size)
                for key, value in parts.items()
                if value is not None
            }
        return self._decode(arc, single_root, **parts)

    def _check_part(self, name: str, scores: ArrayLike, size: int) -> Scores:
        """Validates a keyword part: by default float64 with axes of length n+1 (``size``), 4 of
        them for trisib and gsib, 3 for the others."""
        array = as_scores(scores, name, ndim=4 if name in ("trisib", "gsib") else 3)
        if array.shape[0] != size:
            raise ValueError(f"{name} scores have shape {array.shape}, expected axes of {size}")
        return array

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        """Decodes validated inputs; subclasses implement it."""
        raise NotImplementedError

    def __repr__(self) -> str:
        kind = ("exact" if self.exact else "approximate") + (
            ", projective" if self.projective else ""
        )
        return f"<{type(self).__name__} {self.name!r}: {kind}, parts {self.parts}>"


D = TypeVar("D", bound="Decoder | type[Decoder]")

_REGISTRY: dict[str, Decoder] = {}


def register_decoder(decoder: D, *, replace: bool = False) -> D:
    """Registers a Decoder instance, or a Decoder class (instantiated without arguments; so
    this works as a class decorator), under its ``name``. Returns its argument.

    A second decoder under a taken name is a ValueError unless ``replace``.
    """
    instance = decoder() if isinstance(decoder, type) else decoder
    if not isinstance(instance, Decoder):
        raise TypeError(f"can only register Decoder objects, got {decoder!r}")
    if instance.name in _REGISTRY and not replace:
        raise ValueError(f"a decoder named {instance.name!r} is already registered")
    _REGISTRY[instance.name] = instance
    return decoder


def available_decoders() -> list[str]:
    """Names of all registered decoders, sorted."""
    return sorted(_REGISTRY)


def get_decoder(name: str) -> Decoder:
    """The decoder registered as ``name``; UnknownDecoderError (a DparseError) if none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownDecoderError(
            f"unknown decoder {name!r}; available: {', '.join(available_decoders())}"
        ) from None


class ConfiguredDecoder(Decoder):
    """A registered decoder with keyword options (e.g. ``max_iter``) bound into every call."""

    def __init__(self, decoder: Decoder, options: Mapping[str, object]) -> None:
        self.decoder = decoder
        self.options = dict(options)
        self.name = decoder.name  # type: ignore[misc]
        self.exact = decoder.exact  # type: ignore[misc]
        self.projective = decoder.projective  # type: ignore[misc]
        self.parts = decoder.parts  # type: ignore[misc]

    def decode(self, arc: ArrayLike, *, single_root: bool = True, **parts: ArrayLike) -> Heads:
        return self.decoder.decode(arc, single_root=single_root, **parts, **self.options)


def configured_decoder(name: str, options: Mapping[str, object] | None = None) -> Decoder:
    """``get_decoder(name)``, with ``options`` passed to every ``decode`` call when given."""
    decoder = get_decoder(name)
    return ConfiguredDecoder(decoder, options) if options else decoder


def score_tree(heads: ArrayLike, arc: ArrayLike) -> float:
    """Total first-order score of a tree: the sum of ``arc[heads[m], m]`` over words m >= 1.

    heads: int [n+1]; arc: [n+1, n+1]. Disallowed arcs (-inf) make the total -inf.
    """
    h = np.asarray(heads)
    a = np.asarray(arc, dtype=np.float64)
    return float(a[h[1:], np.arange(1, h.shape[0])].sum())


class _Extension(Decoder):
    """A first-order decoder implemented by a Cython function ``(arc, single_root) -> heads``."""

    function: ClassVar[Callable[[Scores, bool], Heads]]

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return self.function(arc, single_root)


@register_decoder
class ChuLiuEdmonds(_Extension):
    """Maximum spanning arborescence (Chu and Liu 1965; Edmonds 1967) in Tarjan's (1977) O(n^2)
    dense form; single root by reweighting the root arcs (Stanojevic and Cohen 2021), also
    O(n^2). See dparse/_ext/cle.pyx."""

    name = "cle"
    exact = True
    projective = False
    function = staticmethod(chu_liu_edmonds)


@register_decoder
class Eisner(_Extension):
    """Best projective tree, Eisner's (1996) O(n^3) dynamic program; single root by building
    the root's span from one root arc. See dparse/_ext/eisner.pyx."""

    name = "eisner"
    exact = True
    projective = True
    function = staticmethod(eisner)


@register_decoder
class Eisner2Sib(Decoder):
    """Best projective tree under arc and consecutive-sibling parts: second-order Eisner
    (McDonald and Pereira 2006), O(n^3) time and memory. A missing ``sib`` counts as zeros.
    See dparse/_ext/eisner2.pyx."""

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
    as zeros. See dparse/_ext/eisner2.pyx."""

    name = "eisner2-sibgp"
    exact = True
    projective = True
    parts = ("arc", "sib", "grand")

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return eisner2_sibgp(arc, parts.get("sib"), parts.get("grand"), single_root)


@register_decoder
class Eisner3(Decoder):
    """Best projective tree under arc, sibling, grandparent, tri-sibling and grand-sibling parts
    (every one of each, as DESIGN.md defines them; the part set of Koo and Collins's 2010 Model
    2): exact, O(n^5) time on dense scores, fast on pruned ones (-inf arcs). Missing parts count
    as zeros. See dparse/_ext/eisner3.pyx; ``eisner3_scorer`` there decodes from a PartScorer
    (dparse/_ext/partscorer.pyx) that scores parts on demand."""

    name = "eisner3"
    exact = True
    projective = True
    parts = ("arc", "sib", "grand", "trisib", "gsib")

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return eisner3(arc, single_root=single_root, **parts)


@register_decoder
class Eisner3Outermost(Eisner3):
    """Koo and Collins's (2010) Model 2 as published: exact, O(n^4) time, O(n^3) memory. Parts
    as for ``eisner3``, except that grand[g, h, m] and gsib[g, h, s, m] count only for m the
    outermost modifier of h on its side (s the one before it, or h): the part semantics of
    ``cube``. See dparse/_ext/eisner3.pyx."""

    name = "eisner3-outermost"

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        return eisner3(arc, single_root=single_root, outermost=True, **parts)


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
    swaps (Section 6, dparse/_ext/improve.pyx; int >= 0, default 0). In C:
    dparse/_ext/greedy.pyx, equal to the reference dparse/greedy_reference.py."""

    name = "bgi"
    exact = False
    projective = False
    parts = ("arc", "sib", "grand")
    option_names: ClassVar[tuple[str, ...]] = ("beam", "improve")

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

    def _search(self, arc: Scores, sib: Scores | None, grand: Scores | None,
                single_root: bool) -> Heads:
        return greedy(arc, sib, grand, single_root, False, 1.0, 0.5, self.beam)[0]

    def _decode(self, arc: Scores, single_root: bool, **parts: Scores) -> Heads:
        sib, grand = parts.get("sib"), parts.get("grand")
        heads = self._search(arc, sib, grand, single_root)
        if self.improve:
            from dparse._ext.improve import improve_tree  # imported on first use only

            heads = improve_tree(heads, arc, sib, grand, self.improve, single_root)
        return heads


@register_decoder
class GreedyBGIPP(GreedyBGI):
    """Greedy inference with partial part predictions, BGI-PP (Tchernowitz et al. 2016,
    Algorithm 2). Options as for ``bgi``, plus ``alpha`` (softmax sharpness of the arc
    probabilities, finite, >= 0, default 1.0) and ``beta`` (the loss weight, in [0, 1],
    default 0.5); the defaults are untuned (the paper tunes alpha in [0, 2.5], beta in
    [0.2, 0.5])."""

    name = "bgi-pp"
    option_names: ClassVar[tuple[str, ...]] = ("alpha", "beta", "beam", "improve")

    def __init__(
        self, alpha: float = 1.0, beta: float = 0.5, beam: int = 1, improve: int = 0
    ) -> None:
        super().__init__(beam, improve)
        self.alpha = _real_option("alpha", alpha, 0.0)
        self.beta = _real_option("beta", beta, 0.0, 1.0)

    def _search(self, arc: Scores, sib: Scores | None, grand: Scores | None,
                single_root: bool) -> Heads:
        return greedy(arc, sib, grand, single_root, True, self.alpha, self.beta, self.beam)[0]


@register_decoder
class CubePruning(Decoder):
    """Generalized higher-order Eisner with cube pruning (Zhang and McDonald 2012): projective,
    approximate. Parts arc, sib, grand, trisib, gsib, missing ones zero; grand and gsib count
    only for outermost grandchildren (the exact semantics: dparse/_ext/generalized_eisner.pyx).
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
        chart = GeneralizedEisner(self.k, self.recombination)
        return chart.parse(arc, scorer, labels, single_root)


# decoders defined in extension modules register themselves on import (after the registry exists)
import dparse._ext.dd2  # noqa: E402, F401  "dd2": second-order non-projective, dual decomposition
from dparse import umst as _umst  # noqa: E402, F401  "umst", "umst-df[-max|-min]": undirected MST

