"""The undirected MST parser family (``parser: umst``) as the registry sees it
(:mod:`dparse.families`): its record, trainer, loader and loaded parser. The model modules
are imported inside the functions, so that the record is cheap to import."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dparse.errors import ConfigError
from dparse.families import ParserFamily
from dparse.undirected.checks import check_umst
from dparse.undirected.sections import UmstConfig

if TYPE_CHECKING:
    from dparse.batch.engines import WorkerOptions
    from dparse.conll import Sentence
    from dparse.constraints import Constraints
    from dparse.epochs import EpochReport, TrainResult
    from dparse.hypergraph.forest import OnForest
    from dparse.sections import ExperimentConfig
    from dparse.timer import ParseTimer
    from dparse.undirected.parser import UndirectedParser


class UmstParser:
    """An undirected model with its LEP moves and directed model
    (:class:`dparse.parsers.LoadedParser`); it decodes with its own MST algorithm only."""

    decoder_name = "umst"
    builds_forests = False
    projective = False

    def __init__(self, parser: UndirectedParser) -> None:
        self.parser = parser

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """The sentences parsed by the undirected MST, oriented and labeled."""
        return self.parser.parse(sentences, timer)

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints]],
                          timer: ParseTimer) -> Iterator[Sentence]:
        """Each sentence parsed under its constraints: the best spanning tree whose
        orientation from the root keeps them, then LEP over allowed arcs only
        (:meth:`dparse.undirected.parser.UndirectedParser.parse_constrained`)."""
        return self.parser.parse_constrained(items, timer)


def _train(cfg: ExperimentConfig, progress: bool,
           on_epoch: Callable[[EpochReport], None] | None,
           workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.undirected.parser import train_undirected

    return train_undirected(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load(directory: Path, cfg: ExperimentConfig, name: str) -> UmstParser:
    from dparse.undirected.parser import load_parser

    if name != cfg.decoder.name:
        raise ConfigError(f"{directory}: an undirected MST model (parser: umst) decodes with its "
                          f"own {cfg.decoder.name!r} only; --decoder {name} does not apply")
    return UmstParser(load_parser(directory, cfg))


UMST = ParserFamily(
    name="umst",
    summary="undirected MST parsers",
    train=_train,
    load=_load,
    sections={"umst": UmstConfig},
    check=check_umst,
    parse_time_keys=("decoder.single_root", "umst.lep_steps", "umst.directed_model",
                     "umst.method"),
    decoders=("dparse.undirected.decoders",),
)
FAMILIES = (UMST,)
