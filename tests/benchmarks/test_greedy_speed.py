"""benchmarks/greedy_speed.py: system specs, and an alternated run on a tiny first-order model
parsed with two decoders (the reference's ratio is 1, each round pairs the systems)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest
from paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from greedy_speed import main, parse_system  # noqa: E402


def test_system_specs() -> None:
    system = parse_system("b2=models/x@decoder.options.beam=2@decoder.single_root=false")
    assert (system.name, system.model, system.overrides) == (
        "b2", Path("models/x"), ["decoder.options.beam=2", "decoder.single_root=false"])
    assert parse_system("dd=m").overrides == []
    with pytest.raises(argparse.ArgumentTypeError):
        parse_system("models/x")


def test_alternated_run(tiny_first_order: Path, tmp_path: Path) -> None:
    out = tmp_path / "speed.md"
    model = tiny_first_order / "model"
    main(["--test", str(tiny_first_order / "dev.conllu"), "--rounds", "2", "--out", str(out),
          "--system", f"cle={model}", "--system", f"bgi={model}@decoder.name=bgi-pp"])
    record = json.loads(out.with_suffix(".json").read_text())
    cle, bgi = record["systems"]
    assert record["reference"] == "cle" and cle["ratios"] == [1.0, 1.0]
    assert len(bgi["runs"]) == 2 and all(r["decoder"] == "bgi-pp" for r in bgi["runs"])
    assert bgi["ratios"] == [b["tokens_per_second"] / c["tokens_per_second"]
                             for b, c in zip(bgi["runs"], cle["runs"], strict=True)]
    assert 0 < cle["uas"] <= 100 and 0 < bgi["uas"] <= 100
    assert "| bgi | decoder.name=bgi-pp |" in out.read_text()
