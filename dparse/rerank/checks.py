"""The forest reranker's config checks (its record: :mod:`dparse.rerank.family`): the ``rerank``
section of a ``parser: rerank`` config, and its grid of betas (:func:`beta_grid`)."""

from __future__ import annotations

from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig


def check_rerank(cfg: ExperimentConfig, source: str) -> None:
    """The rerank keys of a reranker's config (the first-stage config itself is read when
    training); ConfigError naming the key."""
    if cfg.parser != "rerank":
        return
    r = cfg.rerank
    if not r.first_stage:
        raise ConfigError(f"{source}: rerank.first_stage must name the shift-reduce config")
    if r.folds < 2 or r.k < 1 or r.train_k < 1 or r.first_stage_beam < 0:
        raise ConfigError(f"{source}: rerank.folds must be >= 2, rerank.k and train_k >= 1, "
                          "rerank.first_stage_beam >= 0")
    if r.features not in ("local", "nonlocal"):
        raise ConfigError(f"{source}: rerank.features must be local or nonlocal")
    if r.beta is not None and not 0.0 <= r.beta < float("inf"):
        raise ConfigError(f"{source}: rerank.beta must be null or a finite number >= 0")
    try:
        beta_grid(r.beta_grid)
    except ValueError as exc:
        raise ConfigError(f"{source}: rerank.beta_grid: {exc}") from None


def beta_grid(spec: str) -> list[float]:
    """The betas of ``start:stop:step`` (stop included), e.g. ``0:4:0.1``."""
    parts = spec.split(":")
    try:
        start, stop, step = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"{spec!r} is not start:stop:step") from None
    if not (0.0 <= start <= stop < float("inf") and step > 0.0):
        raise ValueError(f"{spec!r} needs 0 <= start <= stop and step > 0")
    count = int(round((stop - start) / step)) + 1
    if count > 10000:
        raise ValueError(f"{spec!r} has more than 10000 values")
    return [round(start + i * step, 10) for i in range(count)]
