"""benchmarks/constraints_table.py: the fixed arcs it draws and the table it writes, on a tiny
model."""

from __future__ import annotations

import shutil
import sys
from itertools import islice
from pathlib import Path

import numpy as np
from conftest import DATA, requires_data
from paths import REPO

from dparse.conll import read_conll, write_conll
from dparse.constraints import sentence_constraints

sys.path.insert(0, str(REPO / "benchmarks"))
import constraints_table  # noqa: E402


@requires_data
def test_projective_draws_stay_possible_and_shares_hold() -> None:
    gold = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 300))
    rng = np.random.default_rng(0)
    fixed = total = 0
    for s in gold:
        p = constraints_table.partial(s, 0.5, True, rng)
        sentence_constraints(p, True).check(True, True, "eisner")  # raises if impossible
        kept = np.flatnonzero(p.heads >= 0)
        assert (p.heads[kept] == s.heads[kept]).all()
        assert all(p.deprels[m] == s.deprels[m] for m in kept)
        fixed += len(kept)
        total += len(s)
    assert 0.45 <= fixed / total <= 0.5


@requires_data
def test_the_table_scores_free_arcs_of_each_model(tiny_first_order: Path, tmp_path: Path,
                                                  monkeypatch) -> None:
    models = tmp_path / "models"
    shutil.copytree(tiny_first_order / "model", models / "en_ewt-o1-cle")
    test = tmp_path / "test.conllu"
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 30), test)
    out = tmp_path / "constraints.md"
    monkeypatch.setattr(sys, "argv", ["constraints_table.py", "--test", str(test), "--models",
                                      str(models), "--out", str(out), "--limit-model",
                                      "en_ewt-o1-cle=20"])
    constraints_table.main()
    rows = [line for line in out.read_text().splitlines() if line.startswith("| en_ewt-")]
    assert [row.split(" | ")[3] for row in rows] == ["0%", "10%", "30%", "50%"]
    assert all(row.split(" | ")[1:3] == ["cle", "20"] for row in rows)
    # at 0% nothing is fixed: every word is free and the scores do not move
    assert rows[0].split(" | ")[4] == "0.0%" and "(+0.00)" in rows[0].split(" | ")[6]
