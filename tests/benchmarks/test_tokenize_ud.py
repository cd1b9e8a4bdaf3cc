"""benchmarks/tokenize_ud.py: the treebanks it takes and the table it writes, on a miniature data
root."""

from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path

from conftest import DATA, requires_data
from paths import REPO

from dparse.conll import read_conll, write_conll

sys.path.insert(0, str(REPO / "benchmarks"))
import tokenize_ud  # noqa: E402


@requires_data
def test_a_miniature_treebank_is_trained_scored_and_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for name, files in (("en_ewt", ("train", "dev", "test")), ("de_gsd", ("dev", "test"))):
        (root / name).mkdir(parents=True)
        for split in files:
            write_conll(islice(read_conll(DATA / name / f"{split}.conllu"), 150),
                        root / name / f"{split}.conllu")
    (root / "notext").mkdir()
    (root / "notext" / "test.conllu").write_text("1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n\n",
                                                 encoding="utf-8")
    assert tokenize_ud.treebanks(root) == ["en_ewt", "de_gsd"]
    rows = [tokenize_ud.run(name, root, tmp_path / "models", rounds=1)
            for name in ("en_ewt", "de_gsd")]
    assert rows[0]["train"] == "train.conllu" and rows[1]["train"] == "dev.conllu"
    assert all(r["exact"] and 90 < r["tokens"] <= 100 for r in rows)
    assert rows[1]["multiword"] > 0
    table = tokenize_ud.table(rows, "abc1234", 1)
    assert "| en_ewt | train.conllu |" in table and "2 of 2 test files rebuilt exactly" in table
