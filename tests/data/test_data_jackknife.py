"""Jackknife POS tagging through a user-supplied tagger (a tiny fake tagger script here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dparse.cli.data import data as data_cli
from dparse.conll import Sentence, read_conll, write_conll
from dparse.data.jackknife import fold_bounds, jackknife
from dparse.errors import DparseError

# "train" writes the number of training sentences as the model; "tag" tags every word T<count>
TAGGER = """
import sys
sys.path.insert(0, REPO)
from dparse.conll import read_conll, write_conll
if sys.argv[1] == "train":
    open(sys.argv[3], "w").write(str(len(list(read_conll(sys.argv[2])))))
else:
    tag = "T" + open(sys.argv[2]).read()
    sents = list(read_conll(sys.argv[3], fmt="conllx"))
    assert all(set(s.xpos) == {"_"} for s in sents), "gold tags leaked"
    write_conll([type(s).build(s.form, s.heads, s.deprels, upos=["_"] * len(s),
                               xpos=[tag] * len(s), fmt="conllx") for s in sents], sys.argv[4])
""".replace("REPO", repr(str(Path(__file__).resolve().parents[2])))


def corpus(n: int) -> list[Sentence]:
    return [Sentence.build([f"w{i}", "x"], [-1, 0, 1], ["", "ROOT", "dep"], upos=["N", "V"],
                           fmt="conllx") for i in range(n)]


def test_fold_bounds_cover_evenly() -> None:
    assert fold_bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    with pytest.raises(DparseError):
        fold_bounds(3, 4)


def test_jackknife_trains_without_each_fold(tmp_path: Path) -> None:
    script = tmp_path / "tagger.py"
    script.write_text(TAGGER)
    sents = corpus(10)
    tagged = jackknife(sents, f"{sys.executable} {script} train {{train}} {{model}}",
                       f"{sys.executable} {script} tag {{model}} {{input}} {{output}}",
                       tmp_path / "work", folds=3)
    # folds of 3, 3, 4 sentences: the tagger was trained on 7, 7 and 6
    assert [s.xpos[0] for s in tagged] == ["T7"] * 6 + ["T6"] * 4
    assert [s.upos for s in tagged] == [[s.xpos[0]] * 2 for s in tagged]
    assert [s.form for s in tagged] == [s.form for s in sents]
    assert all(list(s.heads) == [-1, 0, 1] and s.deprels[2] == "dep" for s in tagged)


def test_jackknife_cli_and_failing_tagger(tmp_path: Path) -> None:
    script = tmp_path / "tagger.py"
    script.write_text(TAGGER)
    train, out = tmp_path / "train.conll", tmp_path / "out.conll"
    write_conll(corpus(4), train)
    runner = CliRunner()
    result = runner.invoke(data_cli, [
        "jackknife", str(train), "-o", str(out), "--folds", "2", "-q",
        "--train-cmd", f"{sys.executable} {script} train {{train}} {{model}}",
        "--tag-cmd", f"{sys.executable} {script} tag {{model}} {{input}} {{output}}"])
    assert result.exit_code == 0, result.output
    assert [s.xpos for s in read_conll(out)] == [["T2", "T2"]] * 4
    result = runner.invoke(data_cli, ["jackknife", str(train), "-o", str(out), "--folds", "2",
                                      "-q", "--train-cmd", f"{sys.executable} -c 'exit(3)'",
                                      "--tag-cmd", "true"])
    assert isinstance(result.exception, DparseError)
    assert "exited with status 3" in str(result.exception)
