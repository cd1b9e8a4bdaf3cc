"""dparse.metrics and dparse.punct: hand-made trees, and agreement with independent scorers on
real treebanks with perturbed system outputs (a naive reference below, and udapi's eval.Parsing)."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from dparse.conll import Sentence, read_treebank
from dparse.errors import InputError
from dparse.metrics import evaluate, format_table
from dparse.punct import PUNCT_RULES, excluded, is_punct_form

RULES = list(PUNCT_RULES)

# -- hand-made trees ---------------------------------------------------------------------------


def _sent(form, heads, rels, upos=None, xpos=None) -> Sentence:
    return Sentence.build(form, heads=[-1, *heads], deprels=["", *rels], upos=upos, xpos=xpos)


def _gold() -> list[Sentence]:
    return [
        _sent(
            ["The", "dog", "barks", "."],
            [2, 3, 0, 3],
            ["det", "nsubj", "root", "punct"],
            ["DET", "NOUN", "VERB", "PUNCT"],
            ["DT", "NN", "VBZ", "."],
        ),
        _sent(["Hi", "there"], [0, 1], ["root", "advmod"], ["INTJ", "ADV"], ["UH", "RB"]),
    ]


def _system() -> list[Sentence]:
    return [
        _sent(["The", "dog", "barks", "."], [2, 3, 0, 2], ["det", "nsubj:pass", "root", "punct"]),
        _sent(["Hi", "there"], [2, 0], ["dep", "root"]),
    ]


def _other() -> list[Sentence]:
    return [
        _sent(["The", "dog", "barks", "."], [2, 3, 0, 3], ["det", "nsubj", "root", "punct"]),
        _sent(["Hi", "there"], [0, 0], ["root", "dep"]),
    ]


def test_metrics_tiny_trees_include_punct() -> None:
    r = evaluate(_gold(), _system())
    assert (r.sentences, r.tokens, r.scored, r.excluded) == (2, 6, 6, 0)
    assert r.uas == pytest.approx(50.0)
    assert r.las == pytest.approx(100 * 2 / 6)
    assert r.las_universal == pytest.approx(50.0)  # nsubj:pass counts as nsubj
    assert r.u_uas == pytest.approx(100 * 4 / 6)  # 'Hi' <- 'there' is gold 'Hi' -> 'there'
    assert (r.root_accuracy, r.root_tokens) == (pytest.approx(50.0), 2)
    assert r.complete_match == 0.0 and r.labeled_complete_match == 0.0
    assert r.sarc is None and r.gold_xy is None and r.per_label is None


@pytest.mark.parametrize("rule", ["conll", "ptb", "upos"])
def test_metrics_tiny_trees_without_punct(rule: str) -> None:
    r = evaluate(_gold(), _system(), punct=rule)
    assert (r.tokens, r.scored, r.excluded, r.punct) == (6, 5, 1, rule)
    assert r.uas == pytest.approx(60.0) and r.las == pytest.approx(40.0)
    assert r.las_universal == pytest.approx(60.0) and r.u_uas == pytest.approx(80.0)
    assert r.root_accuracy == pytest.approx(50.0)
    assert r.complete_match == pytest.approx(50.0) and r.labeled_complete_match == 0.0


def test_metrics_tiny_trees_other_system() -> None:
    r = evaluate(_gold(), _system(), other=_other())
    assert r.sarc == pytest.approx(100 * 4 / 6)
    assert r.gold_xy == (pytest.approx(0.0), pytest.approx(100 * 2 / 6))
    r = evaluate(_gold(), _other(), other=_system())
    assert r.gold_xy == (pytest.approx(100 * 2 / 6), pytest.approx(0.0))
    assert evaluate(_gold(), _gold(), other=_gold()).sarc == 100.0


def test_metrics_tiny_trees_detail() -> None:
    r = evaluate(_gold(), _system(), detail=True)
    assert list(r.per_label) == ["root", "advmod", "det", "nsubj", "punct"]
    root = r.per_label["root"]
    assert (root.count, root.uas, root.las) == (2, 50.0, 50.0)
    assert (root.precision, root.recall, root.f1) == (50.0, 50.0, 50.0)
    nsubj = r.per_label["nsubj"]
    # the system never labels a token nsubj: precision over zero items is n/a, recall 0, F1 0
    assert (nsubj.count, nsubj.uas, nsubj.las, nsubj.precision, nsubj.recall, nsubj.f1) == (
        1, 100, 0, None, 0, 0)
    assert r.per_label["det"].f1 == 100.0
    d = r.per_distance
    assert list(d) == ["root", "1", "2", "3-6", "7+"]
    assert (d["root"].count, d["root"].uas) == (2, 50.0)
    assert (d["1"].count, d["1"].uas, d["1"].las) == (4, 50.0, 25.0)
    assert d["7+"].count == 0 and d["7+"].uas is None and d["7+"].las is None
    table = format_table(r)
    assert "Per gold DEPREL" in table and "3-6" in table
    assert re.search(r"^nsubj\s+1\s+100\.00\s+0\.00\s+n/a\s+0\.00\s+0\.00$", table, re.M)
    assert re.search(r"^7\+\s+0\s+n/a\s+n/a$", table, re.M)


def test_metrics_perfect_and_empty() -> None:
    r = evaluate(_gold(), _gold(), punct="conll")
    assert r.uas == r.las == r.u_uas == r.root_accuracy == r.complete_match == 100.0
    empty = evaluate([], [])
    assert (empty.tokens, empty.uas, empty.complete_match) == (0, None, None)


def test_metrics_scores_over_zero_items_are_not_applicable() -> None:
    """Every token punctuation under the CoNLL-X rule: no score is 0 or 100, all are n/a
    (None, null in JSON); the same for root accuracy without gold root words."""
    gold = [_sent([".", ","], [0, 1], ["root", "punct"]), _sent(["!"], [0], ["root"])]
    system = [_sent([".", ","], [2, 0], ["x", "root"]), _sent(["!"], [0], ["root"])]
    r = evaluate(gold, system, punct="conll", other=system, detail=True)
    assert (r.tokens, r.scored, r.root_tokens) == (3, 0, 0)
    measures = ("uas", "las", "las_universal", "u_uas", "root_accuracy", "complete_match",
                "labeled_complete_match", "sarc")
    assert all(getattr(r, name) is None for name in measures) and r.gold_xy == (None, None)
    assert r.per_label == {} and all(d.uas is None for d in r.per_distance.values())
    data = json.loads(json.dumps(r.as_dict()))
    assert all(data[name] is None for name in measures) and data["gold_xy"] == [None, None]
    table = format_table(r)
    assert "0.00" not in table and "100.00" not in table
    assert re.search(r"^UAS\s+n/a$", table, re.M)
    assert re.search(r"^Root accuracy\s+n/a  \(of 0 gold root words\)$", table, re.M)
    assert "(n/a, n/a)" in table
    # no gold root word scored (punctuation roots), other tokens scored: only root accuracy n/a
    gold = [_sent(["a", "."], [2, 0], ["dep", "root"])]
    r = evaluate(gold, [_sent(["a", "."], [0, 1], ["root", "dep"])], punct="conll")
    assert (r.scored, r.uas, r.root_accuracy, r.complete_match) == (1, 0.0, None, 0.0)


def test_metrics_gold_without_heads_is_not_scored() -> None:
    gold = [Sentence.build(["a", "b"])]
    r = evaluate(gold, [_sent(["a", "b"], [0, 1], ["root", "x"])])
    assert (r.tokens, r.scored, r.uas) == (2, 0, None)


def test_metrics_format_table_names_the_rule() -> None:
    table = format_table(evaluate(_gold(), _system(), punct="ptb", other=_other()))
    assert table.splitlines()[0].startswith("Punctuation")
    assert "ptb" in table.splitlines()[0] and "PTB rule" in table
    assert "SARC" in table and "gold(system, other)" in table
    assert re.search(r"^UAS\s+60\.00$", table, re.M)


def test_metrics_as_dict_is_plain() -> None:
    d = evaluate(_gold(), _system(), other=_other(), detail=True).as_dict()
    assert d["punct"] == "include" and d["excluded"] == 0 and "punct_rule" in d
    assert d["per_label"]["root"]["count"] == 2 and isinstance(d["gold_xy"], list)


def test_metrics_misaligned_input_is_an_input_error(tmp_path: Path) -> None:
    gold = tmp_path / "gold.conllu"
    gold.write_text(_gold()[0].to_conll() + _gold()[1].to_conll())
    sys_path = tmp_path / "sys.conllu"
    short = _sent(["Hi"], [0], ["root"])
    sys_path.write_text(_system()[0].to_conll() + short.to_conll())
    with pytest.raises(InputError) as err:
        evaluate(read_treebank(gold), read_treebank(sys_path))
    assert err.value.path == str(sys_path) and err.value.line == 6
    assert "sentence 2 has 1 words" in err.value.problem and f"{gold}:6" in err.value.problem

    other_word = _sent(["Hi", "here"], [0, 1], ["root", "x"])
    sys_path.write_text(_system()[0].to_conll() + other_word.to_conll())
    with pytest.raises(InputError) as err:
        evaluate(read_treebank(gold), read_treebank(sys_path))
    assert err.value.line == 7 and "word 2 is 'here'" in err.value.problem

    sys_path.write_text(_system()[0].to_conll())
    with pytest.raises(InputError, match="1 sentences but gold"):
        evaluate(read_treebank(gold), read_treebank(sys_path))
    with pytest.raises(InputError, match="other system"):
        evaluate(read_treebank(gold), read_treebank(gold), other=read_treebank(sys_path))


def test_metrics_unknown_rule() -> None:
    with pytest.raises(ValueError, match="punctuation rule"):
        evaluate(_gold(), _gold(), punct="none")


@pytest.mark.parametrize(
    ("form", "punct"),
    [
        (".", True),
        ("...", True),
        ("«", True),
        ("--", True),
        ("-LRB-", False),
        ("$", False),
        ("%", True),
        ("+", False),
        ("a.", False),
        ("", False),
        ("¿", True),
        ("、", True),
    ],
)
def test_punct_conll_rule_is_unicode_punctuation_only(form: str, punct: bool) -> None:
    assert is_punct_form(form) is punct


def test_punct_rules_decide_on_columns() -> None:
    sent = _sent(
        ["``", "$", "(", ",", "."],
        [0, 1, 1, 1, 1],
        ["a"] * 5,
        upos=["PUNCT", "SYM", "PUNCT", "PUNCT", "PUNCT"],
        xpos=["``", "$", "-LRB-", ",", "."],
    )
    assert excluded(sent, "include").tolist() == [False] * 5
    assert excluded(sent, "conll").tolist() == [False, False, True, True, True]
    assert excluded(sent, "ptb").tolist() == [True, False, False, True, True]
    assert excluded(sent, "upos").tolist() == [True, False, True, True, True]


# -- independent scorers on real data ----------------------------------------------------------


def _perturb(src: Path, dst: Path, seed: int, rate: float = 0.15, encoding: str = "utf-8") -> None:
    """Copy a treebank, re-attaching ``rate`` of the words to a random non-descendant (the
    output stays a tree) and relabeling some, by editing raw lines (no dparse code)."""
    rng = random.Random(seed)
    text = src.read_text(encoding=encoding)
    hcol = 2 if src.suffix == ".dp" else 6
    out = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        word_rows = [
            i
            for i, line in enumerate(lines)
            if "\t" in line and (hcol == 2 or line.split("\t")[0].isdigit())
        ]
        cols = [lines[i].split("\t") for i in word_rows]
        heads = [0] + [int(c[hcol]) for c in cols]
        for m in range(1, len(heads)):
            if rng.random() < rate:
                below = {m}
                changed = True
                while changed:
                    changed = False
                    for d in range(1, len(heads)):
                        if d not in below and heads[d] in below:
                            below.add(d)
                            changed = True
                heads[m] = rng.choice([h for h in range(len(heads)) if h not in below])
                cols[m - 1][hcol] = str(heads[m])
            if len(cols[m - 1]) > hcol + 1 and rng.random() < 0.1:
                rel = cols[m - 1][hcol + 1]
                cols[m - 1][hcol + 1] = rel.split(":")[0] if ":" in rel else "dep"
        for i, c in zip(word_rows, cols, strict=True):
            lines[i] = "\t".join(c)
        out.append("\n".join(lines))
    dst.write_text("\n\n".join(out), encoding=encoding)


def _ref_read(path: Path) -> list[list[tuple[str, str, str, int, str]]]:
    """(form, upos, xpos, head, deprel) per word, parsed naively from raw lines."""
    sentences, words = [], []
    for line in path.read_text().split("\n"):
        if not line.strip():
            if words:
                sentences.append(words)
            words = []
            continue
        c = line.split("\t")
        if path.suffix != ".dp":  # CoNLL-X/U: skip comments, multiword tokens, empty nodes
            if c[0].isdigit():
                words.append((c[1], c[3], c[4], int(c[6]), c[7]))
        else:
            words.append((c[0], c[1], c[1], int(c[2]), c[3] if len(c) > 3 else "_"))
    if words:
        sentences.append(words)
    return sentences


def _ref_skip(rule: str, form: str, upos: str, xpos: str) -> bool:
    if rule == "conll":
        return all(unicodedata.category(ch).startswith("P") for ch in form)
    if rule == "ptb":
        return xpos in ("``", "''", ":", ",", ".")
    if rule == "upos":
        return upos == "PUNCT"
    return False


def _ref_score(gold, system, other, rule: str) -> dict[str, float]:
    """A deliberately plain scorer: loops over words, counts, divides."""
    n = head = label = ulabel = undirected = roots = root_hit = 0
    whole = whole_labeled = agree = only_sys = only_other = 0
    for g, s, o in zip(gold, system, other, strict=True):
        errors = labeled_errors = 0
        for m in range(1, len(g) + 1):
            form, upos, xpos, gh, grel = g[m - 1]
            sh, srel = s[m - 1][3], s[m - 1][4]
            oh = o[m - 1][3]
            if _ref_skip(rule, form, upos, xpos):
                continue
            n += 1
            if gh == 0:
                roots += 1
                root_hit += sh == 0
            if sh == gh:
                head += 1
                label += srel == grel
                ulabel += srel.split(":")[0] == grel.split(":")[0]
                undirected += 1
            else:
                errors += 1
                if sh > 0 and g[sh - 1][3] == m:
                    undirected += 1
            if not (sh == gh and srel == grel):
                labeled_errors += 1
            agree += sh == oh
            only_sys += sh == gh and oh != gh
            only_other += oh == gh and sh != gh
        whole += errors == 0
        whole_labeled += labeled_errors == 0

    def pct(a, b):
        return 100.0 * a / b

    return {
        "uas": pct(head, n),
        "las": pct(label, n),
        "las_universal": pct(ulabel, n),
        "u_uas": pct(undirected, n),
        "root_accuracy": pct(root_hit, roots),
        "complete_match": pct(whole, len(gold)),
        "labeled_complete_match": pct(whole_labeled, len(gold)),
        "sarc": pct(agree, n),
        "gold_x": pct(only_sys, n),
        "gold_y": pct(only_other, n),
        "scored": n,
    }


REAL_FILES = ["en_ewt/test.conllu", "conll2007_nltk/esp.test", "ptb_sample/dep/wsj_0118.dp"]


@pytest.mark.parametrize("relpath", REAL_FILES)
def test_metrics_match_naive_reference_on_real_data(
    data: Path, tmp_path: Path, relpath: str
) -> None:
    gold_path = data / relpath
    sys_path, other_path = tmp_path / f"sys{gold_path.suffix}", tmp_path / f"oth{gold_path.suffix}"
    _perturb(gold_path, sys_path, seed=1)
    _perturb(gold_path, other_path, seed=2)
    gold, system, other = (read_treebank(p) for p in (gold_path, sys_path, other_path))
    refs = [_ref_read(p) for p in (gold_path, sys_path, other_path)]
    for rule in RULES:
        ours = evaluate(gold, system, punct=rule, other=other)
        ref = _ref_score(*refs, rule)
        assert ours.scored == ref["scored"], rule
        got = {k: getattr(ours, k) for k in ref if hasattr(ours, k) and k != "scored"}
        got["gold_x"], got["gold_y"] = ours.gold_xy
        for key, value in got.items():
            assert f"{value:.2f}" == f"{ref[key]:.2f}", (rule, key)
        assert 75.0 < ours.uas < 95.0  # the perturbation did change heads


def _udapi_scores(gold: Path, system: Path) -> dict[str, str]:
    """udapi's eval.Parsing block: UAS, LAS (full DEPREL) and LAS (universal part), all tokens."""
    pytest.importorskip("udapi")
    from udapi.block.eval.parsing import Parsing
    from udapi.block.read.conllu import Conllu
    from udapi.core.document import Document

    doc = Document()
    Conllu(files=str(gold), zone="gold").apply_on_document(doc)
    Conllu(files=str(system), zone="pred").apply_on_document(doc)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        block = Parsing(gold_zone="gold")
        block.apply_on_document(doc)
        block.process_end()
    found = dict(
        re.findall(r"^(UAS|LAS \(deprel\)|LAS \(udeprel\))\s*=\s*([\d.]+)$", out.getvalue(), re.M)
    )
    return {
        "uas": found["UAS"],
        "las": found["LAS (deprel)"],
        "las_universal": found["LAS (udeprel)"],
    }


@pytest.mark.parametrize("relpath", ["en_ewt/test.conllu", "tr_imst/test.conllu"])
def test_metrics_match_udapi(data: Path, tmp_path: Path, relpath: str) -> None:
    gold_path = data / relpath
    sys_path = tmp_path / "sys.conllu"
    _perturb(gold_path, sys_path, seed=3)
    theirs = _udapi_scores(gold_path, sys_path)
    ours = evaluate(read_treebank(gold_path), read_treebank(sys_path), punct="include")
    assert {k: f"{getattr(ours, k):.2f}" for k in theirs} == theirs
    assert float(theirs["uas"]) < 95.0


def test_metrics_uas_over_all_of_en_ewt_test(data: Path) -> None:
    """A whole test file with 15% of heads moved to the root: UAS and LAS (labels kept) are the
    share of words whose head is still right, counted here directly."""
    gold = read_treebank(data / "en_ewt" / "test.conllu")
    rng = np.random.default_rng(0)
    system = [
        s.with_parse(np.where(rng.random(len(s) + 1) < 0.15, 0, s.heads), s.deprels) for s in gold
    ]
    right = sum(int((g.heads[1:] == s.heads[1:]).sum()) for g, s in zip(gold, system, strict=True))
    words = sum(len(g) for g in gold)
    result = evaluate(gold, system, punct="include", other=gold, detail=True)
    assert result.uas == pytest.approx(100.0 * right / words)
    assert result.las == pytest.approx(100.0 * right / words)
    assert 80.0 < result.uas < 90.0
