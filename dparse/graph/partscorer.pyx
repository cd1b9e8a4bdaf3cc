# cython: language_level=3
"""Part scores on demand: what the higher-order charts (eisner3) ask instead of reading arrays.

Dense part arrays stop fitting early ([n+1]^4 float64 is 800 MB at n = 100), so a chart asks a
:class:`PartScorer` for each part it needs, through ``noexcept nogil`` virtual methods, indexed
head first over nodes 0..n (node 0 the root) as in docs/design.md, 'Score arrays and parts':

- ``arc(h, m)``: the arc h -> m;
- ``sib(h, m, s)``: m and s consecutive modifiers of h on one side, s farther out (m == h: s is
  the innermost one);
- ``grand(g, h, m)``: g -> h -> m;
- ``trisib(h, a, b, c)``: a, b, c consecutive in [h, m1, m2, ...], h's modifiers on one side
  innermost first (a == h: b is the innermost);
- ``gsib(g, h, m, s)``: g -> h and the sib part (h, m, s) of h.

A score is finite, or -inf / NaN for a disallowed part; never +inf. An arc with a -inf or NaN
score is *pruned*: a chart never asks for a higher-order part containing a pruned arc (so a
feature-based subclass does no work for them), and uses pruned arcs only when no tree avoids
them. ``floor`` is the score that stands in for a disallowed part, and for each pruned arc a
chart cannot avoid: it must be low enough that a tree with fewer of them always wins, i.e. below
-(P (hi - lo)) for part scores within [lo, hi] and P <= 5n parts per tree.

- :class:`PartScorer`: the base class; scores every part 0 (a Cython subclass overrides the
  kinds it has: the methods are ``cdef``, so Python subclasses cannot). Its ``floor`` defaults
  to -1e12, right for trees whose scores differ by less than 1e12. ``score`` asks one part
  from Python.
- :class:`ArrayPartScorer`: reads dense float64 arrays (absent parts score 0) and computes its
  own ``floor`` from them.
- :class:`HashedPartScorer`: arcs from an array, every higher-order part a pseudo-random score
  hashed from its indices: long-sentence tests and benchmarks without [n+1]^4 arrays.
- :class:`CountingPartScorer`: wraps another scorer and counts the requests of each kind, and
  those containing a pruned arc (which a chart promises never to make).
"""

from libc.math cimport INFINITY
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc

from dparse.graph.bounds cimport BoundsC, bounds_init, widen
from dparse._ext.types cimport score_t

KINDS = ("arc", "sib", "grand", "trisib", "gsib")
_ORDER = {"arc": 2, "sib": 3, "grand": 3, "trisib": 4, "gsib": 4}


cdef class PartScorer:
    """Scores of the parts of one sentence of ``n`` words, asked for one at a time (module
    docstring). Every part scores 0 here; ``floor`` stands in for disallowed parts."""

    def __init__(self, Py_ssize_t n, score_t floor=-1e12):
        if n < 1:
            raise ValueError(f"a part scorer needs n >= 1 words, got {n}")
        if not floor < 0.0 or floor == -INFINITY:
            raise ValueError(f"floor must be a finite negative number, got {floor}")
        self.n = n
        self.floor = floor

    cdef score_t arc(self, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        return 0.0

    cdef score_t sib(self, Py_ssize_t h, Py_ssize_t m, Py_ssize_t s) noexcept nogil:
        return 0.0

    cdef score_t grand(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        return 0.0

    cdef score_t trisib(self, Py_ssize_t h, Py_ssize_t a, Py_ssize_t b,
                        Py_ssize_t c) noexcept nogil:
        return 0.0

    cdef score_t gsib(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m,
                      Py_ssize_t s) noexcept nogil:
        return 0.0

    def score(self, str kind, *index):
        """The score of one part from Python, e.g. ``scorer.score("trisib", h, a, b, c)``;
        kind is one of arc, sib, grand, trisib, gsib, each index a node in 0..n."""
        cdef Py_ssize_t i[4]
        cdef Py_ssize_t k
        if kind not in _ORDER:
            raise ValueError(f"unknown part kind {kind!r}; kinds: {', '.join(KINDS)}")
        if len(index) != _ORDER[kind]:
            raise TypeError(f"a {kind} part has {_ORDER[kind]} indices, got {len(index)}")
        for k, node in enumerate(index):
            if not 0 <= node <= self.n:
                raise IndexError(f"node {node} out of range 0..{self.n}")
            i[k] = node
        if kind == "arc":
            return self.arc(i[0], i[1])
        if kind == "sib":
            return self.sib(i[0], i[1], i[2])
        if kind == "grand":
            return self.grand(i[0], i[1], i[2])
        if kind == "trisib":
            return self.trisib(i[0], i[1], i[2], i[3])
        return self.gsib(i[0], i[1], i[2], i[3])


# -- dense arrays ---------------------------------------------------------------------------------

cdef inline void sibling_range(Py_ssize_t h, Py_ssize_t m, Py_ssize_t N, Py_ssize_t* lo,
                               Py_ssize_t* hi) noexcept nogil:
    """The s in [lo, hi) that make (h, m, s) a sibling part of some projective tree: m == h
    gives both sides (the caller skips s == h), m > h the s beyond m, m < h those below m."""
    if m == h:
        lo[0], hi[0] = 1, N
    elif m > h:
        lo[0], hi[0] = m + 1, N
    else:
        lo[0], hi[0] = 1, m


cdef int scan_parts(ArrayPartScorer p, BoundsC* b) noexcept nogil:
    """Widens ``b`` by every entry that is a part of some projective tree (with several root
    children allowed: a superset of the single-root parts); returns 0, or 1 + the index in
    KINDS of a part array holding +inf there."""
    cdef Py_ssize_t N = p.N, N2 = N * N, N3 = N2 * N, g, h, a, m, lo, hi, base
    cdef const score_t* x
    x = p.arc_data  # arc[h, m]: m >= 1, m != h
    for h in range(N):
        if widen(b, x, h * N + 1, h * N + h) or widen(b, x, h * N + h + 1, h * N + N):
            return 1
    x = p.sib_data  # sib[h, m, s]: s beyond m on m's side of h (m == h: either side)
    if x != NULL:
        for h in range(N):
            for m in range(N):
                if m == 0 and h != 0:
                    continue
                sibling_range(h, m, N, &lo, &hi)
                base = h * N2 + m * N
                if widen(b, x, base + lo, base + min(hi, h)) or widen(
                        b, x, base + max(lo, h + 1), base + hi):
                    return 2
    x = p.grand_data  # grand[g, h, m]: h, m >= 1, g outside the span of h and m
    if x != NULL:
        for g in range(N):
            for h in range(1, N):
                base = g * N2 + h * N
                if g < h and (widen(b, x, base + g + 1, base + h)
                              or widen(b, x, base + h + 1, base + N)):
                    return 3
                if g > h and (widen(b, x, base + 1, base + h)
                              or widen(b, x, base + h + 1, base + g)):
                    return 3
    x = p.trisib_data  # trisib[h, a, b, c]: a == h or a a modifier, then b, c farther out
    if x != NULL:
        for h in range(N):
            for a in range(N):
                if a == 0 and h != 0:
                    continue
                for m in range(1, N):  # b: either side if a == h, else beyond a
                    if m == h or (a != h and not (h < a < m or m < a < h)):
                        continue
                    base = h * N3 + a * N2 + m * N
                    if (m > h and widen(b, x, base + m + 1, base + N)) or (
                            m < h and widen(b, x, base + 1, base + m)):
                        return 4
    x = p.gsib_data  # gsib[g, h, m, s]: g -> h (h >= 1) and a sibling part (h, m, s)
    if x != NULL:
        for g in range(N):
            for h in range(1, N):
                if g == h:
                    continue
                for m in range(N):
                    if m == 0 or (m != h and (m < g < h or h < g < m)):
                        continue
                    sibling_range(h, m, N, &lo, &hi)
                    base = g * N3 + h * N2 + m * N
                    # s on h's left must stay right of a left g, on its right left of a right g
                    if g < h:
                        lo = max(lo, g + 1)
                    else:
                        hi = min(hi, g)
                    if widen(b, x, base + lo, base + min(hi, h)) or widen(
                            b, x, base + max(lo, h + 1), base + hi):
                        return 5
    return 0


cdef const score_t* array_data(object scores, Py_ssize_t N, int ndim, str name) except? NULL:
    """Pointer to the data of an optional float64 C-contiguous part array with ``ndim`` axes of
    length N; NULL for None. ValueError for a wrong shape, dtype or layout."""
    cdef const score_t[:, ::1] two
    cdef const score_t[:, :, ::1] three
    cdef const score_t[:, :, :, ::1] four
    if scores is None:
        return NULL
    shape = getattr(scores, "shape", None)
    if shape is None or len(shape) != ndim or any(size != N for size in shape):
        want = ", ".join(["n+1"] * ndim)
        raise ValueError(f"{name} scores must have shape [{want}] with n+1 = {N}, got {shape}")
    if ndim == 2:
        two = scores
        return &two[0, 0]
    if ndim == 3:
        three = scores
        return &three[0, 0, 0]
    four = scores
    return &four[0, 0, 0, 0]


cdef class ArrayPartScorer(PartScorer):
    """Part scores read from dense float64 C-contiguous arrays: ``arc`` [n+1, n+1] (n >= 1),
    ``sib`` and ``grand`` [n+1]^3, ``trisib`` and ``gsib`` [n+1]^4, each optional but arc (None:
    that kind scores 0). The arrays are read, not copied (``arrays`` keeps them alive).

    ``floor`` is lo - (5n + 1)(hi - lo + 1), lo and hi the extreme allowed scores of the entries
    that are parts of some projective tree (and 0); only those entries are checked, and +inf
    there is a ValueError. Entries of no projective tree are never read by a chart.
    """

    def __init__(self, arc, sib=None, grand=None, trisib=None, gsib=None):
        cdef BoundsC b
        cdef int status
        shape = getattr(arc, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
            raise ValueError(
                f"arc must be a square [n+1, n+1] score matrix with n >= 1, got shape {shape}"
            )
        self.N = shape[0]
        self.n = self.N - 1
        self.arc_data = array_data(arc, self.N, 2, "arc")
        self.sib_data = array_data(sib, self.N, 3, "sib")
        self.grand_data = array_data(grand, self.N, 3, "grand")
        self.trisib_data = array_data(trisib, self.N, 4, "trisib")
        self.gsib_data = array_data(gsib, self.N, 4, "gsib")
        self.arrays = (arc, sib, grand, trisib, gsib)
        bounds_init(&b, INFINITY, -INFINITY)
        with nogil:
            status = scan_parts(self, &b)
        if status:
            raise ValueError(f"{KINDS[status - 1]} scores must not be +inf")
        b.lo = min(b.lo, 0.0)
        b.hi = max(b.hi, 0.0)
        self.floor = b.lo - (5 * self.n + 1) * (b.hi - b.lo + 1.0)

    cdef score_t arc(self, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        return self.arc_data[h * self.N + m]

    cdef score_t sib(self, Py_ssize_t h, Py_ssize_t m, Py_ssize_t s) noexcept nogil:
        if self.sib_data == NULL:
            return 0.0
        return self.sib_data[(h * self.N + m) * self.N + s]

    cdef score_t grand(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        if self.grand_data == NULL:
            return 0.0
        return self.grand_data[(g * self.N + h) * self.N + m]

    cdef score_t trisib(self, Py_ssize_t h, Py_ssize_t a, Py_ssize_t b,
                        Py_ssize_t c) noexcept nogil:
        if self.trisib_data == NULL:
            return 0.0
        return self.trisib_data[((h * self.N + a) * self.N + b) * self.N + c]

    cdef score_t gsib(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m,
                      Py_ssize_t s) noexcept nogil:
        if self.gsib_data == NULL:
            return 0.0
        return self.gsib_data[((g * self.N + h) * self.N + m) * self.N + s]


# -- hashed scores -------------------------------------------------------------------------------

cdef inline uint64_t mix(uint64_t x) noexcept nogil:
    """The splitmix64 finalizer: a bijection scattering every input bit over the output."""
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EB
    return x ^ (x >> 31)


cdef class HashedPartScorer(PartScorer):
    """Arc scores from ``arc`` (float64 C-contiguous [n+1, n+1], -inf or NaN for pruned arcs);
    every sib, grand, trisib and gsib part scores a pseudo-random number in [-scale, scale)
    hashed from ``seed`` and its indices, so that long sentences need no [n+1]^4 arrays (tests,
    benchmarks). ``floor`` is computed as ArrayPartScorer's would be for such scores."""

    def __init__(self, arc, uint64_t seed=0, score_t scale=1.0):
        cdef BoundsC b
        cdef Py_ssize_t h, N
        if not scale > 0.0 or scale == INFINITY:
            raise ValueError(f"scale must be a finite positive number, got {scale}")
        shape = getattr(arc, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
            raise ValueError(
                f"arc must be a square [n+1, n+1] score matrix with n >= 1, got shape {shape}"
            )
        N = shape[0]
        self.n = N - 1
        self.arc_data = array_data(arc, N, 2, "arc")
        self.arc_scores = arc
        self.seed = seed
        self.scale = scale
        bounds_init(&b, -scale, scale)
        for h in range(N):
            if widen(&b, self.arc_data, h * N + 1, h * N + h) or widen(
                    &b, self.arc_data, h * N + h + 1, (h + 1) * N):
                raise ValueError("arc scores must not be +inf")
        self.floor = b.lo - (5 * self.n + 1) * (b.hi - b.lo + 1.0)

    cdef score_t hashed(self, uint64_t kind, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c,
                        Py_ssize_t d) noexcept nogil:
        cdef uint64_t x = mix(self.seed * <uint64_t>5 + kind)
        x = mix(x ^ <uint64_t>a)
        x = mix(x ^ <uint64_t>b)
        x = mix(x ^ <uint64_t>c)
        x = mix(x ^ <uint64_t>d)
        return ((x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0) * self.scale

    cdef score_t arc(self, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        return self.arc_data[h * (self.n + 1) + m]

    cdef score_t sib(self, Py_ssize_t h, Py_ssize_t m, Py_ssize_t s) noexcept nogil:
        return self.hashed(1, h, m, s, 0)

    cdef score_t grand(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        return self.hashed(2, g, h, m, 0)

    cdef score_t trisib(self, Py_ssize_t h, Py_ssize_t a, Py_ssize_t b,
                        Py_ssize_t c) noexcept nogil:
        return self.hashed(3, h, a, b, c)

    cdef score_t gsib(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m,
                      Py_ssize_t s) noexcept nogil:
        return self.hashed(4, g, h, m, s)


# -- counting requests ----------------------------------------------------------------------------

cdef class CountingPartScorer(PartScorer):
    """Passes every request on to ``inner`` and counts it: ``counts`` per kind, and
    ``pruned_requests``, the higher-order requests containing an arc that ``inner`` scores -inf
    or NaN, or that no tree has (into the root, or a loop). For tests and benchmarks."""

    def __init__(self, PartScorer inner not None):
        cdef Py_ssize_t N = inner.n + 1, h, m
        cdef score_t a
        self.n = inner.n
        self.floor = inner.floor
        self.inner = inner
        self.pruned = <unsigned char*>malloc(N * N)
        if self.pruned == NULL:
            raise MemoryError("CountingPartScorer")
        for h in range(N):
            for m in range(N):
                a = inner.arc(h, m)
                self.pruned[h * N + m] = m == 0 or m == h or not a > -INFINITY
        self.reset()

    def __dealloc__(self):
        free(self.pruned)

    def reset(self):
        """Sets every count back to 0."""
        cdef int k
        for k in range(5):
            self.calls[k] = 0
        self.pruned_calls = 0

    @property
    def counts(self):
        """Requests per kind since the last reset: {kind: count}."""
        return {kind: self.calls[k] for k, kind in enumerate(KINDS)}

    @property
    def pruned_requests(self):
        """Higher-order requests since the last reset that contained a pruned arc."""
        return self.pruned_calls

    cdef void note(self, int kind, Py_ssize_t h1, Py_ssize_t m1, Py_ssize_t h2, Py_ssize_t m2,
                   Py_ssize_t h3, Py_ssize_t m3) noexcept nogil:
        cdef Py_ssize_t N = self.n + 1
        self.calls[kind] += 1
        if kind > 0 and ((h1 != m1 and self.pruned[h1 * N + m1])
                         or (h2 != m2 and self.pruned[h2 * N + m2])
                         or (h3 != m3 and self.pruned[h3 * N + m3])):
            self.pruned_calls += 1

    cdef score_t arc(self, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        self.note(0, h, m, h, h, h, h)
        return self.inner.arc(h, m)

    cdef score_t sib(self, Py_ssize_t h, Py_ssize_t m, Py_ssize_t s) noexcept nogil:
        self.note(1, h, m, h, s, h, h)
        return self.inner.sib(h, m, s)

    cdef score_t grand(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
        self.note(2, g, h, h, m, h, h)
        return self.inner.grand(g, h, m)

    cdef score_t trisib(self, Py_ssize_t h, Py_ssize_t a, Py_ssize_t b,
                        Py_ssize_t c) noexcept nogil:
        self.note(3, h, a, h, b, h, c)
        return self.inner.trisib(h, a, b, c)

    cdef score_t gsib(self, Py_ssize_t g, Py_ssize_t h, Py_ssize_t m,
                      Py_ssize_t s) noexcept nogil:
        self.note(4, g, h, h, m, h, s)
        return self.inner.gsib(g, h, m, s)
