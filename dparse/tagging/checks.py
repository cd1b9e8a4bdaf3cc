"""The tagging family's config checks (its record: :mod:`dparse.tagging.family`): the ``tagging``
section of a tagger's config and the ``tagger`` section of a parser's."""

from __future__ import annotations

from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig


def check_tagging(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError naming the key unless the ``tagging`` and ``tagger`` values are usable."""
    tg = cfg.tagging
    if tg.dictionary_min_count < 1 or tg.ambiguity_min_count < 1:
        raise ConfigError(f"{source}: tagging.dictionary_min_count and "
                          "tagging.ambiguity_min_count must be at least 1")
    if tg.ambiguity_folds < 0 or tg.ambiguity_folds == 1:
        raise ConfigError(f"{source}: tagging.ambiguity_folds must be 0 (no jackknife) or >= 2")
    if tg.draft_folds < 0 or tg.draft_folds == 1:
        raise ConfigError(f"{source}: tagging.draft_folds must be 0 (no draft pass) or >= 2")
    t = cfg.tagger
    if t.config and t.model:
        raise ConfigError(f"{source}: tagger.config and tagger.model name two taggers: give one")
    if t.folds < 2:
        raise ConfigError(f"{source}: tagger.folds must be at least 2 (a jackknife)")
    if cfg.parser == "tagger" and (t.config or t.model):
        raise ConfigError(f"{source}: a tagger config (parser: tagger) carries no tagger "
                          "section")
    if cfg.parser == "tagger" and cfg.training.learner != "perceptron":
        raise ConfigError(f"{source}: the tagger trains with training.learner: perceptron")
