"""The neural parser family (``parser: neural``) as the registry sees it
(:mod:`dparse.families`): its record, trainer and loader. Torch and the network's modules are
imported inside the functions (the ``neural`` extra), so that the record, the config check and
every other family import without it.

Why a family of its own rather than a key of the graph family: the graph family's trainer is
the online learner of hashed features (``training.learner``, ``features.*``), a network trains
by gradient descent from its own section; what both share is the seam where a model's part
scores meet the decoders, :meth:`dparse.graph.model.GraphModel.score_parts`. So a neural
model is a ``GraphModel`` and loads as a :class:`dparse.graph.family.GraphParser`: every
graph decoder (a second-order network's only those of sibling and grandparent parts), k-best
lists (``dparse parse --kbest``), marginals and constraints
work on it as on a linear model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dparse.errors import DparseError
from dparse.families import ParserFamily
from dparse.graph.family import GraphParser
from dparse.neural import require_torch
from dparse.neural.checks import check_neural, order_mismatch
from dparse.neural.sections import NeuralConfig

if TYPE_CHECKING:
    from dparse.batch.engines import WorkerOptions
    from dparse.epochs import EpochReport, TrainResult
    from dparse.sections import ExperimentConfig


def _train(cfg: ExperimentConfig, progress: bool,
           on_epoch: Callable[[EpochReport], None] | None,
           workers: WorkerOptions | None = None) -> TrainResult:
    """Train on this process (``workers`` is always None: the family does not train on
    workers; a tagging pipeline passes it on)."""
    require_torch()
    from dparse.neural.training import train

    return train(cfg, progress=progress, on_epoch=on_epoch)


def _load(directory: Path, cfg: ExperimentConfig, name: str) -> GraphParser:
    require_torch()
    import torch

    from dparse.decoders import configured_decoder
    from dparse.modeldir import check_model_dir
    from dparse.neural.model import NeuralModel

    torch.set_num_threads(cfg.neural.threads)
    check_model_dir(directory)
    model = NeuralModel.read_files(directory, cfg.neural.device)
    problem = order_mismatch(model.settings.order, name)
    if problem:
        raise DparseError(f"{directory}: {problem}")
    decoder = configured_decoder(name, cfg.decoder.options if name == cfg.decoder.name else None)
    return GraphParser(model, decoder, cfg.decoder.single_root)


NEURAL = ParserFamily(
    name="neural",
    summary="neural (BiLSTM-biaffine) arc scorers under the graph decoders",
    train=_train,
    load=_load,
    sections={"neural": NeuralConfig},
    check=check_neural,
    parse_time_keys=("decoder.name", "decoder.single_root", "decoder.options",
                     "neural.threads", "neural.device"),
    ensemble_keys=("decoder.single_root", "ensemble"),
    trains_on_workers=False,
    decoders=("dparse.graph.decoders", "dparse.graph.dd2"),
    scores_parts=True,
)
FAMILIES = (NEURAL,)
