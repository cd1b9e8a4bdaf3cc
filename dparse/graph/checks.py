"""The graph family's config check (its record: :mod:`dparse.graph.family`): the ``pruner``
section of second- and third-order models, the ``ensemble`` section, the third-order keys of
``features`` with the decoders that can score such a model
(:mod:`dparse.graph.thirdorder_settings`), and the registered decoders a config names."""

from __future__ import annotations

from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig

PRUNER_OBJECTIVES = ("perceptron", "local", "crf")


def check_graph(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError naming the key unless the graph keys of ``cfg`` are in range and its
    decoders registered: ``ensemble.decoder`` in every config, ``decoder.name`` and
    ``training.decoder`` (which only a graph parser reads) in a graph parser's."""
    if cfg.pruner.first_order and cfg.features.order != 1:
        raise ConfigError(f"{source}: pruner.first_order is for first-order models (features."
                          "order: 1); second- and third-order models always prune")
    e = cfg.ensemble
    if not (0.0 <= e.gamma1 < float("inf") and 0.0 <= e.gamma2 < float("inf")):
        raise ConfigError(f"{source}: ensemble.gamma1 and ensemble.gamma2 must be finite and >= 0")
    if cfg.training.decoder is not None and cfg.parser != "graph":
        raise ConfigError(f"{source}: training.decoder is for graph parsers only "
                          f"(this config's parser is {cfg.parser})")
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
    _check_decoders(cfg, source)


def _check_decoders(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError unless each decoder the config names is registered and takes its options."""
    from dparse.decoders import check_decoder  # loads the decoders' modules: only to check

    e = cfg.ensemble
    decoders = [("ensemble.decoder", e.decoder, "ensemble.options", e.options)]
    if cfg.parser == "graph":
        decoders.append(("decoder.name", cfg.decoder.name, "decoder.options", cfg.decoder.options))
    if cfg.training.decoder is not None:
        decoders.append(("training.decoder", cfg.training.decoder, "training.decoder_options",
                         cfg.training.decoder_options))
    for key, name, options_key, options in decoders:
        check_decoder(source, key, name, options_key, options)
