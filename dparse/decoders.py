"""Decoders by stable name: the one entry point from scores to trees.

The contract (docs/design.md, 'Decoder contract')::

    from dparse.decoders import get_decoder
    heads = get_decoder("cle").decode(arc)                  # arc: float64 [n+1, n+1], arc[h, m]
    heads = get_decoder("eisner").decode(arc, single_root=False)

Conventions: nodes 0..n, node 0 the artificial root; ``arc[h, m]`` scores the arc h -> m (higher
is better; column 0 and the diagonal are ignored; -inf or NaN marks a disallowed arc, used only
when no tree avoids it). Every decoder returns ``heads``, np.int32 [n+1] with ``heads[0] == -1``,
a valid tree in the sense of :func:`dparse.trees.is_tree` (projective for projective decoders);
``single_root=True`` (the default) attaches exactly one word to the root.

The decoders register themselves (:func:`register_decoder`, usable as a class decorator) in
the modules of their parser families: :mod:`dparse.graph.decoders` (``cle``, ``eisner``, the
exact second- and third-order ``eisner2-*`` and ``eisner3*``, the greedy ``bgi`` and ``bgi-pp``,
and ``cube``), :mod:`dparse.graph.dd2` (``dd2``) and :mod:`dparse.undirected.decoders` (``umst``
and ``umst-df*``). Each family's record names its modules
(:attr:`dparse.families.ParserFamily.decoders`); ``PROVIDERS``, read from the registry when
asked for (this module imports no provider and no family at its own import), lists them in
registry order, imported in order at the lookup of a name not yet registered until one
registers it (all of them for :func:`available_decoders`). A part keyword given as None is
left out. A new decoder subclasses :class:`Decoder`, implements :meth:`Decoder._decode`, is
registered, and its module is named in its family's record. :func:`check_decoder` checks a
config's decoder setting (a family's config check calls it).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dparse.errors import ConfigError, DparseError

# PROVIDERS too (module __getattr__: read from the registry when asked for)
__all__ = [
    "ConfiguredDecoder",
    "Decoder",
    "UnknownDecoderError",
    "as_scores",
    "available_decoders",
    "check_decoder",
    "configured_decoder",
    "find_decoder",
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
    "grand" [n+1, n+1, n+1] by keyword) and ``reads_pruned_parts`` (reads parts that hold a
    pruned arc, one with a -inf arc score, which must then be 0; False: reads only parts whose
    arcs all have finite scores, so a part array may hold anything elsewhere).
    """

    name: ClassVar[str]
    exact: ClassVar[bool]
    projective: ClassVar[bool]
    parts: ClassVar[tuple[str, ...]] = ("arc",)
    reads_pruned_parts: ClassVar[bool] = True

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


def _providers() -> tuple[str, ...]:
    """The modules whose decoders register themselves on import: every family's
    (:attr:`dparse.families.ParserFamily.decoders`) in registry order, imported in this order
    at the first lookup of a name not yet registered, until one registers it. Read from the
    registry at each use, so that a family registered later is seen."""
    from dparse.families import families

    return tuple(module for record in families() for module in record.decoders)


def __getattr__(name: str) -> tuple[str, ...]:
    """``PROVIDERS``: :func:`_providers`, read when asked for."""
    if name != "PROVIDERS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _providers()


def _import_providers(until: str | None = None) -> None:
    for module in _providers():
        if until is not None and until in _REGISTRY:
            return
        importlib.import_module(module)  # a no-op once imported


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
    _import_providers()
    return sorted(_REGISTRY)


def find_decoder(name: str) -> Decoder | None:
    """The decoder registered as ``name``, or None if there is none."""
    _import_providers(until=name)
    return _REGISTRY.get(name)


def get_decoder(name: str) -> Decoder:
    """The decoder registered as ``name``; UnknownDecoderError (a DparseError) if none."""
    decoder = find_decoder(name)
    if decoder is None:
        raise UnknownDecoderError(
            f"unknown decoder {name!r}; available: {', '.join(available_decoders())}"
        )
    return decoder


class ConfiguredDecoder(Decoder):
    """A registered decoder with keyword options (e.g. ``max_iter``) bound into every call."""

    def __init__(self, decoder: Decoder, options: Mapping[str, object]) -> None:
        self.decoder = decoder
        self.options = dict(options)
        self.name = decoder.name  # type: ignore[misc]
        self.exact = decoder.exact  # type: ignore[misc]
        self.projective = decoder.projective  # type: ignore[misc]
        self.parts = decoder.parts  # type: ignore[misc]
        self.reads_pruned_parts = decoder.reads_pruned_parts  # type: ignore[misc]

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


def check_decoder(source: str, key: str, name: str, options_key: str,
                  options: Mapping[str, object]) -> None:
    """ConfigError naming ``key`` unless ``name`` is a registered decoder, or naming
    ``options_key`` unless the decoder accepts ``options`` (tried on a two-word sentence, when
    there are options: a decoder's extension is loaded at its first call); ``source``: the
    config file, first in the message."""
    try:
        decoder = configured_decoder(name, options)
    except UnknownDecoderError as exc:
        raise ConfigError(f"{source}: {key}: {exc}") from None
    if not options:
        return
    try:
        decoder.decode(np.zeros((3, 3)))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source}: {options_key} {options} rejected by decoder {name!r}: "
                          f"{exc}") from None
