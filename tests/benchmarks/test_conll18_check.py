"""benchmarks/conll18_check.py: which gold file each system file is scored against, and the
table that compares dparse's CoNLL 2018 metrics with a scorer's counts (a stand-in script here
that prints the official scorer's ``--counts`` table for the hand-made files of
tests/test_contentscores.py, as the official scorer printed it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conll18_check import build, find_systems  # noqa: E402
from test_contentscores import GOLD, SYSTEM  # noqa: E402

# conll18_ud_eval.py --counts on GOLD and SYSTEM (the metrics the check compares)
COUNTS = """Metric     | Correct   |      Gold | Predicted | Aligned
-----------+-----------+-----------+-----------+-----------
Words      |        16 |        16 |        16 |        16
UPOS       |        14 |        16 |        16 |        16
XPOS       |        16 |        16 |        16 |        16
UFeats     |        15 |        16 |        16 |        16
AllTags    |        13 |        16 |        16 |        16
Lemmas     |        13 |        16 |        16 |        16
UAS        |        15 |        16 |        16 |        16
LAS        |        11 |        16 |        16 |        16
CLAS       |         8 |        10 |        11 |        10
MLAS       |         4 |        10 |        11 |        10
BLEX       |         5 |        10 |        11 |        10
"""


def _scorer(tmp_path: Path, name: str, table: str) -> Path:
    script = tmp_path / name
    script.write_text(f"print({table!r})\n", encoding="utf-8")
    return script


def test_gold_files_of_grid_cells_and_named_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "tb").mkdir(parents=True)
    (data / "tb" / "test.conllu").write_text(GOLD, encoding="utf-8")
    cell = tmp_path / "runs" / "cells" / "abc"
    cell.mkdir(parents=True)
    (cell / "result.json").write_text(json.dumps({"treebank": "tb", "config": "o2"}))
    (cell / "test.parsed.conllu").write_text(SYSTEM, encoding="utf-8")
    (tmp_path / "runs" / "tb-o1.test.conllu").write_text(SYSTEM, encoding="utf-8")
    (tmp_path / "runs" / "esp-o1.test.conllu").write_text(SYSTEM, encoding="utf-8")
    systems = find_systems([tmp_path / "runs"], data, None)
    assert [(s.name, s.gold) for s in systems] == [
        ("tb-o2", data / "tb" / "test.conllu"), ("esp-o1", None),
        ("tb-o1", data / "tb" / "test.conllu")]
    one = find_systems([tmp_path / "runs"], data, tmp_path / "g.conllu")
    assert {s.gold for s in one} == {tmp_path / "g.conllu"}


def test_equal_metrics_and_a_difference(tmp_path: Path) -> None:
    gold, system = tmp_path / "tb" / "test.conllu", tmp_path / "tb-x.test.conllu"
    gold.parent.mkdir()
    gold.write_text(GOLD, encoding="utf-8")
    system.write_text(SYSTEM, encoding="utf-8")
    systems = find_systems([system], tmp_path, None)
    text, equal = build(_scorer(tmp_path, "same.py", COUNTS), systems)
    assert equal and "Every metric equal on all 1 systems." in text
    # F1 of CLAS: 2 * 8 / (10 + 11); LAS: the universal relation's, 11 of 16
    assert "| tb-x | tb/test.conllu | 87.50 | 100.00 | 93.75 | 81.25 | 81.25 | 93.75 | " \
           "68.75 | 76.19 | 38.10 | 47.62 |" in text
    wrong = COUNTS.replace("|         8 |", "|         9 |")
    text, equal = build(_scorer(tmp_path, "other.py", wrong), systems)
    assert not equal and "**76.19 vs 85.71**" in text
    assert "1 differences, 0 scorer failures in 1 systems" in text
    text, equal = build(tmp_path / "missing.py", systems)
    assert not equal and "the scorer failed" in text
