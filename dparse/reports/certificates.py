"""Search-error and certificate reports of approximate decoders, as tables and plots.

- Search errors (:mod:`dparse.search_errors`: sentences whose gold tree outscores the decoder's
  tree under the model) of several decoders side by side, by sentence-length bin:
  :func:`search_error_table` (Markdown) and :func:`plot_search_errors`.
- Certificates of the dual-decomposition decoder ``dd2``: a call is certified when the duality
  gap closed, i.e. its tree is a best tree. :func:`certify` counts, per sentence-length bin, the
  sentences certified and the subgradient iterations, over any stream of scored sentences;
  :func:`model_certificates` runs it on a gold file under a trained second-order model;
  :func:`certificate_table` and :func:`plot_certificates` report one or several runs.

Sentence-length bins are those of :func:`dparse.search_errors.bin_labels` (upper edges, default
``DEFAULT_BINS``), so the two reports line up.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dparse.conll import read_conll
from dparse.decoders import get_decoder
from dparse.metrics import format_score, percent
from dparse.search_errors import DEFAULT_BINS, SearchErrorReport, bin_labels, load_search_setup

__all__ = [
    "CertificateReport",
    "certificate_table",
    "certify",
    "model_certificates",
    "plot_certificates",
    "plot_search_errors",
    "search_error_table",
]


@dataclass
class CertificateReport:
    """Per sentence-length bin (label -> counts): ``sentences``, ``certified`` and
    ``iterations`` (summed over the bin's calls) of one decoder setting (``name``)."""

    name: str
    bin_edges: tuple[int, ...] = DEFAULT_BINS
    bins: dict[str, dict[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.bins:
            self.bins = {b: {"sentences": 0, "certified": 0, "iterations": 0}
                         for b in bin_labels(self.bin_edges)}

    def add(self, length: int, certified: bool, iterations: int) -> None:
        """Counts one call on a sentence of ``length`` words."""
        row = self.bins[list(self.bins)[int(np.searchsorted(self.bin_edges, length))]]
        row["sentences"] += 1
        row["certified"] += bool(certified)
        row["iterations"] += int(iterations)

    @property
    def total(self) -> dict[str, int]:
        """The counts summed over the bins."""
        return {k: sum(row[k] for row in self.bins.values())
                for k in ("sentences", "certified", "iterations")}

    def shares(self) -> list[float | None]:
        """Percent certified per bin (None for an empty bin)."""
        return [percent(r["certified"], r["sentences"]) for r in self.bins.values()]

    def as_dict(self) -> dict:
        rows = {b: {**r, "certified_percent": percent(r["certified"], r["sentences"])}
                for b, r in self.bins.items()}
        total = self.total
        return {"name": self.name, "bins": rows, **total,
                "certified_percent": percent(total["certified"], total["sentences"])}


def certify(
    instances: Iterable[tuple[np.ndarray, Mapping[str, np.ndarray]]],
    name: str = "dd2",
    options: Mapping[str, object] | None = None,
    single_root: bool = True,
    bins: Sequence[int] = DEFAULT_BINS,
) -> CertificateReport:
    """Decode every (arc [n+1, n+1], parts {"sib", "grand": [n+1]^3}) of ``instances`` with the
    dd2 decoder under ``options`` (max_iter, step, tol) and count its certificates by n."""
    decoder = get_decoder("dd2")
    report = CertificateReport(name, tuple(bins))
    for arc, parts in instances:
        result = decoder.solve(arc, single_root=single_root, **parts, **dict(options or {}))
        report.add(arc.shape[0] - 1, result.certified, result.iterations)
    return report


def model_certificates(
    model_dir: str | os.PathLike,
    gold: str | os.PathLike,
    overrides: Sequence[str] = (),
    bins: Sequence[int] = DEFAULT_BINS,
    fmt: str | None = None,
    encoding: str = "utf-8",
) -> CertificateReport:
    """dd2 certificates on the sentences of ``gold`` scored by the second-order model in
    ``model_dir`` (the decoder options from its config and ``overrides``, as
    :func:`dparse.search_errors.load_search_setup`; the model's own decoder need not be dd2)."""
    model, _, options, single_root = load_search_setup(model_dir, "dd2", overrides)

    def scored() -> Iterable[tuple[np.ndarray, dict[str, np.ndarray]]]:
        for sent in read_conll(gold, fmt=fmt, encoding=encoding):
            arc, _, parts = model.score_parts(model.vocab.encode(sent), None, False)
            yield arc, {k: v for k, v in parts.items() if k in ("sib", "grand")}

    name = f"dd2 ({Path(model_dir).name})"
    return certify(scored(), name, options, single_root, bins)


def search_error_table(reports: Mapping[str, SearchErrorReport]) -> str:
    """Markdown: per sentence-length bin, each decoder's search errors (count and percent of
    the bin's sentences) and unreachable gold trees that outscore the prediction."""
    names = list(reports)
    first = next(iter(reports.values()))
    lines = ["| length | sentences | " + " | ".join(
        f"{n} search errors | {n} gold higher, unreachable" for n in names) + " |",
        "|---" * (2 + 2 * len(names)) + "|"]
    for label in [*first.bins, "total"]:
        cells = []
        for name in names:
            c = reports[name].total if label == "total" else reports[name].bins[label]
            share = format_score(percent(c.search_errors, c.sentences), 0, unit="%")
            cells += [f"{c.search_errors} ({share})", str(c.unreachable_higher)]
        count = first.total.sentences if label == "total" else first.bins[label].sentences
        lines.append(f"| {label} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_search_errors(reports: Mapping[str, SearchErrorReport], stem: str | os.PathLike
                       ) -> list[Path]:
    """Bars of each decoder's search-error share per sentence-length bin (PNG and SVG)."""
    from dparse.reports.plots import plot_shares

    first = next(iter(reports.values()))
    series = {name: [percent(r.bins[b].search_errors, r.bins[b].sentences) for b in first.bins]
              for name, r in reports.items()}
    return plot_shares(list(first.bins), series, stem, "sentences with gold scoring higher (%)",
                       "Search errors by sentence length")


def certificate_table(reports: Sequence[CertificateReport]) -> str:
    """Markdown: per sentence-length bin, each run's certified share and mean iterations."""
    first = reports[0]
    lines = ["| length | sentences | " + " | ".join(
        f"{r.name} certified | {r.name} mean iterations" for r in reports) + " |",
        "|---" * (2 + 2 * len(reports)) + "|"]
    for label in [*first.bins, "total"]:
        cells = []
        for r in reports:
            c = r.total if label == "total" else r.bins[label]
            cells.append(format_score(percent(c["certified"], c["sentences"]), 0, unit="%"))
            cells.append(f"{c['iterations'] / c['sentences']:.1f}" if c["sentences"] else "n/a")
        count = (first.total if label == "total" else first.bins[label])["sentences"]
        lines.append(f"| {label} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_certificates(reports: Sequence[CertificateReport], stem: str | os.PathLike
                      ) -> list[Path]:
    """Bars of each run's certified share per sentence-length bin (PNG and SVG)."""
    from dparse.reports.plots import plot_shares

    return plot_shares(list(reports[0].bins), {r.name: r.shares() for r in reports}, stem,
                       "sentences certified optimal (%)", "dd2 certificates by sentence length")
