"""Head probabilities as dparse writes them, the temperature that calibrates them, and how well
calibrated they are.

A graph model's arc marginals (:mod:`dparse.graph.marginals`, P(h -> m) under p(tree) ∝
exp(sum of arc scores / T)) are written by ``dparse parse --marginals`` into CoNLL-U's MISC
column (:func:`head_attributes`): ``HeadProb=0.934``, the probability of the chosen head, and
``HeadAlt=4:0.052,7:0.011``, the other heads whose probability reaches the threshold (most
probable first, at most :data:`MAX_ALTERNATIVES`; ``,`` between them, since ``|`` separates
MISC attributes). Probabilities have 3 decimals (the calibration error read back from a file
is then within 0.0005 of the exact one). ``--marginals-file`` writes every arc at or above the
threshold as a TSV row (:func:`arc_rows`).

The temperature T (:func:`fit_temperature`) maximizes the gold trees' log-likelihood
sum_s [score_s(gold) / T - log Z_s(T)] over a treebank, by golden-section search on log T
(the negative log-likelihood is convex in 1/T, so unimodal in log T). The expected calibration
error (:func:`calibration`) bins the chosen heads' probabilities into :data:`BINS` equal-width
bins and averages |accuracy - mean probability| over the bins, weighted by their counts
(Guo et al. 2017); the bins themselves are the reliability table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import TypeVar

import numpy as np

from dparse.conll import PathLike, Sentence, read_conll
from dparse.errors import DparseError, InputError
from dparse.outputs import write_text
from dparse.punct import excluded
from dparse.trees import tree_mask

HEAD_PROB = "HeadProb"
HEAD_ALT = "HeadAlt"
DECIMALS = 3
MAX_ALTERNATIVES = 3
DEFAULT_THRESHOLD = 0.01
BINS = 10
ARC_HEADER = "sentence\tdependent\thead\tprobability\tchosen\n"
CALIBRATION_FILE = "calibration.json"  # in a model directory: the temperature fitted on dev
S = TypeVar("S")  # one sentence's part scores, as a log_partition reads them
# golden-section search range of T and its tolerance on log T
T_RANGE = (1e-3, 1e4)
LOG_T_TOLERANCE = 1e-4


def head_attributes(probs: np.ndarray, heads: np.ndarray,
                    threshold: float = DEFAULT_THRESHOLD) -> list[dict[str, str]]:
    """MISC attributes per word (for :meth:`dparse.conll.Sentence.with_misc`): ``HeadProb``,
    the probability of ``heads[m]``, and ``HeadAlt`` (only where some other head reaches
    ``threshold``; ties by the smaller head). probs: float64 [n+1, n+1], probs[h, m] =
    P(h -> m); heads: int [n+1]."""
    n = len(heads) - 1
    words = np.arange(1, n + 1)
    # each word's MAX_ALTERNATIVES + 1 most probable heads: the chosen one may be among them
    top = np.argsort(-probs[:, 1:], axis=0, kind="stable")[: MAX_ALTERNATIVES + 1]
    top_probs = np.take_along_axis(probs[:, 1:], top, axis=0)
    out = []
    for m, head, p, ranked, ranked_probs in zip(
            words.tolist(), heads[1:].tolist(), probs[heads[1:], words].tolist(),
            top.T.tolist(), top_probs.T.tolist(), strict=True):
        attrs = {HEAD_PROB: f"{p:.{DECIMALS}f}"}
        others = [f"{h}:{q:.{DECIMALS}f}" for h, q in zip(ranked, ranked_probs, strict=True)
                  if h != head and h != m and q >= threshold][:MAX_ALTERNATIVES]
        if others:
            attrs[HEAD_ALT] = ",".join(others)
        out.append(attrs)
    return out


def arc_rows(position: int, probs: np.ndarray, heads: np.ndarray,
             threshold: float = DEFAULT_THRESHOLD) -> list[str]:
    """The TSV rows (:data:`ARC_HEADER`: sentence position, 1-based; dependent; head;
    probability, 6 decimals; chosen, 1 for the parse's head) of every arc h -> m whose
    probability reaches ``threshold``, by dependent, then by falling probability."""
    rows = []
    for m in range(1, len(heads)):
        column = probs[:, m]
        for h in np.argsort(-column, kind="stable").tolist():
            if column[h] < threshold:
                break
            if h == m:
                continue
            rows.append(f"{position}\t{m}\t{h}\t{column[h]:.6f}\t{int(h == heads[m])}\n")
    return rows


@dataclass(frozen=True)
class MarginalsOutput:
    """What :meth:`dparse.Parser.parse_file` writes of a graph model's head probabilities at
    ``temperature`` (None: the model's fitted one, :data:`CALIBRATION_FILE`, else 1): with
    ``misc``, :func:`head_attributes` in each word's MISC (CoNLL-U); with ``table``, the TSV
    file of :func:`arc_rows`; ``threshold``: the least probability of an alternative head or
    a row."""

    misc: bool = True
    table: PathLike | None = None
    threshold: float = DEFAULT_THRESHOLD
    temperature: float | None = None


@dataclass(frozen=True)
class TemperatureFit:
    """A fitted temperature: ``temperature``, the gold trees' mean negative log-likelihood
    per sentence at T = 1 and at the fitted T, the ``sentences`` it was fitted on and those
    ``skipped`` (a gold tree the model's distribution cannot hold: non-projective for a
    projective decoder, several root words for a single-root one, or through a pruned arc)."""

    temperature: float
    nll_at_1: float
    nll: float
    sentences: int
    skipped: int


def write_calibration(directory: Path, fit: TemperatureFit) -> None:
    """Write ``fit`` into the model directory being saved, as :data:`CALIBRATION_FILE`:
    {"temperature": T, "dev_nll_at_1": ..., "dev_nll": ... (mean per sentence),
    "dev_sentences": ..., "dev_skipped": ...}."""
    write_text(directory / CALIBRATION_FILE, json.dumps(
        {"temperature": fit.temperature, "dev_nll_at_1": fit.nll_at_1, "dev_nll": fit.nll,
         "dev_sentences": fit.sentences, "dev_skipped": fit.skipped}, indent=1) + "\n")


def read_calibration(directory: Path) -> TemperatureFit | None:
    """The fit :func:`write_calibration` saved in a model directory; None without the file
    (a model trained without dev data, or before temperatures were fitted at training).
    DparseError naming the file when it is malformed."""
    path = directory / CALIBRATION_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fit = TemperatureFit(float(data["temperature"]), float(data["dev_nll_at_1"]),
                             float(data["dev_nll"]), int(data["dev_sentences"]),
                             int(data["dev_skipped"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise DparseError(f"{path}: not a temperature fit ({exc})") from exc
    if not (math.isfinite(fit.temperature) and fit.temperature > 0):
        raise DparseError(f"{path}: the temperature must be positive, got {fit.temperature}")
    return fit


def fit_temperature(pairs: Iterable[tuple[S, np.ndarray]],
                    log_partition: Callable[[S, float], float],
                    tree_score: Callable[[S, np.ndarray], float], projective: bool,
                    single_root: bool) -> TemperatureFit:
    """The T in :data:`T_RANGE` that maximizes the log-likelihood of the gold trees.

    pairs: (a sentence's part scores as the model gives them, its gold heads int [n+1]);
    log_partition(scores, T): log Z of the scores divided by T over the model's trees (a graph
    model's: :class:`dparse.graph.distribution.TreeDistribution`), whose kind projective and
    single_root name; tree_score(scores, heads): the gold tree's score at T = 1 (-inf through a
    disallowed part). Golden-section search on log T to :data:`LOG_T_TOLERANCE` (the negative
    log-likelihood is convex in 1/T). A T at which ``log_partition`` raises ArithmeticError
    (the matrix-tree determinant beyond double precision, at very low temperatures) counts as
    infinitely unlikely, so the search stays above it. InputError when no gold tree can be
    scored.
    """

    kept: list[tuple[S, float]] = []
    skipped = 0
    for scores, gold in pairs:
        gold = np.asarray(gold)
        score = tree_score(scores, gold) if len(gold) > 1 else -math.inf
        if not (math.isfinite(score)
                and tree_mask(gold, single_root=single_root, projective=projective)):
            skipped += 1
            continue
        kept.append((scores, score))
    if not kept:
        raise InputError("fit_temperature", None, "no gold tree that the model can score")

    def nll(log_t: float) -> float:
        t = math.exp(log_t)
        try:
            return sum(log_partition(scores, t) - score / t for scores, score in kept) / len(kept)
        except ArithmeticError:  # log Z beyond double precision (matrix-tree, very low T)
            return math.inf

    lo, hi = math.log(T_RANGE[0]), math.log(T_RANGE[1])
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = nll(a), nll(b)
    while hi - lo > LOG_T_TOLERANCE:
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = nll(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = nll(b)
    best = (lo + hi) / 2
    return TemperatureFit(math.exp(best), nll(0.0), nll(best), len(kept), skipped)


@dataclass(frozen=True)
class Calibration:
    """How well the chosen heads' probabilities predict that the head is right: ``ece`` (the
    expected calibration error, 0..1) over ``words`` words in :data:`BINS` equal-width bins;
    ``bins``: per bin (lower edge, upper edge, words, mean probability, accuracy), the
    reliability table (mean probability and accuracy None in an empty bin)."""

    ece: float | None
    words: int
    bins: list[tuple[float, float, int, float | None, float | None]]

    def as_dict(self) -> dict:
        return {"ece": self.ece, "words": self.words, "bins_equal_width": len(self.bins),
                "reliability": [{"from": lo, "to": hi, "words": n, "mean_probability": p,
                                 "accuracy": a} for lo, hi, n, p, a in self.bins]}

    def format(self) -> str:
        """The reliability table and the ECE as text."""
        ece = "n/a" if self.ece is None else f"{100 * self.ece:.2f}%"
        lines = [f"Calibration of {HEAD_PROB} ({self.words} words, {len(self.bins)} "
                 f"equal-width bins): ECE {ece}",
                 f"{'bin':<12}{'words':>8}{'mean prob':>11}{'accuracy':>10}{'gap':>8}"]
        for lo, hi, n, p, a in self.bins:
            cells = ("n/a", "n/a", "n/a") if p is None or a is None else (
                f"{p:.3f}", f"{a:.3f}", f"{a - p:+.3f}")
            lines.append(f"{lo:.1f}-{hi:.1f}{'':<5}{n:>8}{cells[0]:>11}{cells[1]:>10}"
                         f"{cells[2]:>8}")
        return "\n".join(lines)


def calibration(probabilities: Sequence[float], correct: Sequence[bool],
                bins: int = BINS) -> Calibration:
    """The calibration of ``probabilities`` (of the chosen heads, each in [0, 1]) against
    whether each head is ``correct``; a probability of exactly 1 falls in the last bin."""
    p = np.asarray(probabilities, dtype=np.float64)
    ok = np.asarray(correct, dtype=bool)
    index = np.minimum((p * bins).astype(int), bins - 1)
    table = []
    ece = 0.0
    for b in range(bins):
        inside = index == b
        n = int(inside.sum())
        mean = float(p[inside].mean()) if n else None
        acc = float(ok[inside].mean()) if n else None
        if n:
            ece += n * abs(acc - mean)
        table.append((b / bins, (b + 1) / bins, n, mean, acc))
    return Calibration(ece / len(p) if len(p) else None, len(p), table)


def head_probabilities(sentence: Sentence) -> list[float | None]:
    """The ``HeadProb`` of each word of ``sentence`` (None where its MISC has none), read
    from its CoNLL-U word lines."""
    found: list[float | None] = []
    for line in sentence.to_conll().splitlines():
        cols = line.split("\t")
        if len(cols) != 10 or not cols[0].isdigit():
            continue  # comments, multiword tokens, empty nodes
        value = None
        for attr in cols[9].split("|"):
            key, _, text = attr.partition("=")
            if key == HEAD_PROB:
                value = float(text)
        found.append(value)
    return found


def calibration_of_files(gold: PathLike, system: PathLike, punct: str = "include",
                         fmt: str | None = None, encoding: str = "utf-8") -> Calibration:
    """:func:`calibration` of the system file's ``HeadProb`` (``dparse parse --marginals``)
    against the gold file's heads, over the words the ``punct`` rule keeps that have a gold
    head. InputError naming the file and line of a sentence that does not match gold's or
    of a word without ``HeadProb``."""
    probabilities: list[float] = []
    correct: list[bool] = []
    golds = read_conll(gold, fmt=fmt, encoding=encoding, require_heads=False)
    systems = read_conll(system, fmt=fmt, encoding=encoding, require_heads=False)
    for g, s in zip_longest(golds, systems):
        if g is None or s is None:
            more = "more" if g is None else "fewer"
            raise InputError(str(system), None, f"has {more} sentences than {gold}")
        if len(g) != len(s):
            raise InputError(s.source, s.lineno, f"{len(s)} words where the gold sentence "
                             f"({g.source}:{g.lineno}) has {len(g)}")
        probs = head_probabilities(s)
        skip = excluded(g, punct)
        for m in range(1, len(g) + 1):
            if probs[m - 1] is None:
                raise InputError(s.source, s.line_of(m), f"word {m} has no {HEAD_PROB} in "
                                 "MISC: parse with dparse parse --marginals")
            if g.heads[m] >= 0 and not skip[m - 1]:
                probabilities.append(probs[m - 1])
                correct.append(bool(s.heads[m] == g.heads[m]))
    return calibration(probabilities, correct)
