"""Search errors of a decoder under a trained graph model (Zhang and McDonald 2012, Section 5.4).

A sentence is a *search error* when its gold tree scores higher under the model than the tree
the decoder predicted: the decoder, not the model, is to blame. Every gold sentence falls into
exactly one category:

- ``correct``: the predicted tree is the gold tree;
- ``search_errors``: gold scores higher than the prediction (beyond a rounding tolerance);
- ``ties``: the trees differ but score the same (within the tolerance);
- ``model_errors``: the prediction scores higher than gold (the model is to blame);
- ``unreachable``: the decoder cannot output the gold tree, so a higher gold score is no search
  error: a non-projective gold tree for a projective decoder (``non-projective``), several
  words attached to the root under single-root decoding (``multi-rooted``), or a gold arc or
  part the model disallows, e.g. an arc the second-order pruner removed (``disallowed``:
  a gold score of -inf). ``unreachable_higher`` counts the unreachable gold trees that still
  outscore the prediction; a sentence counts once under every reason it has.

``predicted_disallowed`` counts, across categories, the predicted trees that hold an arc or part
the model disallows (score -inf): the decoder contract allows them only when no tree avoids such
arcs, so next to a finite gold score they flag a decoder stuck in its search. Their infinite
gaps are left out of the mean score gap of the search errors.

A model that scores whole trees itself (``search_scores``: the third-order model of
dparse.graph.thirdorder, whose parts are labeled and scored on the fly) compares labeled trees: its
prediction against the gold tree with the gold labels (a gold label outside the arc's candidate
labels, or a pruned gold arc, makes gold unreachable, ``disallowed``, its score still
counted for ``unreachable_higher``); without label tuples (e.g. the unlabeled exact decoder
eisner3-outermost's models) trees are compared unlabeled, gold taking each arc's best label.

Otherwise scores are those of the part arrays the decoder sees: ``GraphModel.score_parts`` gives arc
scores [n+1, n+1] and the higher-order arrays ("sib", "grand": [n+1]^3), and the decoder gets
those among its ``parts`` (a first-order decoder on a second-order model sees arcs only).
Trees are compared unlabeled, each arc under its best label: ``arc[h, m]`` is already the
maximum over labels, and dparse's higher-order parts are unlabeled, so a tree's score is the best
score of any labeling of it. The labeled variant (gold labels scored as they are) would need the
per-label arc scores, which scoring does not keep; it is left out. Per-length bins split every
count by sentence length.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dparse.conll import read_conll
from dparse.decoders import Decoder, configured_decoder
from dparse.errors import DparseError, InputError
from dparse.families import family
from dparse.graph.ensemble import tree_parts
from dparse.graph.model import GraphModel
from dparse.modeldir import CONFIG_FILE, require_model_files
from dparse.trees import check_tree, is_projective, root_words

__all__ = [
    "CATEGORIES",
    "DEFAULT_BINS",
    "REASONS",
    "RELATIVE_TOLERANCE",
    "Comparison",
    "Counts",
    "SearchErrorReport",
    "bin_labels",
    "compare_scores",
    "compare_trees",
    "format_report",
    "load_search_setup",
    "part_scores",
    "search_errors",
    "tree_score",
    "unreachable_reasons",
]

DEFAULT_BINS = (10, 20, 30, 40)
RELATIVE_TOLERANCE = 1e-9  # two scores tie when they differ by at most this times their scale
CATEGORIES = ("correct", "search_errors", "ties", "model_errors", "unreachable")
REASONS = ("non-projective", "multi-rooted", "disallowed")


def part_scores(
    heads: ArrayLike, arc: NDArray[np.floating], parts: Mapping[str, NDArray[np.floating]]
) -> NDArray[np.float64]:
    """The score of every part of the tree ``heads`` (int [n+1], heads[0] == -1): its n arc scores
    ``arc[heads[m], m]``, then, for each array in ``parts`` ("sib", "grand": [n+1, n+1, n+1],
    docs/design.md, 'Score arrays and parts'), the scores of the tree's parts of that kind (n
    sibling parts, one grandparent part per arc not out of the root). float64 [P].

    ValueError for a part kind without a scorer here.
    """
    h = np.asarray(heads, dtype=np.intp)
    sib_index, grand_index = tree_parts(h)
    index = {"sib": sib_index, "grand": grand_index}
    chunks = [np.asarray(arc, dtype=np.float64)[h[1:], np.arange(1, len(h))]]
    for name, scores in parts.items():
        if name not in index:
            raise ValueError(f"cannot score {name!r} parts of a tree (known: arc, sib, grand)")
        chunks.append(np.asarray(scores, dtype=np.float64)[index[name]])
    return np.concatenate(chunks)


def tree_score(
    heads: ArrayLike, arc: NDArray[np.floating], parts: Mapping[str, NDArray[np.floating]]
) -> float:
    """Total score of the tree ``heads`` under ``arc`` and the part arrays ``parts``: the sum
    of :func:`part_scores` (-inf when it holds a disallowed arc)."""
    return float(part_scores(heads, arc, parts).sum())


def unreachable_reasons(
    gold: NDArray[np.integer], gold_score: float, decoder: Decoder, single_root: bool
) -> list[str]:
    """Why ``decoder`` cannot output the tree ``gold`` (names from ``REASONS``; empty: it can)."""
    reasons = []
    if decoder.projective and not is_projective(gold):
        reasons.append("non-projective")
    if single_root and root_words(gold) != 1:
        reasons.append("multi-rooted")
    if not np.isfinite(gold_score):
        reasons.append("disallowed")
    return reasons


@dataclass(frozen=True)
class Comparison:
    """One sentence: its category (one of ``CATEGORIES``), the scores of the gold and the
    predicted tree, and why gold is unreachable (empty unless the category says so)."""

    category: str
    gold_score: float
    predicted_score: float
    reasons: tuple[str, ...] = ()

    @property
    def gold_higher(self) -> bool:
        """Gold outscores the prediction beyond the tolerance (whatever the category)."""
        return self.category == "search_errors" or (
            self.category == "unreachable" and self.gap > 0
        )

    @property
    def gap(self) -> float:
        """Gold score minus predicted score (0 within the tolerance)."""
        return self.gold_score - self.predicted_score


def compare_trees(
    gold: NDArray[np.integer],
    predicted: NDArray[np.integer],
    arc: NDArray[np.floating],
    parts: Mapping[str, NDArray[np.floating]],
    decoder: Decoder,
    single_root: bool,
) -> Comparison:
    """Categorizes one sentence (module docstring) from its gold and predicted trees (int
    [n+1]) under the arc scores and part arrays the decoder saw. Two scores tie when they differ
    by at most ``RELATIVE_TOLERANCE`` times (1 + the sum of |part score| of both trees); a
    non-finite predicted score counts as -inf."""
    gold_parts = part_scores(gold, arc, parts)
    gold_score = float(gold_parts.sum())
    if np.array_equal(gold, predicted):
        return Comparison("correct", gold_score, gold_score)
    predicted_parts = part_scores(predicted, arc, parts)
    finite = np.concatenate([gold_parts[np.isfinite(gold_parts)],
                             predicted_parts[np.isfinite(predicted_parts)]])
    return compare_scores(gold, float(predicted_parts.sum()), gold_score,
                          float(np.abs(finite).sum()), decoder, single_root)


def compare_scores(
    gold: NDArray[np.integer],
    predicted_score: float,
    gold_score: float,
    scale: float,
    decoder: Decoder,
    single_root: bool,
) -> Comparison:
    """Categorizes a sentence whose predicted tree differs from the gold tree ``gold`` (int
    [n+1]) from the two trees' scores (for models that score trees themselves, e.g. the
    third-order model's labeled trees); two scores tie when they differ by at most
    ``RELATIVE_TOLERANCE`` times (1 + ``scale``, the size of the scores summed); non-finite
    scores count as -inf."""
    if not np.isfinite(predicted_score):
        predicted_score = -np.inf
    reasons = tuple(unreachable_reasons(gold, gold_score, decoder, single_root))
    if not np.isfinite(gold_score):
        return Comparison("unreachable", -np.inf, predicted_score, reasons)
    tolerance = RELATIVE_TOLERANCE * (1.0 + scale)
    gap = gold_score - predicted_score
    if abs(gap) <= tolerance:
        gold_score = predicted_score  # a tie: report equal scores (a gap of 0)
    if reasons:
        return Comparison("unreachable", gold_score, predicted_score, reasons)
    if gap > tolerance:
        return Comparison("search_errors", gold_score, predicted_score)
    if gap < -tolerance:
        return Comparison("model_errors", gold_score, predicted_score)
    return Comparison("ties", gold_score, predicted_score)


@dataclass
class Counts:
    """Sentences per category (``CATEGORIES``); the unreachable gold trees that outscore the
    prediction; the predicted trees holding a disallowed arc (score -inf, which a decoder may
    return only when no tree avoids such arcs); the sum and number of the finite score gaps of
    the search errors (a prediction scored -inf leaves its gap out)."""

    sentences: int = 0
    correct: int = 0
    search_errors: int = 0
    ties: int = 0
    model_errors: int = 0
    unreachable: int = 0
    unreachable_higher: int = 0
    predicted_disallowed: int = 0
    gap_sum: float = 0.0
    gaps: int = 0

    def add(self, comparison: Comparison) -> None:
        self.sentences += 1
        setattr(self, comparison.category, getattr(self, comparison.category) + 1)
        if comparison.category == "unreachable" and comparison.gold_higher:
            self.unreachable_higher += 1
        if comparison.predicted_score == -np.inf:
            self.predicted_disallowed += 1
        elif comparison.category == "search_errors":
            self.gap_sum += comparison.gap
            self.gaps += 1

    @property
    def mean_gap(self) -> float | None:
        """Mean of gold score - predicted score over the search errors whose prediction has a
        finite score (None without any)."""
        return self.gap_sum / self.gaps if self.gaps else None

    def as_dict(self) -> dict[str, int | float | None]:
        keys = ("sentences", *CATEGORIES, "unreachable_higher", "predicted_disallowed")
        counts: dict[str, int | float | None] = {key: getattr(self, key) for key in keys}
        counts["search_error_percent"] = (
            round(100.0 * self.search_errors / self.sentences, 2) if self.sentences else 0.0
        )
        counts["mean_gap"] = self.mean_gap
        return counts


def bin_labels(edges: Sequence[int]) -> list[str]:
    """Labels of the length bins cut at ``edges`` (positive, increasing): "1-10", ..., "41+".
    DparseError for other edges."""
    if any(e < 1 for e in edges) or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise DparseError(f"length bins must be positive and increasing, got {list(edges)}")
    starts = [1, *(e + 1 for e in edges)]
    return [f"{s}-{e}" for s, e in zip(starts, edges, strict=False)] + [f"{starts[-1]}+"]


@dataclass
class SearchErrorReport:
    """Counts over all sentences (``total``) and per sentence-length bin (``bins``, label ->
    Counts), with the decoder and the setting they were measured under."""

    decoder: str
    exact: bool
    projective: bool
    options: dict
    single_root: bool
    parts: tuple[str, ...]
    gold: str
    bin_edges: tuple[int, ...] = DEFAULT_BINS
    labeled: bool = False  # trees compared with their labels (else each arc's best label)
    total: Counts = field(default_factory=Counts)
    bins: dict[str, Counts] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REASONS, 0))

    def __post_init__(self) -> None:
        if not self.bins:
            self.bins = {label: Counts() for label in bin_labels(self.bin_edges)}

    def add(self, length: int, comparison: Comparison) -> None:
        """Counts one sentence of ``length`` words."""
        self.total.add(comparison)
        label = list(self.bins)[int(np.searchsorted(self.bin_edges, length))]
        self.bins[label].add(comparison)
        for reason in comparison.reasons:
            self.reasons[reason] += 1

    def as_dict(self) -> dict[str, object]:
        return {
            "decoder": self.decoder,
            "exact": self.exact,
            "projective": self.projective,
            "options": self.options,
            "single_root": self.single_root,
            "parts": list(self.parts),
            "labeled": self.labeled,
            "gold": self.gold,
            **self.total.as_dict(),
            "unreachable_reasons": dict(self.reasons),
            "bins": {label: counts.as_dict() for label, counts in self.bins.items()},
        }


def format_report(report: SearchErrorReport) -> str:
    """The report as a text table, one row per length bin and a total row."""
    kind = ("exact" if report.exact else "approximate") + (
        ", projective" if report.projective else ", non-projective")
    options = ", ".join(f"{k}={v}" for k, v in report.options.items()) or "none"
    lines = [
        f"search errors of {report.decoder} ({kind}; options: {options}; "
        f"{'single root' if report.single_root else 'several root children allowed'}) "
        f"on {report.gold}",
        f"scores: parts {', '.join(report.parts)}; "
        + ("trees labeled, gold with its own labels" if report.labeled
           else "trees unlabeled, each arc under its best label"),
        "",
        f"{'length':>8} {'sentences':>10} {'correct':>8} {'search err':>11} {'ties':>6} "
        f"{'model err':>10} {'unreachable':>12}",
    ]
    for label, counts in [*report.bins.items(), ("total", report.total)]:
        lines.append(
            f"{label:>8} {counts.sentences:>10} {counts.correct:>8} {counts.search_errors:>11} "
            f"{counts.ties:>6} {counts.model_errors:>10} {counts.unreachable:>12}"
        )
    total = report.total
    share = 100.0 * total.search_errors / total.sentences if total.sentences else 0.0
    gap = f"{total.mean_gap:.4g}" if total.mean_gap is not None else "-"
    reasons = ", ".join(f"{k} {v}" for k, v in report.reasons.items())
    lines += [
        "",
        f"search errors: {total.search_errors} of {total.sentences} sentences ({share:.2f}%); "
        f"mean score gap where gold wins: {gap} (finite gaps)",
        f"gold unreachable: {total.unreachable} ({reasons}); of these, gold scores higher in "
        f"{total.unreachable_higher}",
        f"predicted trees with a disallowed (pruned) arc: {total.predicted_disallowed}",
    ]
    return "\n".join(lines)


def load_search_setup(
    directory: str | os.PathLike, decoder: str | None = None, overrides: Iterable[str] = ()
) -> tuple[GraphModel, str, dict, bool]:
    """The graph model saved in ``directory``, the name of the decoder to measure (``decoder``,
    default the model's), its options and single_root, from the model's config and ``overrides``
    (``key.path=value``, e.g. ``decoder.options.max_iter=5``). A decoder other than the
    config's starts from no options (the saved ones belong to the saved decoder)."""
    from dparse.config import load_config  # the config module is needed only here

    path = Path(directory)
    require_model_files(path, CONFIG_FILE)
    saved = load_config(path / CONFIG_FILE)
    switch = [] if decoder in (None, saved.decoder.name) else [
        f"decoder.name={decoder}", "decoder.options={}"]
    cfg = load_config(path / CONFIG_FILE, [*switch, *overrides])
    if not family(cfg.parser).scores_parts:
        raise DparseError(f"{path}: search errors need a graph-based model; this one is "
                          f"parser {cfg.parser!r}")
    model = family(cfg.parser).load(path, cfg, cfg.decoder.name).model  # a GraphParser's
    return model, cfg.decoder.name, dict(cfg.decoder.options), cfg.decoder.single_root


def search_errors(
    model: GraphModel | str | os.PathLike,
    gold: str | os.PathLike,
    decoder: str | None = None,
    options: Mapping[str, object] | None = None,
    *,
    single_root: bool | None = None,
    overrides: Sequence[str] = (),
    bins: Sequence[int] = DEFAULT_BINS,
    fmt: str | None = None,
    encoding: str = "utf-8",
) -> SearchErrorReport:
    """Search errors (module docstring) of a decoder on the gold file ``gold`` under ``model``.

    ``model``: a loaded :class:`GraphModel`, or a model directory whose config gives the
    default decoder, its options and single_root (see :func:`load_search_setup`; ``overrides``
    apply to that config). ``decoder``: a registered name (required with a loaded model);
    ``options`` (keyword options of the decoder) are added to the config's. ``bins``: upper
    edges of the sentence-length bins. Raises DparseError for bad usage, InputError naming file
    and line for a gold sentence whose heads are not a tree.
    """
    if isinstance(model, GraphModel):
        if decoder is None or overrides:
            raise DparseError("search errors of a loaded model need a decoder name and take "
                              "no config overrides")
        name, chosen, root = decoder, {}, True
    else:
        model, name, chosen, root = load_search_setup(model, decoder, overrides)
    chosen = {**chosen, **(options or {})}
    dec = configured_decoder(name, chosen)
    single_root = root if single_root is None else single_root
    report = SearchErrorReport(dec.name, dec.exact, dec.projective, chosen, single_root,
                               (), os.fspath(gold), tuple(bins))
    seen: set[str] = set()
    for sent in read_conll(gold, fmt=fmt, encoding=encoding):
        enc = model.vocab.encode(sent)
        try:
            check_tree(enc.heads)
        except ValueError as exc:
            raise InputError(sent.source, sent.lineno,
                             f"gold sentence is not a tree: {exc}") from None
        if hasattr(model, "search_scores"):  # a model scoring whole (labeled) trees itself
            report.labeled = model.compares_labels(dec)
            predicted, same, gold_score, predicted_score, scale, reachable = \
                model.search_scores(enc, dec, single_root)
            check_tree(predicted, single_root=single_root, projective=dec.projective)
            if same:
                comparison = Comparison("correct", gold_score, gold_score)
            else:
                comparison = compare_scores(enc.heads, predicted_score, gold_score, scale, dec,
                                            single_root)
                if not reachable:
                    comparison = Comparison("unreachable", comparison.gold_score,
                                            comparison.predicted_score,
                                            (*comparison.reasons, "disallowed"))
            report.add(len(enc), comparison)
            seen.update(model.part_names)
            continue
        arc, _, parts = model.score_parts(enc, None, False)
        parts = {k: v for k, v in parts.items() if k in dec.parts}
        seen.update(parts)
        predicted = dec.decode(arc, single_root=single_root, **parts)
        check_tree(predicted, single_root=single_root, projective=dec.projective)
        report.add(len(enc), compare_trees(enc.heads, predicted, arc, parts, dec, single_root))
    report.parts = ("arc", *sorted(seen))
    return report
