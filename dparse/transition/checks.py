"""The shift-reduce parser's config checks (its record: :mod:`dparse.transition.family`): the
``shiftreduce`` section."""

from __future__ import annotations

from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig


def check_shiftreduce(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError naming the key unless the ``shiftreduce`` section's values are known."""
    sr = cfg.shiftreduce
    if sr.system not in ("nonspurious", "spurious") or sr.update not in ("early",
                                                                          "max-violation"):
        raise ConfigError(f"{source}: shiftreduce.system must be nonspurious or spurious, "
                          "shiftreduce.update early or max-violation")
    if sr.beam < 1:
        raise ConfigError(f"{source}: shiftreduce.beam must be at least 1")
    if sr.upos_pair and cfg.features.tag == "upos":
        raise ConfigError(f"{source}: shiftreduce.upos_pair pairs XPOS with UPOS: it needs "
                          "features.tag xpos (or auto), not upos")
