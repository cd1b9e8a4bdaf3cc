"""benchmarks/check_retrain.py's report: a run of some configs (``--only``) compares them with
the record and lists the record's other configs as not retrained, in the record's order."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from check_retrain import Outcome, table  # noqa: E402


def entry(weights: str, model: str, uas: float) -> dict:
    return {"weights_sha256": weights, "model_sha256": model,
            "scores": {"uas": uas, "las": uas - 2}, "commit": "abc1234", "train_seconds": 60}


RECORD = {"o1-cle": entry("a" * 64, "b" * 64, 87.44), "o2-dd": entry("c" * 64, "d" * 64, 89.74),
          "easyfirst": entry("e" * 64, "f" * 64, 85.99)}


def row(report: str, name: str) -> str:
    return next(line for line in report.splitlines() if line.startswith(f"| {name} |"))


def test_a_partial_run_lists_every_recorded_config_in_order() -> None:
    same = Outcome("o2-dd", "c" * 64, "d" * 64, {"uas": 89.74, "las": 87.74}, 61.2)
    moved = Outcome("o1-cle", "a" * 64, "9" * 64, {"uas": 87.44, "las": 85.44}, 70.0)
    report = table({"o2-dd": same, "o1-cle": moved}, RECORD, "1234567")
    names = [line.split(" | ")[0][2:] for line in report.splitlines() if line.startswith("| o")
             or line.startswith("| easyfirst")]
    assert names == ["o1-cle", "o2-dd", "easyfirst"]  # the order of check_retrain.UNITS
    assert row(report, "o2-dd").endswith("| 61 | yes |")
    assert "no: model_sha256 999999999999 (recorded bbbbbbbbbbbb)" in row(report, "o1-cle")
    assert row(report, "easyfirst") == (
        "| easyfirst | 85.99 / 83.99 | eeeeeeeeeeee | ffffffffffff | 60 | not retrained by this "
        "run (the record's, at abc1234) |")


def test_only_a_config_retrains_the_models_it_reads_when_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import check_retrain

    trained: list[list[str]] = []

    def retrain_all(units, models, checkout, data, jobs):  # records what would be trained
        trained.append([u.name for u in units])
        return {u.name: Outcome(u.name, error="not trained in this test") for u in units}

    monkeypatch.setattr(check_retrain, "retrain_all", retrain_all)
    args = ["--models", str(tmp_path), "--record", str(tmp_path / "record.json"),
            "--table", str(tmp_path / "table.md"), "--only", "o1-umst-uf-lep"]
    monkeypatch.setattr(sys, "argv", ["check_retrain.py", *args])
    check_retrain.main()
    (tmp_path / "en_ewt-o1-cle").mkdir()
    (tmp_path / "en_ewt-o1-cle" / "manifest.json").write_text("{}")
    check_retrain.main()
    assert trained == [["o1-cle", "o1-umst-uf-lep"], ["o1-umst-uf-lep"]]
