"""The third-order model's settings (the config's features section) and the decoders it can use;
checked when a config is loaded (:func:`check_third_order`, through :mod:`dparse.graph.checks`),
used by :mod:`dparse.graph.thirdorder`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dparse.errors import ConfigError, DparseError
from dparse.graph.o3features import EXACT_GROUPS, GROUPS
from dparse.sections import ExperimentConfig

DECODERS = ("cube", "eisner3-outermost")


@dataclass(frozen=True)
class ThirdOrderSettings:
    """What the feature model uses (features section of the config)."""

    label_bits: int
    ho_bits: int
    groups: tuple[str, ...]
    label_tuples: bool
    labels_per_arc: int
    first_order_labels: bool = False

    @classmethod
    def from_config(cls, cfg: ExperimentConfig) -> ThirdOrderSettings:
        f = cfg.features
        return cls(f.label_bits, f.ho_bits, parse_groups(f.groups), f.label_tuples,
                   f.labels_per_arc, f.first_order_labels)


def parse_groups(text: str) -> tuple[str, ...]:
    """The groups of a ``features.groups`` string ("none" or comma-separated names from
    GROUPS); ValueError naming a bad one."""
    if text.strip() == "none":
        return ()
    names = tuple(name.strip() for name in text.split(","))
    bad = [name for name in names if name not in GROUPS]
    if bad or len(set(names)) < len(names):
        raise ValueError(f"features.groups {text!r}: must be none or a comma-separated subset "
                         f"of {', '.join(GROUPS)}")
    return names


def check_decoder_fits(settings: ThirdOrderSettings, name: str) -> None:
    """DparseError unless the third-order model can decode with ``name`` under ``settings``."""
    if name not in DECODERS:
        raise DparseError(f"a third-order model (features.order: 3) decodes with "
                          f"{' or '.join(DECODERS)}, not {name!r}")
    if name == "eisner3-outermost":
        extra = sorted(set(settings.groups) - set(EXACT_GROUPS))
        if extra or settings.label_tuples:
            raise DparseError(
                f"eisner3-outermost scores only the groups {', '.join(EXACT_GROUPS)} without "
                f"label tuples; this model has groups {', '.join(settings.groups) or 'none'}"
                f"{' and label tuples' if settings.label_tuples else ''} (use cube)")


def check_third_order(cfg: ExperimentConfig, source: str) -> None:
    """The third-order keys of a config: groups, sizes, and decoders that can score the model;
    ConfigError naming the key."""
    f = cfg.features
    if f.labels_per_arc < 1 or not 10 <= f.ho_bits <= 30:
        raise ConfigError(f"{source}: features.labels_per_arc must be >= 1 and ho_bits in 10..30")
    try:
        settings = ThirdOrderSettings.from_config(cfg)
        for key, name in (("decoder.name", cfg.decoder.name),
                          ("training.decoder", cfg.training.decoder)):
            if name is not None:
                try:
                    check_decoder_fits(settings, name)
                except DparseError as exc:
                    raise ValueError(f"{key}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
