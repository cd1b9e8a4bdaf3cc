"""The neural grid of make ud-table SCORER=neural (issue 48, item 5): the grid and its config,
and the grid file itself run end to end (``dparse grid -j 1``) on a tiny slice of da_ddt with a
tiny network: the cell parses the test file from its words alone, records UAS / LAS and its
tag heads' accuracies, and gives the same trees as from the test file with its gold tags."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import DATA
from paths import REPO

from dparse.batch.cells import MODEL_DIR, PARSED_FILE, reads_words_only
from dparse.batch.grid import load_grid
from dparse.config import load_config
from dparse.conll import read_conll, write_conll
from dparse.metrics import evaluate
from dparse.tagscores import TAG_SCORES, score_tags

GRIDS = REPO / "configs" / "grids"
# a tiny network for one epoch; a fixed root rule, since the grid resolves every treebank's
# cell before --only selects one, and single_root auto would read their training files
TINY = ["training.epochs=1", "neural.word_dim=16", "neural.char_dim=8",
        "neural.char_filters=16", "neural.lstm_dim=24", "neural.lstm_layers=1",
        "neural.arc_dim=32", "neural.label_dim=16", "decoder.single_root=true"]


def test_neural_grid_runs_the_neural_config_on_the_ud_grids_treebanks(tmp_path: Path) -> None:
    gold, neural = load_grid(GRIDS / "ud.yaml"), load_grid(GRIDS / "ud-neural.yaml")
    assert neural.treebanks == gold.treebanks and len(gold.treebanks) == 14
    assert yaml.safe_load((GRIDS / "ud-neural.yaml").read_text())["treebanks"] == \
        "treebanks/ud.yaml"  # one list file with the ud and ud-tagged grids
    assert [c.stem for c in neural.configs] == ["neural-o1"]
    assert neural.punct == "include" and neural.cluster["workers"] == 1
    # (a fixed root rule: single_root auto would read the training files)
    cells = neural.cells(tmp_path, str(tmp_path), ("decoder.single_root=true",))
    assert [c.config["name"] for c in cells] == [f"{tb.name}-neural-o1"
                                                 for tb in gold.treebanks if tb]
    assert all(c.config["neural"]["threads"] == 1 for c in cells)


def test_ud_neural_config_is_the_en_ewt_joint_one_for_any_treebank() -> None:
    """configs/ud/neural-o1.yaml: the network and training of configs/en_ewt's joint config
    (words alone, UPOS, XPOS and FEATS heads), the root rule read from the treebank."""
    ud = load_config(REPO / "configs" / "ud" / "neural-o1.yaml", data_root=str(DATA)).to_dict()
    en = load_config(REPO / "configs" / "en_ewt" / "neural-o1-joint.yaml",
                     data_root=str(DATA)).to_dict()
    assert ud["parser"] == "neural"
    assert {k: ud["neural"][k] for k in ("tags", "tag_heads", "batch_tokens", "vectors",
                                         "threads")} == \
        {"tags": "none", "tag_heads": "upos+xpos+feats", "batch_tokens": 500, "vectors": None,
         "threads": 1}
    assert ud["training"]["epochs"] == 20
    raw = yaml.safe_load((REPO / "configs" / "ud" / "neural-o1.yaml").read_text())
    assert raw["decoder"]["single_root"] == "auto"
    for cfg in (ud, en):
        for key in ("name", "data", "decoder"):
            cfg.pop(key)
    assert ud == en


@pytest.fixture(scope="module")
def neural_cell(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """configs/grids/ud-neural.yaml run by ``dparse grid -j 1 --only treebank=da_ddt`` on a
    data root whose da_ddt holds 60 sentences of dev (training and model selection, as the
    grid says) and 30 of test, with a tiny network for one epoch: the cell's directory and
    its result record."""
    pytest.importorskip("torch")
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    from dparse.cli import cli

    folder = tmp_path_factory.mktemp("neural-grid")
    root = folder / "data" / "da_ddt"
    root.mkdir(parents=True)
    write_conll(islice(read_conll(DATA / "da_ddt" / "dev.conllu"), 60), root / "dev.conllu")
    write_conll(islice(read_conll(DATA / "da_ddt" / "test.conllu"), 30), root / "test.conllu")
    args = ["grid", str(GRIDS / "ud-neural.yaml"), "--out", str(folder / "run"), "-j", "1",
            "--data-root", str(folder / "data"), "--only", "treebank=da_ddt", "-q"]
    for setting in TINY:
        args += ["--set", setting]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    records = json.loads((folder / "run" / "results.json").read_text())
    assert len(records) == 1
    return folder / "run" / "cells" / records[0]["key"], records[0]


def test_neural_cell_parses_the_test_words_and_records_scores(
        neural_cell: tuple[Path, dict]) -> None:
    directory, record = neural_cell
    assert record["status"] == "ok", record.get("error")
    assert (record["config"], record["treebank"], record["name"]) == \
        ("neural-o1", "da_ddt", "da_ddt-neural-o1")
    assert reads_words_only(directory / MODEL_DIR)
    gold = list(read_conll(directory.parents[2] / "data" / "da_ddt" / "test.conllu"))
    parsed = list(read_conll(directory / PARSED_FILE))
    report = evaluate(gold, parsed, punct="include")
    assert (record["uas"], record["las"]) == (report.uas, report.las)
    assert 0 < record["las"] <= record["uas"] < 100
    assert record["test_sentences"] == 30 and record["test_tokens"] == sum(map(len, gold))
    assert record["tokens_per_second"] > 0 and record["train_seconds"] > 0
    # words alone: the gold LEMMA is not in the output (the model predicts none), the tag
    # heads' UPOS, XPOS and FEATS are, scored in the record
    assert all(set(p.lemma) == {"_"} for p in parsed)
    assert record["tags"] == "predicted"
    scores = score_tags(gold, parsed).as_dict()
    assert {k: record[k] for k in (*TAG_SCORES, "tag_words")} == scores
    assert record["lemmas"] is None and record["upos"] is not None


def test_neural_cell_gives_the_same_trees_from_the_gold_tag_test_file(
        neural_cell: tuple[Path, dict]) -> None:
    """The model reads FORM only: the test file with its gold LEMMA, UPOS, XPOS and FEATS
    parses to the trees the cell's words-alone parse wrote."""
    from dparse.parsers import load_parser
    from dparse.timer import ParseTimer

    directory, _ = neural_cell
    model = directory / MODEL_DIR
    cfg = load_config(model / "config.yaml")
    gold = list(read_conll(directory.parents[2] / "data" / "da_ddt" / "test.conllu"))
    assert any(set(s.upos) != {"_"} for s in gold)
    with_tags = list(load_parser(model, cfg, None).parse(gold, ParseTimer()))
    words_alone = list(read_conll(directory / PARSED_FILE))
    for a, b in zip(with_tags, words_alone, strict=True):
        assert list(a.heads) == list(b.heads) and a.deprels == b.deprels
