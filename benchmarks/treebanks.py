"""The treebank setups that the table scripts run on, and en_ewt configs adapted to each.

Shared by the table scripts; the setups are configs/grids/treebanks/tables.yaml (which the grids
of the tables' models list too), each naming its files relative to the data root.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from dparse.batch.grid import Treebank, load_treebanks  # Treebank: one setup (files, encoding)

CONFIGS = Path(__file__).resolve().parent.parent / "configs" / "en_ewt"
TREEBANKS = load_treebanks(CONFIGS.parent / "grids" / "treebanks" / "tables.yaml")


def config_for(name: str, tb: Treebank, epochs: int | None) -> dict:
    """The en_ewt config ``name`` (configs/en_ewt/NAME.yaml) with the treebank's files, the
    name ``<treebank>-<name>`` and ``decoder.single_root: auto`` (one root word where every
    training tree has one: all but the CoNLL 2007 Basque data), as a raw mapping; ``epochs``
    overrides the training epochs."""
    raw = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    raw["name"] = f"{tb.name}-{name}"
    raw["data"].update(train=tb.train, dev=tb.dev, test=tb.test, encoding=tb.encoding)
    raw.setdefault("decoder", {})["single_root"] = "auto"
    if epochs is not None:
        raw["training"]["epochs"] = epochs
    return raw


def missing_files(tb: Treebank, data_root: str | Path) -> list[str]:
    """The files of ``tb`` (train, dev, test; relative to ``data_root``) not found there."""
    return [f for f in (tb.train, tb.dev, tb.test) if f and not (Path(data_root) / f).is_file()]
