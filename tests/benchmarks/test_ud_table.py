"""benchmarks/ud_table.py: results/ud-table.md from the ud grid's results (margins over the
peers, the easy-first - o1-cle gap, speeds relative to o1-cle, the column auto chose)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
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


def _tagged(config: str, treebank: str, **scores: float | None) -> dict:
    """A finished record of the ud-tagged grid (a tagger's: uas and las None)."""
    return {"config": config, "treebank": treebank, "status": "ok", "tags": "predicted",
            "uas": None, "las": None, "tokens_per_second": 2000.0, "train_seconds": 60.0,
            **scores}


def test_ud_table_tagged_rows_drops_speeds_and_peers(tmp_path: Path) -> None:
    import ud_table_tagged

    tags = {"upos": 95.5, "xpos": None, "ufeats": 94.25, "alltags": 93.0, "lemmas": 96.0}
    records = [
        _tagged("tagger", "da_ddt", **tags),
        _tagged("o1-cle-tagged", "da_ddt", uas=78.0, las=73.5),
        _tagged("o2-eisner-tagged", "da_ddt", uas=80.25, las=75.0),
        _tagged("tagger", "en_ewt", **{**tags, "xpos": 94.0}, stale=True),
        {"config": "o2-eisner-tagged", "treebank": "en_ewt", "status": "failed", "key": "x"}]
    gold = [_record("o1-cle", "da_ddt", 80.0, 76.0, "a"), _record("o2-eisner", "da_ddt", 82.0,
                                                                  77.5, "b")]
    text = ud_table_tagged.build(tmp_path / "tagged", records, gold, None, tmp_path / "gold")
    da = [line for line in text.splitlines() if line.startswith("| da_ddt |")]
    en = [line for line in text.splitlines() if line.startswith("| en_ewt |")]
    assert da[0] == ("| da_ddt | 95.50 | - | 94.25 | 93.00 | 96.00 | 78.00 / 73.50 | "
                     "80.00 / 76.00 | 2.00 / 2.50 | 80.25 / 75.00 | 82.00 / 77.50 | "
                     "1.75 / 2.50 |")
    assert en[0] == ("| en_ewt | 95.50* | 94.00* | 94.25* | 93.00* | 96.00* | - | - | - | - | "
                     "- | - |")
    # speeds: o1-cle-tagged 2,000 tok/s against o1-cle's 1,000 on gold tags
    assert da[1] == "| da_ddt | 2,000, 60 s | 2,000 (2.00x), 60 s | 2,000 (0.67x), 60 s |"
    assert "| zh_gsd | - | - | - | - | - | - | - | - | - | - | - |" in text  # not run
    assert "Beside" not in text  # no peers file
    peers = {"system": "UDPipe 1", "how": "see the module doc",
             "treebanks": {"da_ddt": {"tags": {"upos": 95.0, "xpos": None, "ufeats": 94.5,
                                               "lemmas": 95.0},
                                      "parse": {"uas": 76.0, "las": 72.5}}}}
    path = tmp_path / "udpipe1.json"
    path.write_text(json.dumps(peers))
    text = ud_table_tagged.build(tmp_path, records, gold, ud_table_tagged.load_peers(path))
    da = [line for line in text.splitlines() if line.startswith("| da_ddt |")]
    # UPOS +0.50 (target +0.3), UFeats -0.25 (target 0), Lemmas +1.00, LAS +2.50 (target +3)
    assert da[2] == ("| da_ddt | 95.50 / 95.00 (+0.50) | - / - | 94.25 / 94.50 (-0.25) | "
                     "96.00 / 95.00 (+1.00) | 75.00 / 72.50 (+2.50) | "
                     "missed: UFeats, o2-eisner LAS |")
    assert "How its figures were made: see the module doc" in text
    del peers["treebanks"]["da_ddt"]["parse"]  # a peer with its tagger's figures alone
    path.write_text(json.dumps(peers))
    text = ud_table_tagged.build(tmp_path, records, gold, ud_table_tagged.load_peers(path))
    da = [line for line in text.splitlines() if line.startswith("| da_ddt |")]
    assert da[2].endswith("| 75.00 / - | missed: UFeats; not compared: o2-eisner LAS |")
    assert [line for line in text.splitlines() if line.startswith("| en_ewt |")][2] == \
        "| en_ewt | 95.50 / - | 94.00 / - | 94.25 / - | 96.00 / - | - / - | - |"
    assert ud_table_tagged.load_peers(tmp_path / "none.json") is None
    path.write_text(json.dumps({"treebanks": {"da_ddt": {"tags": {"UPOS": 95.0}}}}))
    with pytest.raises(ValueError, match=f"{path}: treebank da_ddt"):
        ud_table_tagged.load_peers(path)


def _neural(treebank: str, uas: float, las: float, **extra: object) -> dict:
    """A finished record of the ud-neural grid."""
    return {"config": "neural-o1", "treebank": treebank, "status": "ok", "tags": "predicted",
            "uas": uas, "las": las, "upos": 94.5, "tokens_per_second": 1500.0,
            "train_seconds": 600.0, "best_epoch": 17, **extra}


def test_ud_table_neural_rows_margins_count_and_speeds(tmp_path: Path) -> None:
    import ud_table_neural

    tagged = [_tagged("tagger", "da_ddt", upos=91.82),
              _tagged("o2-eisner-tagged", "da_ddt", uas=72.5, las=66.9),
              _tagged("o1-cle-tagged", "da_ddt", uas=71.39, las=65.88),
              _tagged("o2-eisner-tagged", "sv_talbanken", uas=74.89, las=67.35),
              _tagged("o2-eisner-tagged", "zh_gsd", uas=63.3, las=55.05),
              {"config": "o2-eisner-tagged", "treebank": "tr_imst", "status": "failed"}]
    records = [_neural("da_ddt", 80.0, 75.25),  # above
               _neural("sv_talbanken", 70.0, 67.35, stale=True),  # a tie is not above
               _neural("tr_imst", 70.0, 62.0),  # its o2-eisner-tagged cell failed
               {"config": "neural-o1", "treebank": "zh_gsd", "status": "failed"}]
    text = ud_table_neural.build(tmp_path / "neural", records, tagged, tmp_path / "tagged")
    rows = {line.split(" | ")[0][2:]: line for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| treebank")}
    lines = [line for line in text.splitlines() if line.startswith("| da_ddt |")]
    assert lines[0] == ("| da_ddt | 80.00 / 75.25 | 72.50 / 66.90 | 71.39 / 65.88 | "
                        "94.50 / 91.82 | +8.35 | yes |")
    assert [line for line in text.splitlines() if line.startswith("| sv_talbanken |")][0] == \
        "| sv_talbanken | 70.00 / 67.35* | 74.89 / 67.35 | - | 94.50 / - | +0.00 | no |"
    assert "| zh_gsd | - | 63.30 / 55.05 | - | - / - | - | - |" in text
    assert "| tr_imst | 70.00 / 62.00 | - | - | 94.50 / - | - | - |" in text
    assert "| en_ewt | - | - | - | - / - | - | - |" in text  # every treebank has its row
    assert len(rows) == 14
    uncompared = ", ".join(tb for tb in rows if tb not in ("da_ddt", "sv_talbanken"))
    assert (f"neural LAS above o2-eisner-tagged on 1 of 2 treebanks with both; not compared "
            f"(12, a cell missing): {uncompared}. Target (issue 48): at least 11 treebanks: "
            "not met yet (10 more needed among the treebanks not compared).") in text
    # speeds: the neural cell's 1,500 tok/s against o2-eisner-tagged's 2,000; its best epoch
    assert lines[1] == ("| da_ddt | 1,500 (0.75x), 600 s | 2,000, 60 s | 2,000, 60 s | 17 |")
    assert "| zh_gsd | - | 2,000, 60 s | - | - |" in text
    # without the tagged grid nothing is compared, and nothing counted as met
    alone = ud_table_neural.build(tmp_path / "neural", records, [])
    assert "no ud-tagged grid given" in alone
    assert "above o2-eisner-tagged on 0 of 0 treebanks with both; not compared (14" in alone


def test_ud_table_neural_verdict_against_the_target() -> None:
    from ud_table_neural import verdict

    assert verdict(11, 14, []).endswith("at least 11 treebanks: met.")
    assert verdict(11, 12, ["a", "b"]).endswith("met.")  # enough above, whatever the rest
    assert verdict(10, 14, []).endswith("missed.")
    assert verdict(8, 12, ["a", "b"]).endswith("missed.")  # 8 + 2 < 11
    assert verdict(9, 12, ["a", "b"]).endswith("not met yet (2 more needed among the "
                                               "treebanks not compared).")
