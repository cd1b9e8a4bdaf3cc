"""dparse.oracle (the per-sentence oracle, Table 2 of Levi et al. 2016) and ``dparse oracle``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from dparse.cli import cli
from dparse.conll import Sentence, write_conll
from dparse.errors import InputError
from dparse.oracle import format_kbest_oracle, format_oracle, kbest_lists, kbest_oracle, oracle


def sent(heads: list[int], forms: list[str] | None = None) -> Sentence:
    n = len(heads)
    return Sentence.build(forms or [f"w{i}" for i in range(1, n + 1)], heads=[-1, *heads],
                          deprels=["", *["dep"] * n], upos=["X"] * n)


GOLD = [sent([0, 1, 2]), sent([2, 0]), sent([0, 1, 1, 3])]
A = [sent([0, 1, 1]), sent([2, 0]), sent([0, 1, 1, 1])]  # 2, 2, 3 correct
B = [sent([0, 1, 2]), sent([0, 1]), sent([0, 1, 1, 1])]  # 3, 0, 3 correct


def test_oracle_figures() -> None:
    rep = oracle(GOLD, [A, B], ["A", "B"])
    assert rep.sentences == 3 and rep.scored == 9
    assert rep.uas == pytest.approx([700 / 9, 600 / 9])
    assert rep.oracle_uas == pytest.approx(800 / 9)  # 3 + 2 + 3
    assert rep.better == pytest.approx([100 / 3, 100 / 3])
    assert rep.ties == pytest.approx(100 / 3)
    assert rep.picked == [2, 1]  # the tie goes to the first system
    assert "Oracle" in format_oracle(rep) and "% sentences" in format_oracle(rep)


def test_oracle_three_systems_and_punct() -> None:
    rep = oracle(GOLD, [A, B, GOLD])
    assert rep.oracle_uas == 100.0 and rep.better == [0.0, 0.0, pytest.approx(100 / 3)]
    assert "system3" in format_oracle(rep)
    punct = [sent([0, 1], ["a", "."])]
    rep = oracle(punct, [[sent([0, 0], ["a", "."])], punct], punct="conll")
    assert rep.scored == 1 and rep.uas == [100.0, 100.0]


def test_oracle_rejects_misaligned_and_single_systems() -> None:
    with pytest.raises(InputError):
        oracle(GOLD, [A, B[:2]])
    with pytest.raises(ValueError, match="two systems"):
        oracle(GOLD, [A])


def test_oracle_cli(tmp_path) -> None:
    paths = []
    for name, sents in (("gold", GOLD), ("a", A), ("b", B)):
        paths.append(str(tmp_path / f"{name}.conllu"))
        write_conll(sents, paths[-1])
    runner = CliRunner()
    res = runner.invoke(cli, ["oracle", *paths, "--json", "--names", "A,B"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["oracle_uas"] == pytest.approx(800 / 9)
    res = runner.invoke(cli, ["oracle", *paths])
    assert res.exit_code == 0 and "Oracle" in res.output
    write_conll(B[:2], paths[2])
    bad = subprocess.run([sys.executable, "-m", "dparse", "oracle", *paths],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "sentences" in bad.stderr
    one = subprocess.run([sys.executable, "-m", "dparse", "oracle", *paths[:2]],
                         capture_output=True, text=True)
    assert one.returncode == 2


def test_oracle_over_zero_scored_tokens_is_not_applicable() -> None:
    """Every token punctuation under the CoNLL-X rule: UAS, oracle UAS and its gain are n/a
    (None, null in JSON), never 0 or 100; the sentence-level shares still count."""
    punct = [Sentence.build([".", ","], heads=[-1, 0, 1], deprels=["", "root", "punct"],
                            upos=["PUNCT", "PUNCT"])]
    rep = oracle(punct, [punct, punct], ["A", "B"], punct="conll")
    assert rep.uas == [None, None] and rep.oracle_uas is None and rep.gain is None
    assert rep.ties == 100.0 and json.loads(json.dumps(rep.as_dict()))["oracle_gain"] is None
    table = format_oracle(rep)
    assert "| A | 0.0 | n/a |" in table and "| Oracle | | n/a (n/a) |" in table


# -- the k-best oracle ------------------------------------------------------------------------


def ranked(heads: list[int], rank: int) -> Sentence:
    n = len(heads)
    return Sentence.build([f"w{i}" for i in range(1, n + 1)], heads=[-1, *heads],
                          deprels=["", *["dep"] * n], upos=["X"] * n,
                          comments=["# sent_id = s", f"# kbest = {rank}", "# score = 0"])


def test_kbest_oracle_figures() -> None:
    # sentence 1: 2, 0, 3 correct in its three trees; 2: none in its only tree; 3: 0, 4
    lists = [[ranked([0, 1, 1], 1), ranked([2, 0, 1], 2), ranked([0, 1, 2], 3)],
             [ranked([0, 1], 1)],
             [ranked([2, 0, 2, 2], 1), ranked([0, 1, 1, 3], 2)]]
    flat = [s for trees in lists for s in trees]
    assert [[s.heads.tolist() for s in t] for t in kbest_lists(flat)] == \
        [[s.heads.tolist() for s in t] for t in lists]
    rep = kbest_oracle(GOLD, lists)
    assert rep.k == 3 and rep.trees == 6 and rep.scored == 9 and rep.sentences == 3
    assert rep.uas == pytest.approx([200 / 9, 600 / 9, 700 / 9])
    assert "| 3 | 77.78 |" in format_kbest_oracle(rep)


def test_kbest_lists_refuses_bad_numbering() -> None:
    with pytest.raises(InputError, match="kbest = 2"):
        kbest_lists([ranked([0], 2)])
    with pytest.raises(InputError, match="1 or 2"):
        kbest_lists([ranked([0], 1), ranked([0], 3)])
    with pytest.raises(InputError, match="needs a '# kbest = i' comment"):
        kbest_lists([sent([0])])


def test_kbest_oracle_command(tmp_path) -> None:
    gold, system = tmp_path / "gold.conllu", tmp_path / "kbest.conllu"
    write_conll(GOLD[:2], gold)
    write_conll([ranked([0, 1, 1], 1), ranked([0, 1, 2], 2), ranked([0, 1], 1)], system)
    runner = CliRunner()
    result = runner.invoke(cli, ["oracle", str(gold), str(system), "--kbest", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["uas"] == pytest.approx([40.0, 60.0])  # 2 then 3 of 5
    result = runner.invoke(cli, ["oracle", str(gold), str(system), str(system), "--kbest"])
    assert result.exit_code == 2 and "one SYSTEM" in result.output
    write_conll([ranked([0, 1, 1], 1), ranked([0, 1], 1)], system)
    result = runner.invoke(cli, ["oracle", str(gold), str(system), "--kbest"])
    assert "| 1 | 40.00 |" in result.output
