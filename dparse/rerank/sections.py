"""The forest reranker's config section ``rerank``. Data only, as :mod:`dparse.sections`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RerankConfig:
    """Forest reranking (``parser: rerank``, dparse.rerank; Hayashi, Kondo and Matsumoto 2013,
    Sections 5-6): ``first_stage`` names the shift-reduce config (a path relative to this
    config's file) whose packed forests are reranked; the training forests come from ``folds``
    jackknifed first-stage models (gold state forced into the beam), kept in ``work`` (null:
    the model directory's path + ``.work``; reused by later runs). ``features`` is ``local``
    (Viterbi over the forest) or ``nonlocal`` (cube pruning, ``k`` items per vertex when
    parsing, ``train_k`` when training); ``guide`` adds the first-stage 1-best tree's arcs as
    features; ``beta`` scales the first-stage score at parse time (null: tuned on dev by a line
    search over ``beta_grid``); ``labels`` scores each arc under its best label too (label rows
    of 2**features.label_bits, the first stage's label set). Parse-time keys of a trained model:
    ``k``, ``beta`` (null: the tuned one) and ``first_stage_beam`` (0: the first stage's own)."""

    first_stage: str = ""
    folds: int = 20
    work: str | None = None
    features: str = "local"
    k: int = 3
    train_k: int = 5
    guide: bool = True
    labels: bool = False
    beta: float | None = None
    beta_grid: str = "0:4:0.1"
    first_stage_beam: int = 0
