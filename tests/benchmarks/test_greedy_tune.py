"""benchmarks/greedy_tune.py: grid files, and a staged search on a tiny first-order model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from conftest import DATA, requires_data, train_tiny_model
from paths import REPO

from dparse.conll import read_treebank
from dparse.errors import DparseError
from dparse.graph.load import load_model

sys.path.insert(0, str(REPO / "benchmarks"))
from common import DevScores, load_grid, tune  # noqa: E402
from greedy_tune import DEFAULT_GRID, write_report  # noqa: E402


def _grid(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_grid_covers_the_papers_ranges() -> None:
    grid = load_grid(DEFAULT_GRID)
    assert grid.decoder == "bgi-pp"
    first, ensemble, last = grid.stages
    # footnote 3: alpha in [0, 2.5], beta in [0.2, 0.5], gamma1 in [0.5, 1.5], gamma2 in [0.2, 0.3]
    assert min(first.values["alpha"]) == 0 and max(first.values["alpha"]) == 2.5
    assert min(first.values["beta"]) == 0.2 and 0.5 in first.values["beta"]
    assert first.values["beam"] == [1] and first.values["improve"] == [0] and not first.ensemble
    assert {0.5, 1.5} <= set(ensemble.values["gamma1"]) and ensemble.ensemble
    assert {0.2, 0.3} <= set(ensemble.values["gamma2"])
    assert 3 in last.values["beam"] and 5 in last.values["improve"]
    assert len(list(first.settings())) == 7 * 7


@pytest.mark.parametrize(("text", "message"), [
    ("- 1\n", "a mapping with the keys decoder and stages"),
    ("stages: []\n", "non-empty list"),
    ("decoder: 3\nstages: [{alpha: [1]}]\n", "decoder must be"),
    ("stages: [{alpha: 1}]\n", "alpha must be a non-empty list"),
    ("stages: [{name: x}]\n", "has no keys"),
    ("stages: [{gamma1: [-1]}]\n", "gamma1 values must be >= 0"),
    ("stages: [3]\n", "stage 1 must be a mapping"),
    ("stages: [{alpha: [1\n", "cannot read"),
])
def test_bad_grids_are_named(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(DparseError, match=message):
        load_grid(_grid(tmp_path, text))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A first-order model trained on 200 en_ewt sentences, and 30 dev sentences."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    return train_tiny_model(tmp_path_factory.mktemp("tune"),
                            {"data": {"train": "train.conllu"},
                             "features": {"arc_bits": 16, "label_bits": 10},
                             "decoder": {"name": "bgi-pp", "options": {"beta": 0.3}},
                             "training": {"epochs": 1}, "ensemble": {"gamma2": 0.1}}, 200, 30)


def dev_scores(tiny: Path, dev: list, budget: float) -> DevScores:
    """The tiny model's scores of ``dev`` (kept within ``budget`` bytes)."""
    return DevScores(load_model(tiny / "model"), dev, budget)


@requires_data
def test_stages_keep_their_best_setting(tiny: Path, tmp_path: Path) -> None:
    grid = load_grid(_grid(tmp_path, """
decoder: null
stages:
  - name: sharpness
    alpha: [0.0, 1.0, 2.5]
  - name: gammas
    gamma1: [0.0, 50.0]
    gamma2: [0.3, 0.6]
  - beta: [0.2, 0.5]
"""))
    dev = read_treebank(tiny / "dev.conllu")
    skipped = tune(tiny / "model", dev_scores(tiny, dev, 2**30), grid, [], "include",
                   log=lambda _: None)
    assert skipped["stages"][1] == {"name": "gammas", "skipped": "no --other parse"}
    # the other parse is the gold tree: a large gamma1 follows it
    report = tune(tiny / "model", dev_scores(tiny, dev, 2**30), grid, [dev], "include",
                  log=lambda _: None)
    assert report["decoder"] == "bgi-pp"
    assert report["start"] == {"beta": 0.3, "gamma1": 1.0, "gamma2": 0.1}  # from the config
    sharp, gammas, beta = report["stages"]
    assert [r["setting"] for r in sharp["rows"]] == [{"alpha": a} for a in (0.0, 1.0, 2.5)]
    uas = [r["uas"] for r in sharp["rows"]]
    assert sharp["best"] == uas.index(max(uas))  # the first of the best
    assert gammas["ensemble"] and gammas["rows"][1]["uas"] == 100.0 and gammas["best"] == 1
    # a first-order model has no part for gamma2 to raise: it keeps its starting value
    assert [r["setting"] for r in gammas["rows"]] == [{"gamma1": g, "gamma2": 0.1}
                                                      for g in (0.0, 50.0)]
    assert gammas["rows"][0]["uas"] == uas[sharp["best"]]  # gamma 0: no change
    assert beta["name"] == "stage 3" and not beta["ensemble"]
    best_beta = beta["rows"][beta["best"]]["setting"]["beta"]
    assert report["best"] == {
        "decoder": {"name": "bgi-pp",
                    "options": {"beta": best_beta, "alpha": sharp["rows"][sharp["best"]][
                        "setting"]["alpha"]}},
        "ensemble": {"gamma1": 50.0, "gamma2": 0.1}}
    out = tmp_path / "tune.md"
    write_report(report, out)
    text = out.read_text(encoding="utf-8")
    assert "## gammas" in text and "| **50** | **0.1** | **100.00** |" in text
    best = yaml.safe_load(text.split("```yaml")[1].split("```")[0])
    assert best["ensemble"] == {"gamma1": 50.0, "gamma2": 0.1}
    assert out.with_suffix(".json").is_file()


@requires_data
def test_bad_settings_fail_before_decoding(tiny: Path, tmp_path: Path) -> None:
    grid = load_grid(_grid(tmp_path, "stages: [{alpha: [1.0]}, {beta: [0.5, 2.0]}]\n"))
    dev = read_treebank(tiny / "dev.conllu")
    with pytest.raises(DparseError, match=r"grid 'stage 2': options .*'beta': 2.0.* rejected"):
        tune(tiny / "model", dev_scores(tiny, dev, 2**30), grid, [], "include",
             log=lambda _: None)


@requires_data
def test_scores_too_big_to_keep_are_rescored(tiny: Path, tmp_path: Path) -> None:
    grid = load_grid(_grid(tmp_path, "stages: [{alpha: [0.5, 2.0]}]\n"))
    dev = read_treebank(tiny / "dev.conllu")
    kept = tune(tiny / "model", dev_scores(tiny, dev, 2**30), grid, [], "include",
                log=lambda _: None)
    again = tune(tiny / "model", dev_scores(tiny, dev, 0), grid, [], "include",
                 log=lambda _: None)
    assert kept["storage"].startswith("kept") and again["storage"].startswith("re-scored")
    assert [r["uas"] for r in kept["stages"][0]["rows"]] == [
        r["uas"] for r in again["stages"][0]["rows"]]
