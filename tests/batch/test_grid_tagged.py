"""Grids on predicted tags (issue 33, item 5; make ud-table TAGS=predicted): the tagged grid
and its configs, config files named by a config resolved and keyed by content, and the cells
of a tagger and of a pipeline config run end to end on a tiny slice of da_ddt."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import pytest
import yaml
from conftest import DATA, requires_data
from paths import REPO

from dparse.batch.cells import (
    MODEL_DIR,
    PARSED_FILE,
    TAGGED_FILE,
    WORK_DIR,
    Cell,
    cell_key,
    run_cell,
)
from dparse.batch.grid import csv_table, load_grid, markdown_table
from dparse.config import load_config
from dparse.conll import read_conll, write_conll
from dparse.metrics import evaluate
from dparse.tagscores import TAG_SCORES, score_tags

GRIDS = REPO / "configs" / "grids"
TINY = ["training.epochs=1", "features.arc_bits=16", "features.label_bits=10",
        "tagger.folds=2"]
# the record keys of a cell on gold tags, unchanged by the cells on predicted tags
GOLD_KEYS = {"config", "treebank", "seed", "set", "key", "status", "name", "uas", "las", "punct",
             "tokens_per_second", "train_seconds", "best_epoch", "test_sentences",
             "test_tokens", "host", "batch_job"}
TAG_KEYS = {"tags", *TAG_SCORES, "tag_words"}


def test_tagged_grid_runs_the_tagger_and_parsers_on_the_ud_grids_treebanks() -> None:
    gold, tagged = load_grid(GRIDS / "ud.yaml"), load_grid(GRIDS / "ud-tagged.yaml")
    assert tagged.treebanks == gold.treebanks and len(gold.treebanks) == 14
    for grid in ("ud.yaml", "ud-tagged.yaml"):  # one list file: they cannot drift apart
        assert yaml.safe_load((GRIDS / grid).read_text())["treebanks"] == "treebanks/ud.yaml"
    assert [c.stem for c in tagged.configs] == ["tagger", "o1-cle-tagged", "o2-eisner-tagged"]
    assert tagged.punct == gold.punct == "include"


@pytest.mark.parametrize("name", ["o1-cle", "o2-eisner"])
def test_tagged_ud_configs_are_the_gold_ones_with_a_tagger(name: str) -> None:
    base = load_config(REPO / "configs" / "ud" / f"{name}.yaml").to_dict()
    tagged = load_config(REPO / "configs" / "ud" / f"{name}-tagged.yaml").to_dict()
    assert tagged.pop("name") == base.pop("name") + "-tagged"
    assert tagged.pop("tagger") == {"config": str(REPO / "configs" / "ud" / "tagger.yaml"),
                                    "model": "", "folds": 10}
    base.pop("tagger")
    assert tagged == base


def test_cells_name_a_tagger_config_by_absolute_path_and_key_it_by_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From any working directory the cell's tagger.config is the file beside the config and
    the key is the same; editing the tagger config makes a new key; a config that names no
    other config keeps the key formula of grids run before (a finished cell is found again)."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "grids").mkdir()
    tagger = tmp_path / "configs" / "tagger.yaml"
    tagger.write_text("parser: tagger\n")
    (tmp_path / "configs" / "pipe.yaml").write_text(
        "data: {train: t.conllu}\ndecoder: {single_root: true}\ntagger: {config: tagger.yaml}\n")
    (tmp_path / "grids" / "g.yaml").write_text("configs: [../configs/pipe.yaml]\n")
    keys = []
    for cwd in (tmp_path, tmp_path / "grids"):
        monkeypatch.chdir(cwd)
        grid = Path("grids/g.yaml") if cwd == tmp_path else Path("g.yaml")
        cell = load_grid(grid).cells(tmp_path / "run", str(tmp_path))[0]
        assert cell.config["tagger"]["config"] == str(tagger)
        keys.append(cell.key)
    assert keys[0] == keys[1]
    tagger.write_text("parser: tagger\ntagging: {draft_folds: 2}\n")
    assert load_grid(tmp_path / "grids" / "g.yaml").cells(tmp_path / "run",
                                                         str(tmp_path))[0].key != keys[0]
    plain = {"name": "x", "rerank": {"first_stage": ""},
             "tagger": {"config": "", "model": "", "folds": 10}}
    assert cell_key(plain, {}, "include") == "c65ccf4a2e46b256"  # as before issue 33


@pytest.fixture(scope="module")
def slice_cells(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Cell, dict]]:
    """The cells of a tiny grid, each run: a tagger config (configs/ud/tagger.yaml with 2**16
    weights and one epoch), o1-cle-tagged (configs/ud's, naming that tagger) and o1-cle on
    gold tags; 80 training sentences of da_ddt dev, 30 of dev, 40 of test."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = tmp_path_factory.mktemp("tagged-grid")
    dev = list(islice(read_conll(DATA / "da_ddt" / "dev.conllu"), 110))
    write_conll(dev[:80], folder / "train.conllu")
    write_conll(dev[80:], folder / "dev.conllu")
    write_conll(islice(read_conll(DATA / "da_ddt" / "test.conllu"), 40), folder / "test.conllu")
    raw = yaml.safe_load((REPO / "configs" / "ud" / "tagger.yaml").read_text())
    raw["training"]["epochs"] = 1
    (folder / "tagger.yaml").write_text(yaml.safe_dump(raw))
    for name in ("o1-cle", "o1-cle-tagged"):
        (folder / f"{name}.yaml").write_text(
            (REPO / "configs" / "ud" / f"{name}.yaml").read_text())
    tb = {"name": "mini", **{s: str(folder / f"{s}.conllu") for s in ("train", "dev", "test")}}
    (folder / "grid.yaml").write_text(json.dumps(
        {"configs": ["tagger.yaml", "o1-cle-tagged.yaml", "o1-cle.yaml"], "treebanks": [tb],
         "overrides": TINY}))
    cells = load_grid(folder / "grid.yaml").cells(folder / "run", str(folder))
    return {c.labels["config"]: (c, run_cell(c)) for c in cells}


@requires_data
def test_tagger_cell_tags_the_test_words_and_records_tag_scores(slice_cells: dict) -> None:
    cell, record = slice_cells["tagger"]
    assert record["status"] == "ok", record.get("error")
    assert set(record) == GOLD_KEYS | TAG_KEYS
    assert record["uas"] is None and record["las"] is None and record["tags"] == "predicted"
    gold = list(read_conll(cell.data_files["test"]))
    tagged = list(read_conll(Path(cell.directory) / TAGGED_FILE))
    assert record["test_sentences"] == 40 and record["test_tokens"] == record["tag_words"] \
        == sum(map(len, gold))
    scores = score_tags(gold, tagged).as_dict()
    assert {k: record[k] for k in scores} == scores
    assert 50 < record["upos"] < 100 and 50 < record["lemmas"] < 100  # predicted, not kept
    for g, t in zip(gold, tagged, strict=True):  # only the tag columns are written anew
        assert t.form == g.form and list(t.heads) == list(g.heads) and t.deprels == g.deprels
    assert not (Path(cell.directory) / PARSED_FILE).exists()


@requires_data
def test_pipeline_cell_parses_the_test_words_with_its_tagger(slice_cells: dict) -> None:
    cell, record = slice_cells["o1-cle-tagged"]
    tagger_cell, tagger = slice_cells["tagger"]
    assert record["status"] == "ok", record.get("error")
    assert set(record) == GOLD_KEYS | TAG_KEYS and record["tags"] == "predicted"
    folder = Path(cell.data_files["train"]).parent
    assert cell.config["tagger"] == {"config": str(folder / "tagger.yaml"), "model": "",
                                     "folds": 2}
    directory = Path(cell.directory)
    assert sorted(p.name for p in (directory / WORK_DIR).iterdir()) == [
        "dev.tagged.conllu", "tagged.stamp.json", "train.tagged.conllu"]
    assert (directory / MODEL_DIR / "tagger").is_dir()
    gold = list(read_conll(cell.data_files["test"]))
    parsed = list(read_conll(directory / PARSED_FILE))
    report = evaluate(gold, parsed, punct="include")
    assert (record["uas"], record["las"]) == (report.uas, report.las)
    assert 0 < record["las"] <= record["uas"] < 100
    # the pipeline's tagger is the tagger config's model, byte for byte: the same tags
    tagged = list(read_conll(Path(tagger_cell.directory) / TAGGED_FILE))
    for p, t in zip(parsed, tagged, strict=True):
        assert (p.lemma, p.upos, p.xpos, p.feats) == (t.lemma, t.upos, t.xpos, t.feats)
    assert {k: record[k] for k in TAG_KEYS} == {k: tagger[k] for k in TAG_KEYS}


@requires_data
def test_gold_cell_record_and_grid_tables(slice_cells: dict) -> None:
    """A cell on gold tags records what it did before; the grid's tables add the tag columns
    only when some cell ran on predicted tags."""
    cell, record = slice_cells["o1-cle"]
    assert record["status"] == "ok" and set(record) == GOLD_KEYS
    assert not (Path(cell.directory) / WORK_DIR).exists()
    records = [r for _, r in slice_cells.values()]
    table = markdown_table("tiny", records)
    assert "| status | UAS | LAS | UPOS | XPOS | UFeats | AllTags | Lemmas | tokens/sec |" in table
    row = next(line for line in table.splitlines() if line.startswith("| tagger |"))
    assert f"| ok |  |  | {records[0]['upos']:.2f} |" in row
    gold_only = markdown_table("tiny", [record])
    assert "UPOS" not in gold_only and "| status | UAS | LAS | tokens/sec |" in gold_only
    assert csv_table(records).splitlines()[0] == (
        "config,treebank,seed,set,status,uas,las,upos,xpos,ufeats,alltags,lemmas,"
        "tokens_per_second,train_seconds,key,error")
    assert "upos" not in csv_table([record]).splitlines()[0]
