"""The tokenizing family's config check (its record: :mod:`dparse.tokenizing.family`)."""

from __future__ import annotations

from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig


def check_tokenizing(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError naming the key unless the ``tokenizing`` and ``tokenizer`` values are
    usable."""
    tk = cfg.tokenizing
    if not 10 <= tk.bits <= 26:
        raise ConfigError(f"{source}: tokenizing.bits must be 10 to 26 (2 ** bits buckets)")
    if tk.vocab_folds < 2:
        raise ConfigError(f"{source}: tokenizing.vocab_folds must be at least 2 (a jackknife)")
    if tk.expander_min_count < 1:
        raise ConfigError(f"{source}: tokenizing.expander_min_count must be at least 1")
    if cfg.parser == "tokenizer" and cfg.tokenizer.model:
        raise ConfigError(f"{source}: a tokenizer config (parser: tokenizer) carries no "
                          "tokenizer section")
    if cfg.parser == "tokenizer" and cfg.training.learner != "perceptron":
        raise ConfigError(f"{source}: the tokenizer trains with training.learner: perceptron")
