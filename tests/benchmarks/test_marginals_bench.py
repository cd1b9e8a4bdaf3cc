"""benchmarks/marginals_bench.py on the tiny first-order model: a fitted temperature, the ECE
before and after it, and the alternated timing, in one Markdown table."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from marginals_bench import main  # noqa: E402


def test_the_table_holds_a_row_per_model(tiny_first_order: Path, tmp_path: Path) -> None:
    out = tmp_path / "marginals.md"
    dev = str(tiny_first_order / "dev.conllu")
    main(["--models", str(tiny_first_order / "model"), "--dev", dev, "--test", dev,
          "--rounds", "1", "--out", str(out), "--plot", str(tmp_path / "r.svg")])
    text = out.read_text()
    assert "ECE" in (tmp_path / "r.svg").read_text() and "(r.svg)" in text
    row = re.search(r"^\| model \| cle \| arcs, all trees \| (\d+\.\d+) \| [\d.]+ \| .* \| "
                    r"(\d+\.\d+)% \| (\d+\.\d+)% \| "
                    r"[\d.]+ \([\d.]+\) \| [\d.]+ \([\d.]+\) \| [\d.]+x \([\d.]+x\) \|$",
                    text, re.MULTILINE)
    assert row is not None, text
    assert float(row.group(1)) > 0 and all(0 <= float(row.group(k)) <= 100 for k in (2, 3))
    assert text.count("| 0.9-1.0 |") == 1  # the reliability table
    assert str(tiny_first_order) not in text  # no machine's path in results/
