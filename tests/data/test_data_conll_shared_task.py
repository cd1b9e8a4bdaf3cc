"""CoNLL 2006/2007 layout: file discovery, 2006 precedence, deterministic dev and mini samples."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA

from dparse.cli.data import data as data_cli
from dparse.conll import read_conll
from dparse.data import conll_shared_task as cst
from dparse.errors import DparseError

NLTK = DATA / "conll2007_nltk"
needs_nltk = pytest.mark.skipif(not NLTK.is_dir(), reason="conll2007_nltk not found")


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def write_treebank(path: Path, n: int, tag: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"1\t{tag}{i}\t_\tN\tN\t_\t0\tROOT\t_\t_\n\n" for i in range(n)))


def test_sample_is_pinned_sorted_and_distinct() -> None:
    assert cst.sample(10, 3, "2016:test:dev") == [1, 4, 5]
    picks = cst.sample(1000, 500, "k")
    assert picks == sorted(set(picks)) and len(picks) == 500
    assert cst.sample(1000, 500, "other") != picks
    with pytest.raises(DparseError):
        cst.sample(3, 4, "k")


@needs_nltk
def test_conll_layout_nltk_is_deterministic_and_complete(tmp_path: Path) -> None:
    sources = cst.select_sources({"2006": None, "2007": NLTK})
    assert [(s.language, s.year) for s in sources] == [("basque", "2007"), ("spanish", "2007")]
    cst.layout(sources, tmp_path / "a")
    cst.layout(sources, tmp_path / "b")
    a, b = tree_digest(tmp_path / "a"), tree_digest(tmp_path / "b")
    assert a == b
    assert len(a) == 1 + 2 * (2 + 20)  # manifest; per language train, test and 20 mini sets
    for lang, n_train in (("basque", 2595), ("spanish", 2949)):
        lang_dir = tmp_path / "a" / lang
        train = list(read_conll(lang_dir / "train.conll"))
        assert len(train) == n_train
        assert not (lang_dir / "dev.conll").exists()  # fewer than 10,000 training sentences
        mini = [list(read_conll(lang_dir / "mini" / f"train-{k:02d}.conll")) for k in range(20)]
        assert all(len(m) == 500 for m in mini)
        keys = {s.to_conll() for s in train}
        assert all(s.to_conll() in keys for s in mini[0])
        assert mini[0][0].to_conll() != mini[1][0].to_conll()
    # Basque is re-encoded from ISO-8859-1 to UTF-8, otherwise verbatim
    source = (NLTK / "eus.train").read_bytes().decode("iso-8859-1")
    assert (tmp_path / "a" / "basque" / "train.conll").read_text(encoding="utf-8") == source
    # esp.test lacks its final blank line; the laid-out file has it
    assert (tmp_path / "a" / "spanish" / "test.conll").read_bytes().endswith(b"\n\n")


@needs_nltk
def test_conll_layout_dev_split_partitions_train(tmp_path: Path) -> None:
    (source,) = cst.select_sources({"2007": NLTK}, ["spanish"])
    cst.layout_language(source, tmp_path, dev_size=100, dev_min_train=2000, mini_sets=2,
                        mini_size=50)
    lang_dir = tmp_path / "spanish"
    train = [s.to_conll() for s in read_conll(lang_dir / "train.conll")]
    dev = [s.to_conll() for s in read_conll(lang_dir / "dev.conll")]
    rest = [s.to_conll() for s in read_conll(lang_dir / "train-nodev.conll")]
    assert len(dev) == 100 and len(rest) == len(train) - 100
    assert sorted(dev + rest) == sorted(train)
    assert sorted(p.name for p in (lang_dir / "mini").iterdir()) == ["train-00.conll",
                                                                    "train-01.conll"]


def test_find_sources_official_names_and_2006_precedence(tmp_path: Path) -> None:
    d06, d07 = tmp_path / "conll06", tmp_path / "conll07"
    write_treebank(d06 / "data/czech/pdt/train/czech_pdt_train.conll", 5, "a")
    write_treebank(d06 / "data/czech/pdt/test/czech_pdt_test.conll", 2, "b")
    write_treebank(d06 / "data/czech/pdt/test/czech_pdt_test_blind.conll", 2, "x")
    write_treebank(d07 / "data/czech/train/czech.train.conll", 5, "c")
    write_treebank(d07 / "data/czech/test/czech.test.conll", 2, "d")
    write_treebank(d07 / "data/catalan/catalan_train.conll", 5, "e")
    write_treebank(d07 / "data/catalan/catalan_test.conll", 2, "f")
    (d07 / "README").write_text("the train and test files\n")
    sources = cst.select_sources({"2006": d06, "2007": d07})
    assert [(s.language, s.year) for s in sources] == [("catalan", "2007"), ("czech", "2006")]
    assert sources[1].files["train"].name == "czech_pdt_train.conll"
    assert sources[1].files["test"].name == "czech_pdt_test.conll"
    with pytest.raises(DparseError, match="no shared-task files found for greek"):
        cst.select_sources({"2007": d07}, ["greek"])
    write_treebank(d07 / "data/catalan/cat.train", 5, "g")
    with pytest.raises(DparseError, match="two catalan train files"):
        cst.select_sources({"2007": d07})


@needs_nltk
def test_conll_layout_cli(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(data_cli, ["conll-layout", "--conll2007", str(NLTK), "-o",
                                           str(out), "-l", "basque", "--seed", "7", "-q"])
    assert result.exit_code == 0, result.output
    assert "basque (2007): 2595 train sentences" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["basque", "manifest.json"]
    assert '"seed": 7' in (out / "manifest.json").read_text()
