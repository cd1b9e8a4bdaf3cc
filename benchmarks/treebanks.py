"""The treebank setups that the table scripts run on, and en_ewt configs adapted to each.

Shared by benchmarks/umst_tables.py and benchmarks/greedy_tables.py: each setup names its files
relative to the data root. UD treebanks with a train file train on it and select epochs on dev;
the small UD sets of the CoNLL 2006/2007 languages train on dev (no model selection), like the
500-sentence "minimally supervised" setup; the CoNLL 2007 subset has no dev file.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from dparse.batch.grid import Treebank  # one setup: files relative to the data root

CONFIGS = Path(__file__).resolve().parent.parent / "configs" / "en_ewt"


TREEBANKS = [
    Treebank("en_ewt", "en_ewt/train.conllu", "en_ewt/dev.conllu", "en_ewt/test.conllu"),
    Treebank("tr_imst", "tr_imst/train.conllu", "tr_imst/dev.conllu", "tr_imst/test.conllu"),
    Treebank("el_gdt", "el_gdt/train.conllu", "el_gdt/dev.conllu", "el_gdt/test.conllu"),
    Treebank("pt_bosque", "pt_bosque/train.conllu", "pt_bosque/dev.conllu",
             "pt_bosque/test.conllu"),
    *[Treebank(tb, f"{tb}/dev.conllu", None, f"{tb}/test.conllu")  # train on dev (small data)
      for tb in ("bg_btb", "da_ddt", "de_gsd", "ja_gsd", "nl_alpino", "sl_ssj", "sv_talbanken",
                 "zh_gsd")],
    Treebank("esp", "conll2007_nltk/esp.train", None, "conll2007_nltk/esp.test"),
    Treebank("eus", "conll2007_nltk/eus.train", None, "conll2007_nltk/eus.test", "iso-8859-1"),
]


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
