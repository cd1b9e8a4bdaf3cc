"""benchmarks/cube_tables.py, cube_scaling.py and common.py: row assembly, the exponent fit, the
Table 3 config derivation, the random instances, and a tiny end-to-end measurement on real
data."""

from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import DATA, requires_data
from paths import REPO

from dparse.config import load_config
from dparse.conll import read_conll, read_treebank, write_conll
from dparse.errors import ConfigError, DparseError

sys.path.insert(0, str(REPO / "benchmarks"))
import common  # noqa: E402
import cube_scaling  # noqa: E402
import cube_tables  # noqa: E402

BASE = """# The full model (a comment that must survive).
name: en_ewt-o3-cube

data:
  train: en_ewt/train.conllu      # relative to the data root
  groups: keep                    # not under features: untouched

features:
  order: 3
  groups: sib,grand,trisib,valency   # feature groups (Table 3)
  label_tuples: true
  label_bits: 17

decoder:
  name: cube
  options: {k: 5, recombination: true}
"""


def test_ablation_switches_groups_and_keeps_everything_else() -> None:
    text = cube_tables.ablation_text(BASE, "en_ewt-o3-cube-x", "row x", ["valency", "sib"])
    raw, base = yaml.safe_load(text), yaml.safe_load(BASE)
    assert raw["name"] == "en_ewt-o3-cube-x"
    assert raw["features"]["groups"] == "sib,valency"
    assert "  groups: sib,valency   # feature groups (Table 3)\n" in text
    del raw["name"], base["name"], raw["features"]["groups"], base["features"]["groups"]
    assert raw == base
    assert "a comment that must survive" in text and text.startswith('# Table 3 row "row x"')
    none = yaml.safe_load(cube_tables.ablation_text(BASE, "n", "none", []))
    assert none["features"]["groups"] == "none" and none["data"]["groups"] == "keep"


def test_ablation_rejects_unknown_groups_and_configs_without_groups() -> None:
    with pytest.raises(DparseError, match="not in the base config"):
        cube_tables.ablation_text(BASE, "x", "x", ["sib", "gsib"])
    with pytest.raises(DparseError, match="no features.groups"):
        cube_tables.ablation_text(BASE.replace("  groups: sib", "  other: sib"), "x", "x", [])
    with pytest.raises(DparseError, match="features.groups"):
        cube_tables.ablation_text(BASE.replace("trisib", "quadsib"), "x", "x", [])
    folded = BASE.replace("  groups: sib,grand,trisib,valency   # feature groups (Table 3)",
                          "  groups: >-\n    sib,grand")
    with pytest.raises(DparseError, match="could not rewrite"):
        cube_tables.ablation_text(folded, "x", "x", [])


def test_table3_rows_grow_and_configs_cover_every_row_but_the_full_model() -> None:
    groups = [set(g) for _, _, g, _ in cube_tables.TABLE3[:-1]]
    assert groups[0] == set() and all(a < b for a, b in zip(groups, groups[1:], strict=False))
    assert cube_tables.TABLE3[-1][1] == cube_tables.CUBE
    full = BASE.replace("sib,grand,trisib,valency", "sib,grand,trisib,gsib,sibgrand,valency")
    configs = cube_tables.table3_configs(full)
    assert set(configs) == {c for _, c, g, _ in cube_tables.TABLE3 if g is not None}
    assert yaml.safe_load(configs["o3-cube-none"])["features"]["groups"] == "none"
    assert yaml.safe_load(configs["o3-cube-koo"])["features"]["groups"] == "sib,grand,trisib,gsib"


def test_committed_ablation_configs_are_derived_from_o3_cube() -> None:
    base_path = common.CONFIGS / "o3-cube.yaml"
    if not base_path.is_file():
        pytest.skip("configs/en_ewt/o3-cube.yaml is not there yet")
    for stem, text in cube_tables.table3_configs(base_path.read_text(encoding="utf-8")).items():
        path = common.CONFIGS / f"{stem}.yaml"
        assert path.read_text(encoding="utf-8") == text, f"{path}: run make cube-configs"
        assert load_config(path).name == f"en_ewt-{stem}"


def _row(uas: float, las: float, tps: float, **kw: object) -> dict:
    return {"uas": uas, "las": las, "tokens_per_second": tps, **kw}


def test_table1_rows_show_speed_ratios_paper_figures_and_rows_not_run() -> None:
    rows = [_row(88.5, 86.25, 30000.0, row="1st", config="o1-eisner", paper=(91.8, 90.5, 2070)),
            {"row": "3rd", "config": "o3-exact", "paper": (92.81, None, 50)}]
    lines = cube_tables.table1_lines(rows, reference_tps=20000.0)
    assert len(lines) == 4 and lines[1].count("|") == lines[0].count("|")
    assert lines[2] == ("| 1st | o1-eisner | 88.50 | 86.25 | 30,000 | 1.500 | 91.80 | 90.50 "
                        "| 2,070 |")
    assert lines[3] == "| 3rd | o3-exact | - | - | - | - | 92.81 | - | 50 |"


def test_table2_bolds_the_best_uas_and_averages_complete_rows() -> None:
    results = [{"treebank": "a", "scores": {"x": {"uas": 80.0, "las": 70.0},
                                            "y": {"uas": 82.0, "las": 71.0}}},
               {"treebank": "b", "scores": {"x": {"uas": 90.0, "las": 85.0},
                                            "y": {"uas": 88.0, "las": 86.0}}},
               {"treebank": "c", "scores": {"x": {"uas": 50.0, "las": 40.0}}}]
    lines = cube_tables.table2_lines(results, ["x", "y"])
    assert lines[2] == "| a | 80.00 / 70.00 | **82.00 / 71.00** |"
    assert lines[3] == "| b | **90.00 / 85.00** | 88.00 / 86.00 |"
    assert lines[4] == "| c | **50.00 / 40.00** | - |"
    assert lines[5] == "| average (2) | 85.00 / 77.50 | 85.00 / 78.50 |"


def test_table3_gains_are_over_the_row_above() -> None:
    rows = [_row(90.0, 88.0, 3000.0), _row(90.5, 88.25, 2000.0), {"paper": None},
            _row(91.0, 89.0, 1000.0)]
    assert cube_tables.gains(rows) == [None, (0.5, 0.25), None, None]
    for r, name in zip(rows, "abcd", strict=True):
        r.update(row=name, config=name, paper=r.get("paper", (1.0, 2.0, 3.0)))
    lines = cube_tables.table3_lines(rows, 1000.0)
    assert lines[3].startswith("| b | b | 90.50 | 88.25 | +0.50 | +0.25 | 2,000 | 2.000 |")
    assert lines[4] == "| c | c | - | - | - | - | - | - | - | - | - |"


def test_table4_rows_and_overrides() -> None:
    assert cube_tables.table4_overrides(2, False) == [
        "decoder.options.k=2", "decoder.options.recombination=false"]
    settings = [(k, rec) for k, rec, _ in cube_tables.TABLE4]
    assert sorted(settings) == [(k, r) for k in (2, 5, 10) for r in (False, True)]
    rows = [_row(90.0, 88.0, 500.0, k=2, recombination=True, paper=None,
                 search={"search_errors": 3, "sentences": 100, "unreachable": 7}),
            _row(91.0, 89.0, 250.0, k=10, recombination=False, paper=(1.0, 2.0, 3.0),
                 search={"error": "cannot score"})]
    lines = cube_tables.table4_lines(rows, 1000.0)
    assert lines[2] == ("| 2 | yes | 90.00 | 88.00 | 500 | 0.500 | 3 / 100 (gold unreachable: "
                        "7, scoring higher in 0) | - | - | - |")
    assert lines[3] == "| 10 | no | 91.00 | 89.00 | 250 | 0.250 | n/a | 1.00 | 2.00 | 3 |"


def test_model_arguments() -> None:
    assert cube_tables.parse_models(["o3-cube=/tmp/a", "tr_imst:o1-eisner=b"]) == {
        "o3-cube": Path("/tmp/a"), "tr_imst:o1-eisner": Path("b")}
    with pytest.raises(DparseError, match="NAME=DIR"):
        cube_tables.parse_models(["o3-cube"])


def test_exponent_fit_recovers_power_laws() -> None:
    rows = [{"n": n, "a": 2e-6 * n ** 3, "b": 1e-5 * n ** 1.5 * (1 + 0.5 * (n < 30))}
            for n in (10, 20, 40, 80)]
    fits = cube_scaling.exponents(rows, ["a", "b"])
    assert fits["a"] == pytest.approx(3.0)
    assert cube_scaling.exponents(rows, ["b"], min_n=30)["b"] == pytest.approx(1.5)
    assert cube_scaling.exponents(rows, ["a"], min_n=80) == {"a": None}
    table = common.decoder_table([{"n": 10, "arcs": 40.4, "a": 2e-3, "b": 5e-4}],
                                 ["a", "b"])
    assert table[2] == "| 10 | 40 | 2.00 (5,000) | 0.50 (20,000) | 0.25 |"


def test_random_instances_keep_three_to_five_heads_per_word() -> None:
    parts = common.random_parts(np.random.default_rng(3), 12)
    arc = parts["arc"]
    heads = np.isfinite(arc).sum(axis=0)
    assert heads[0] == 0 and np.all((heads[1:] >= 3) & (heads[1:] <= 5))
    assert not np.isfinite(np.diag(arc)).any()
    assert parts["trisib"].shape == (13,) * 4 and parts["sib"].shape == (13,) * 3


def test_decoder_timing_runs_every_decoder_on_valid_trees() -> None:
    rows = common.time_decoders([4, 7], budget=0.002, seed=1, instances=1)
    labels = [label for label, _ in common.DECODERS]
    assert [r["n"] for r in rows] == [4, 7]
    assert all(r[label] > 0 for r in rows for label in labels)
    text = cube_scaling.report(rows, labels, 0.002, 1)
    assert "eisner3-outermost: b = " in text and "| 7 |" in text


@requires_data
def test_measure_and_search_errors_on_a_slice_of_en_ewt(tmp_path: Path) -> None:
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 60), tmp_path / "t.conllu")
    gold = tmp_path / "g.conllu"
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 30), gold)
    raw = {"name": "tiny", "data": {"train": "t.conllu"},
           "features": {"arc_bits": 14, "label_bits": 10}, "training": {"epochs": 1}}
    models = cube_tables.Models(tmp_path / "models", [], {}, str(tmp_path), [])
    cfg = load_config(raw=raw, data_root=str(tmp_path))
    model_dir = common.find_or_train(cfg, models.folder, [], lambda _: None)
    test = read_treebank(gold)
    row = common.measure(model_dir, test, "include")
    tokens = sum(len(s) for s in test)
    assert row["tokens"] == tokens and row["tokens_per_second"] > 0
    assert 0 < row["las"] <= row["uas"] <= 100
    eisner = common.measure(model_dir, test, "include", ["decoder.name=eisner"])
    assert eisner["tokens"] == tokens
    with pytest.raises(ConfigError):
        common.measure(model_dir, test, "include", ["training.epochs=3"])
    counted = cube_tables.count_search_errors(model_dir, gold, ["decoder.name=bgi"])
    assert counted["sentences"] == 30 and 0 <= counted["search_errors"] <= 30
    # an exact decoder makes none
    assert cube_tables.count_search_errors(model_dir, gold, ["decoder.name=eisner"])[
        "search_errors"] == 0
    bad = cube_tables.count_search_errors(model_dir, gold, ["decoder.name=nonesuch"])
    assert "error" in bad


@requires_data
def test_third_order_search_errors_are_none_for_the_exact_decoder(tmp_path: Path) -> None:
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 60), tmp_path / "t.conllu")
    gold = tmp_path / "g.conllu"
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 25), gold)
    raw = yaml.safe_load((common.CONFIGS / "o3-exact.yaml").read_text(encoding="utf-8"))
    raw["name"] = "tiny3"
    raw["data"].update(train="t.conllu", dev=None, test=None)
    raw["features"].update(arc_bits=14, label_bits=10, ho_bits=14)
    raw["pruner"].update(epochs=1, arc_bits=14, label_bits=10)
    raw["training"]["epochs"] = 1
    cfg = load_config(raw=raw, data_root=str(tmp_path))
    model_dir = common.find_or_train(cfg, tmp_path / "models", [], lambda _: None)
    exact = cube_tables.count_search_errors(model_dir, gold, [])
    assert exact["sentences"] == 25 and exact["search_errors"] == 0
    beam = cube_tables.count_search_errors(model_dir, gold, [
        "decoder.name=cube", *cube_tables.table4_overrides(1, False)])
    assert beam["sentences"] == 25
    assert 0 <= beam["search_errors"] <= 25 - beam["unreachable"]
