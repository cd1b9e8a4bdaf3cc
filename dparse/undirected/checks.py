"""The undirected MST family's config checks (its record: :mod:`dparse.undirected.family`): the
``umst`` section."""

from __future__ import annotations

from dparse._ext.arcfeatures import EDGE_GROUPS
from dparse.errors import ConfigError
from dparse.sections import ExperimentConfig


def check_umst(cfg: ExperimentConfig, source: str) -> None:
    """ConfigError naming the key unless the ``umst`` section's values are known and in range."""
    u = cfg.umst
    if u.method not in ("kkt", "boruvka") or u.prune not in ("length-dictionary", "none"):
        raise ConfigError(f"{source}: umst.method must be kkt or boruvka, umst.prune "
                          "length-dictionary or none")
    if u.lep_steps < 0 or u.prune_min_count < 1 or not 0.0 < u.prune_quantile <= 1.0:
        raise ConfigError(f"{source}: umst.lep_steps >= 0, prune_min_count >= 1, "
                          "prune_quantile in (0, 1]")
    if u.prune_column not in ("auto", "xpos", "upos"):
        raise ConfigError(f"{source}: umst.prune_column must be auto, xpos or upos")
    if u.edge_features not in ("left-right", "both"):
        raise ConfigError(f"{source}: umst.edge_features must be left-right or both")
    names = u.edge_template_names()
    if any(n not in EDGE_GROUPS for n in names) or len(set(names)) < len(names):
        raise ConfigError(f"{source}: umst.edge_templates: {u.edge_templates!r} must be none or "
                          f"a comma-separated subset of {', '.join(EDGE_GROUPS)}")
