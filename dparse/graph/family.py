"""The graph-based parser family (``parser: graph``) as the registry sees it
(:mod:`dparse.families`): its record, trainer, loader and loaded parser. The model modules
are imported inside the functions, so that the record is cheap to import."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dparse.errors import ConfigError
from dparse.families import ParserFamily
from dparse.graph.checks import check_graph
from dparse.graph.sections import EnsembleConfig, PrunerConfig

if TYPE_CHECKING:
    import numpy as np

    from dparse.batch.engines import WorkerOptions
    from dparse.calibration import TemperatureFit
    from dparse.conll import Sentence
    from dparse.constraints import Constraints
    from dparse.decoders import Decoder
    from dparse.epochs import EpochReport, TrainResult
    from dparse.graph.model import GraphModel
    from dparse.hypergraph.forest import OnForest
    from dparse.sections import ExperimentConfig
    from dparse.timer import ParseTimer


class GraphParser:
    """A graph model of any order with its decoder (:class:`dparse.parsers.LoadedParser`)."""

    builds_forests = False

    def __init__(self, model: GraphModel, decoder: Decoder, single_root: bool) -> None:
        self.model = model
        self.decoder = decoder
        self.decoder_name = decoder.name
        self.single_root = single_root
        self.projective = decoder.projective

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """The sentences parsed by the decoder over the model's part scores."""
        return self.model.parse(sentences, self.decoder, self.single_root, timer)

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints]],
                          timer: ParseTimer) -> Iterator[Sentence]:
        """Each sentence parsed under its constraints (dparse.graph.constrained)."""
        from dparse.graph.constrained import parse_constrained

        return parse_constrained(self.model, items, self.decoder, self.single_root, timer)

    @property
    def fitted_temperature(self) -> float | None:
        """The temperature fitted on dev at training (the model's calibration.json); None
        for a model without one."""
        fit = self.model.calibration
        return None if fit is None else fit.temperature

    def parse_marginals(self, sentences: Iterable[Sentence], timer: ParseTimer,
                        temperature: float | None = None
                        ) -> Iterator[tuple[Sentence, np.ndarray]]:
        """The sentences parsed as :meth:`parse` does, each with its head probabilities
        float64 [n+1, n+1] at ``temperature`` (None: :attr:`fitted_temperature`, else 1)
        (:meth:`dparse.graph.model.GraphModel.parse_marginals`)."""
        self._check_marginals()
        if temperature is None:
            temperature = self.fitted_temperature or 1.0
        return self.model.parse_marginals(sentences, self.decoder, self.single_root, timer,
                                          temperature)

    def fit_temperature(self, sentences: Iterable[Sentence]) -> TemperatureFit:
        """The temperature under which the sentences' gold trees are most likely, in the
        distribution whose marginals :meth:`parse_marginals` gives
        (:meth:`dparse.graph.model.GraphModel.fit_temperature`)."""
        self._check_marginals()
        return self.model.fit_temperature(sentences, self.decoder, self.single_root)

    def _check_marginals(self) -> None:
        if not self.model.gives_marginals:
            raise ConfigError("arc marginals need a first- or second-order graph model, not "
                              f"a {type(self.model).__name__}")


def _train(cfg: ExperimentConfig, progress: bool,
           on_epoch: Callable[[EpochReport], None] | None,
           workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.graph.training import train

    return train(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load(directory: Path, cfg: ExperimentConfig, name: str) -> GraphParser:
    from dparse.decoders import configured_decoder
    from dparse.graph.load import load_model

    model = load_model(directory)
    # The config's decoder options go with the config's decoder, not with an override.
    decoder = configured_decoder(name, cfg.decoder.options if name == cfg.decoder.name else None)
    return GraphParser(model, decoder, cfg.decoder.single_root)


GRAPH = ParserFamily(
    name="graph",
    summary="graph-based parsers of first, second and third order",
    train=_train,
    load=_load,
    sections={"pruner": PrunerConfig, "ensemble": EnsembleConfig},
    check=check_graph,
    parse_time_keys=("decoder.name", "decoder.single_root", "decoder.options"),
    ensemble_keys=("decoder.single_root", "ensemble"),
    decoders=("dparse.graph.decoders", "dparse.graph.dd2"),
    scores_parts=True,
)
FAMILIES = (GRAPH,)
