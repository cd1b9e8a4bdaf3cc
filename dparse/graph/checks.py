"""The graph family's config checks (registered in :mod:`dparse.families`): the ``pruner``
section of second- and third-order models, and the third-order keys of ``features`` with the
decoders that can score such a model (:mod:`dparse.graph.thirdorder_settings`)."""

from __future__ import annotations

from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig

PRUNER_OBJECTIVES = ("perceptron", "local", "crf")


def check_graph(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError naming the key unless the graph keys of ``cfg`` are in range."""
    if cfg.features.order == 3:
        # here, not at the top: it loads the third-order extensions, which a first- or
        # second-order parse never needs (tests/test_model_files.py)
        from dparse.graph.thirdorder_settings import check_third_order

        check_third_order(cfg, source)
    p = cfg.pruner
    if p.top_k < 1 or not 0.0 <= p.threshold < 1.0:
        raise ConfigError(f"{source}: pruner.top_k must be >= 1 and threshold in [0, 1)")
    if p.train_folds < 0 or p.train_folds == 1:
        raise ConfigError(f"{source}: pruner.train_folds must be 0 (no jackknife) or >= 2")
    if p.objective not in PRUNER_OBJECTIVES or p.eta <= 0.0:
        raise ConfigError(f"{source}: pruner.objective must be one of "
                          f"{', '.join(PRUNER_OBJECTIVES)} and pruner.eta positive")
    if cfg.features.order == 3 and cfg.features.first_order_labels and p.objective != "perceptron":
        raise ConfigError(f"{source}: features.first_order_labels needs a labeled pruner "
                          "(pruner.objective: perceptron)")
