"""dparse.constraints: reading constraints from sentences, forbid files and MISC, and the
errors that name the file, line and sentence. (Decoding under constraints:
tests/graph/test_constrained.py; the command: tests/cli/test_cli_constraints.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dparse.conll import Sentence
from dparse.constraints import ConstraintSource, read_forbid_file, sent_id
from dparse.errors import DparseError, InputError


def sentences() -> list[Sentence]:
    return [Sentence.build(["a", "b", "c"], comments=["# sent_id = one"]),
            Sentence.build(["d", "e"]),
            Sentence.build(["f", "g"], [-1, 2, 0], ["", "amod", "root"])]


def test_forbid_file_keys_by_sent_id_or_position(tmp_path: Path) -> None:
    path = tmp_path / "forbid.tsv"
    path.write_text("# comment\n\none\t3\t0\none\t1\t2\n2\t2\t1\n", encoding="utf-8")
    source = ConstraintSource.of("keep", path)
    assert source is not None
    got = list(source.pairs(sentences()))
    assert [sent_id(s) for s, _ in got] == ["one", None, None]
    first, second, third = (c for _, c in got)
    assert sorted(zip(*np.nonzero(first.forbidden), strict=True)) == [(0, 3), (2, 1)]
    assert sorted(zip(*np.nonzero(second.forbidden), strict=True)) == [(1, 2)]
    assert third.heads.tolist() == [-1, 2, 0] and third.labels == [None, "amod", "root"]
    assert second.name == "sentence 2" and first.name == "sentence 1 (sent_id one)"


@pytest.mark.parametrize(("text", "message"), [
    ("one\t3\n", ":1: expected SENTENCE<TAB>DEPENDENT<TAB>HEAD"),
    ("one\tx\t0\n", ":1: expected SENTENCE<TAB>DEPENDENT<TAB>HEAD"),
    ("\none\t4\t0\n", ":2: sentence one has words 1..3: no arc 0 -> 4"),
    ("one\t1\t0\n9\t1\t0\n", ":2: no sentence '9'"),
])
def test_bad_forbid_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "forbid.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        source = ConstraintSource.of(None, path)
        assert source is not None
        list(source.pairs(sentences()))


def test_unreadable_forbid_file_and_unknown_mode(tmp_path: Path) -> None:
    with pytest.raises(DparseError, match="cannot read the forbid file"):
        read_forbid_file(tmp_path / "missing.tsv")
    with pytest.raises(DparseError, match="expected one of keep, misc"):
        ConstraintSource.of("fix", None)
