"""The forest reranker family (``parser: rerank``) as the registry sees it
(:mod:`dparse.families`): its record, trainer, loader, loaded parser and ``dparse train
--fold``. The model modules are imported inside the functions, so that the record is cheap
to import."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dparse.errors import ConfigError
from dparse.families import ParserFamily
from dparse.rerank.checks import check_rerank
from dparse.rerank.sections import RerankConfig

if TYPE_CHECKING:
    from dparse.batch.engines import WorkerOptions
    from dparse.conll import Sentence
    from dparse.constraints import Constraints
    from dparse.epochs import EpochReport, TrainResult
    from dparse.hypergraph.forest import OnForest
    from dparse.rerank.model import RerankModel
    from dparse.sections import ExperimentConfig
    from dparse.timer import ParseTimer


class RerankParser:
    """A reranker with its first stage (:class:`dparse.parsers.LoadedParser`): its own two
    stages, the first building the packed forests that the second reranks."""

    builds_forests = True
    projective = True

    def __init__(self, model: RerankModel, decoder_name: str) -> None:
        self.model = model
        self.decoder_name = decoder_name

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """The sentences parsed by both stages (``on_forest``: each first-stage forest)."""
        return self.model.parse(sentences, timer, on_forest)

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints]],
                          timer: ParseTimer, on_forest: OnForest | None = None
                          ) -> Iterator[Sentence]:
        """Each sentence parsed under its constraints: the first stage's constrained beam
        search builds a forest whose every tree keeps them, which the reranker searches
        (:meth:`dparse.rerank.model.RerankModel.parse_constrained`)."""
        return self.model.parse_constrained(items, timer, on_forest)


def _train(cfg: ExperimentConfig, progress: bool,
           on_epoch: Callable[[EpochReport], None] | None,
           workers: WorkerOptions | None = None, jobs: int = 1) -> TrainResult:
    from dparse.rerank.model import train

    return train(cfg, progress=progress, on_epoch=on_epoch, jobs=jobs, workers=workers)


def _load(directory: Path, cfg: ExperimentConfig, name: str) -> RerankParser:
    from dparse.rerank.model import DECODER_NAME, RerankModel

    if name not in (DECODER_NAME, cfg.decoder.name):
        raise ConfigError(f"{directory}: a forest reranker (parser: rerank) decodes with its "
                          f"own two stages only; --decoder {name} does not apply")
    model = RerankModel.load(directory)
    rc = cfg.rerank  # the parse-time keys (dparse.rerank.sections.RerankConfig)
    model.k = rc.k
    model.beta = model.beta if rc.beta is None else rc.beta
    model.first.beam = rc.first_stage_beam or model.first.beam
    return RerankParser(model, DECODER_NAME)


def _make_fold(cfg: ExperimentConfig, fold: int, progress: bool) -> str:
    from dparse.rerank.model import make_fold

    return make_fold(cfg, fold, progress)


RERANK = ParserFamily(
    name="rerank",
    summary="forest rerankers",
    train=_train,
    load=_load,
    sections={"rerank": RerankConfig},
    check=check_rerank,
    parse_time_keys=("rerank.k", "rerank.beta", "rerank.first_stage_beam"),
    takes_jobs=True,
    work_key="rerank.work",
    make_fold=_make_fold,
    config_references=("rerank.first_stage",),
)
FAMILIES = (RERANK,)
