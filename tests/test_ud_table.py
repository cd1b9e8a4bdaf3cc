"""benchmarks/ud_table.py: results/ud-table.md from the ud grid's results (margins over the
peers, the easy-first - o1-cle gap, speeds relative to o1-cle, the column auto chose)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import ud_table  # noqa: E402


def _record(config: str, treebank: str, uas: float, las: float, key: str) -> dict:
    return {"config": config, "treebank": treebank, "status": "ok", "uas": uas, "las": las,
            "tokens_per_second": 1000.0 if config == "o1-cle" else 3000.0,
            "train_seconds": 10.0, "key": key}


def test_ud_table_margins_gaps_and_columns(tmp_path: Path) -> None:
    records = [_record("o1-cle", "da_ddt", 80.0, 76.0, "a"),
               _record("easyfirst", "da_ddt", 76.5, 72.0, "b"),
               _record("o2-dd", "da_ddt", 82.0, 78.0, "c"),
               _record("o1-cle", "bg_btb", 86.0, 81.0, "d"),
               _record("easyfirst", "bg_btb", 85.0, 80.0, "e"),
               {"config": "o2-dd", "treebank": "bg_btb", "status": "failed", "key": "f"}]
    model = tmp_path / "cells" / "b" / "model"
    model.mkdir(parents=True)
    np.savez(model / "weights.npz", tag="upos")
    text = ud_table.build(tmp_path, records)
    lines = [line for line in text.splitlines() if line.startswith("| da_ddt |")]
    main, gap, speed = lines
    # best dparse 82.00 / 78.00 (o2-dd); best peer TurboParser 80.73 / 76.51
    assert "82.00 / 78.00 (o2-dd)" in main and "+1.27 / +1.49" in main
    assert "| upos |" in main
    assert "| 76.50 | 80.00 | -3.50 | NO |" in gap
    assert "3,000 (3.00x)" in speed
    bg = [line for line in text.splitlines() if line.startswith("| bg_btb |")]
    assert bg[0].endswith("| - | - | - |")  # no peer figures, no margin
    assert "| -1.00 | yes |" in bg[1]
