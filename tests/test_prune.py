"""dparse.prune (length dictionary, top-k heads) and ``dparse prune``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from dparse.cli import cli
from dparse.conll import Sentence, write_conll
from dparse.errors import DparseError
from dparse.prune import LengthDictionary, TopKHeads, prune_stats, undirected_edges


def sent(heads: list[int], upos: list[str], xpos: list[str] | None = None) -> Sentence:
    n = len(upos)
    return Sentence.build([f"w{i}" for i in range(1, n + 1)], heads=[-1, *heads],
                          deprels=["", *["dep"] * n], upos=upos, xpos=xpos or upos)


TRAIN = [
    sent([2, 0, 2], ["DET", "NOUN", "ADJ"]),          # NOUN -> DET left 1, NOUN -> ADJ right 1
    sent([3, 3, 0, 3], ["DET", "ADJ", "NOUN", "ADV"]),  # NOUN -> DET left 2
]


def test_prune_learn_longest_arc_per_pair() -> None:
    d = LengthDictionary.learn(TRAIN, column="upos")
    assert d.lengths[("NOUN", "DET", "L")] == (2, 2)
    assert d.lengths[("NOUN", "ADJ", "R")] == (1, 1)
    assert d.lengths[("<ROOT>", "NOUN", "R")] == (3, 2)
    assert d.max_length == {"L": 2, "R": 3}


def test_prune_unseen_pairs_back_off_to_upos_then_to_the_longest_arc() -> None:
    train = [sent([2, 0], ["DET", "NOUN"], ["DT", "NN"])]
    d = LengthDictionary.learn(train, column="xpos")
    assert d.limit("NN", "DT", "NOUN", "DET", "L") == 1
    assert d.limit("NNS", "DT", "NOUN", "DET", "L") == 1  # unseen xpos pair: upos pair
    assert d.limit("VB", "RB", "VERB", "ADV", "L") == 1  # unseen everywhere: longest L arc
    assert d.limit("VB", "RB", "VERB", "ADV", "R") == 2  # the root arc 0 -> 2


def test_prune_min_count_and_quantile() -> None:
    train = [sent([2, 0], ["DET", "NOUN"], ["DT", "NN"])] * 3 + [
        sent([3, 3, 0], ["DET", "ADJ", "NOUN"], ["DT", "JJ", "NN"])]
    d = LengthDictionary.learn(train, column="xpos", min_count=5)
    assert d.limit("NN", "DT", "NOUN", "DET", "L") == 2  # seen 4 times: upos pair
    q = LengthDictionary.learn(train, column="xpos", quantile=0.5)
    assert q.lengths[("NN", "DT", "L")] == (1, 4)
    with pytest.raises(ValueError, match="quantile"):
        LengthDictionary.learn(train, quantile=0.0)


def test_prune_auto_column_uses_upos_without_xpos() -> None:
    assert LengthDictionary.learn([sent([0], ["NOUN"], ["_"])]).column == "upos"
    assert LengthDictionary.learn([sent([0], ["NOUN"], ["NN"])]).column == "xpos"


def test_prune_allowed_and_undirected_edges() -> None:
    d = LengthDictionary.learn(TRAIN, column="upos")
    s = sent([2, 0, 2, 2, 2], ["DET", "NOUN", "ADJ", "ADJ", "DET"])
    ok = d.allowed(s)
    assert ok.shape == (6, 6) and not ok[:, 0].any() and not ok.diagonal().any()
    assert ok[2, 1] and ok[2, 3] and not ok[2, 4]  # NOUN -> ADJ right: at most 1
    assert ok[2, 5]  # NOUN -> DET right: unseen pair, backs off to the longest right arc, 3
    assert not ok[5, 1]  # DET -> DET left, distance 4 > the longest left arc, 2
    i, j = undirected_edges(ok)
    assert np.all(i < j)
    assert set(zip(i.tolist(), j.tolist(), strict=True)) == {
        (a, b) for a in range(6) for b in range(a + 1, 6) if ok[a, b] or ok[b, a]}


def test_prune_save_load_roundtrip(tmp_path) -> None:
    d = LengthDictionary.learn(TRAIN, column="upos", min_count=2, quantile=0.9)
    d.save(tmp_path / "d.json")
    e = LengthDictionary.load(tmp_path / "d.json")
    assert e == d
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(DparseError, match="length-dictionary"):
        LengthDictionary.load(tmp_path / "bad.json")


def test_prune_stats_counts() -> None:
    d = LengthDictionary.learn(TRAIN, column="upos")
    st = prune_stats(d, TRAIN)
    assert st.gold_kept_pct == 100.0 and st.gold == 7
    assert st.edges == 3 * 4 // 2 + 4 * 5 // 2
    assert 0 <= st.edges_removed_pct < 100


class _Model:
    """A stand-in first-order model: scores favour the arc m-1 -> m."""

    class vocab:  # noqa: N801
        @staticmethod
        def encode(s: Sentence) -> Sentence:
            return s

    def score(self, s: Sentence):
        n = len(s)
        arc = -np.abs(np.subtract.outer(np.arange(n + 1), np.arange(n + 1)) + 1.0)
        return arc, None


def test_prune_top_k_heads() -> None:
    ok = TopKHeads(_Model(), k=2).allowed(sent([0, 1, 2, 3], ["X"] * 4))
    assert ok[:, 1:].sum(axis=0).tolist() == [2, 2, 2, 2]
    assert all(ok[m - 1, m] for m in range(1, 5))


def test_prune_cli(tmp_path) -> None:
    train = tmp_path / "train.conllu"
    write_conll(TRAIN, str(train))
    runner = CliRunner()
    out = tmp_path / "d.json"
    res = runner.invoke(cli, ["prune", "learn", str(train), "-o", str(out), "--column", "upos"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["prune", "eval", str(train), "--dictionary", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["gold_kept_pct"] == 100.0
    res = runner.invoke(cli, ["prune", "eval", str(train)])
    assert res.exit_code == 2
    res = runner.invoke(cli, ["prune", "learn", str(tmp_path / "missing"), "-o", str(out)])
    assert res.exit_code == 2


def test_prune_learning_without_gold_arcs_is_an_error() -> None:
    """A dictionary learnt from no arc would prune every arc: refused, naming the file."""
    with pytest.raises(DparseError, match="no gold arcs"):
        LengthDictionary.learn([])
    no_heads = Sentence.build(["a", "b"], upos=["X", "Y"])
    no_heads.source = "t.conllu"
    with pytest.raises(DparseError, match=r"^t\.conllu: no gold arcs"):
        LengthDictionary.learn([no_heads])


def test_prune_stats_over_zero_items_are_not_applicable() -> None:
    d = LengthDictionary.learn([sent([0, 1], ["X", "Y"])])
    empty = prune_stats(d, [])
    assert empty.as_dict()["edges_removed_pct"] is None and empty.gold_kept_pct is None
    no_heads = prune_stats(d, [Sentence.build(["a"], upos=["X"])])
    assert no_heads.edges_removed_pct is not None and no_heads.gold_kept_pct is None
