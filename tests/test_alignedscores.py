"""The CoNLL 2018 alignment and its scores (dparse.wordalign, dparse.alignedscores): hand-made
gold and system pairs whose tokens, multiword tokens, words and sentences differ, each count
worked out by hand from the shared task's definitions; with gold's words, the numbers of
``dparse eval``; against the official scorer when DPARSE_CONLL18_EVAL gives its path."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from dparse.alignedscores import ALIGNED_SCORES, score_aligned
from dparse.conll import read_conll_block, read_treebank
from dparse.errors import InputError
from dparse.evaluation import score_system
from dparse.wordalign import SPACE_SEPARATORS, UNALIGNED, align, segment

OFFICIAL = os.environ.get("DPARSE_CONLL18_EVAL")


def _conllu(*sentences: str) -> str:
    """CoNLL-U text from sentences of lines ``ID FORM HEAD DEPREL [UPOS [LEMMA]]`` (a range
    line: ``ID FORM``; an empty node: ``ID FORM``), one line a word, ``;`` between lines."""
    out = []
    for sentence in sentences:
        for line in sentence.split(";"):
            cols = line.split()
            if len(cols) == 2:
                out.append("\t".join([*cols] + ["_"] * 8))
                continue
            ident, form, head, rel, upos, lemma = [*cols, "X", "_"][:6] if len(cols) < 6 else cols
            out.append("\t".join((ident, form, lemma, upos, "_", "_", head, rel, "_", "_")))
        out.append("")
    return "\n".join(out) + "\n"


def _read(text: str, name: str) -> list:
    return list(read_conll_block(text.encode(), name, fmt="conllu", require_heads=False))


def _counts(gold: str, system: str) -> dict[str, tuple[int, int, int] | None]:
    report = score_aligned(_read(gold, "gold.conllu"), _read(system, "sys.conllu"))
    return {key: None if s is None else (s.correct, s.gold, s.system)
            for key, s in report.scores.items()}


GOLD = _conllu("1 The 2 det DET;2 dog 3 nsubj NOUN;3 barks 0 root VERB;4 . 3 punct PUNCT")


def test_split_token() -> None:
    # barks -> bar ks: The, dog and . keep their spans; dog's and .'s head (bar) is unmatched
    system = _conllu("1 The 2 det DET;2 dog 3 nsubj NOUN;3 bar 0 root VERB;4 ks 3 flat VERB;"
                     "5 . 3 punct PUNCT")
    c = _counts(GOLD, system)
    assert c["tokens"] == (3, 4, 5) and c["words"] == (3, 4, 5) and c["sentences"] == (1, 1, 1)
    assert c["upos"] == (3, 4, 5)
    assert c["uas"] == (1, 4, 5) and c["las_universal"] == (1, 4, 5)
    # content words: gold dog, barks; system dog, bar, ks: dog's head is wrong
    assert c["clas"] == (0, 2, 3)


def test_merged_tokens() -> None:
    system = _conllu("1 The 2 det DET;2 dogbarks 0 root VERB;3 . 2 punct PUNCT")
    c = _counts(GOLD, system)
    assert c["tokens"] == (2, 4, 3) and c["words"] == (2, 4, 3)
    assert c["uas"] == (0, 4, 3)  # The and . hang from dogbarks, which matches no gold word
    assert c["clas"] == (0, 2, 1)


DEL = _conllu("1-2 del;1 de 3 case ADP de;2 el 3 det DET el;3 mar 0 root NOUN mar")


def test_multiword_token_expanded_differently() -> None:
    # del -> de + l: the region's common subsequence pairs de only; the tokens match
    c = _counts(DEL, _conllu("1-2 del;1 de 3 case ADP;2 l 3 det DET;3 mar 0 root NOUN"))
    assert c["tokens"] == (2, 2, 2) and c["words"] == (2, 3, 3) and c["uas"] == (2, 3, 3)
    # FORMs compared lowercased: De and EL pair with de and el
    c = _counts(DEL, _conllu("1-2 del;1 De 3 case ADP;2 EL 3 det DET;3 mar 0 root NOUN"))
    assert c["words"] == (3, 3, 3) and c["las_universal"] == (3, 3, 3)


def test_multiword_token_missing_and_extra_words() -> None:
    # not expanded: the token del matches, its word none of gold's two
    c = _counts(DEL, _conllu("1 del 2 case ADP;2 mar 0 root NOUN"))
    assert c["tokens"] == (2, 2, 2) and c["words"] == (1, 3, 2)
    assert c["upos"] == (1, 3, 2) and c["uas"] == (1, 3, 2)
    # three words: de, e, l: de pairs, then the extra system words; mar keeps its head
    c = _counts(DEL, _conllu("1-3 del;1 de 4 case ADP;2 e 4 det DET;3 l 4 det DET;"
                             "4 mar 0 root NOUN"))
    assert c["words"] == (2, 3, 4) and c["uas"] == (2, 3, 4) and c["clas"] == (1, 1, 1)
    # a multiword token where gold has a one-word token: the region is the token's span
    c = _counts(_conllu("1 del 2 case ADP;2 mar 0 root NOUN"), DEL)
    assert c["tokens"] == (2, 2, 2) and c["words"] == (1, 2, 3)


def test_common_subsequence_tie_passes_over_the_gold_word_first() -> None:
    # gold xy -> x y, system xy -> y x: either pair is a longest common subsequence; passing
    # over gold's x first pairs gold y (word 2) with the system's y (word 1)
    gold = segment(_read(_conllu("1-2 xy;1 x 0 root;2 y 1 dep"), "g"))
    system = segment(_read(_conllu("1-2 xy;1 y 0 root;2 x 1 dep"), "s"))
    assert align(gold, system) == [UNALIGNED, 0]


def test_region_takes_in_words_that_end_inside_it() -> None:
    # gold: a | bc -> b c; system: ab | c. The system's ab starts before the multiword token
    # and is left out; c ends at the region's end and is taken in: gold c pairs with it
    gold = segment(_read(_conllu("1 a 0 root;2-3 bc;2 b 1 dep;3 c 1 dep"), "g"))
    system = segment(_read(_conllu("1 ab 0 root;2 c 1 dep"), "s"))
    assert align(gold, system) == [UNALIGNED, UNALIGNED, 1]


def test_sentence_breaks_moved() -> None:
    gold = _conllu("1 A 2 nsubj;2 b 0 root;3 . 2 punct", "1 C 2 nsubj;2 d 0 root;3 . 2 punct")
    joined = _conllu("1 A 2 nsubj;2 b 0 root;3 . 2 punct;4 C 5 nsubj;5 d 2 parataxis;"
                     "6 . 5 punct")
    c = _counts(gold, joined)
    assert c["sentences"] == (0, 2, 1) and c["tokens"] == (6, 6, 6) and c["words"] == (6, 6, 6)
    assert c["uas"] == (5, 6, 6) and c["las"] == (5, 6, 6)  # d hangs from b
    assert c["clas"] == (3, 4, 4)
    # split the other way: gold's one sentence, the system's two; b's head crosses the break
    c = _counts(joined, gold)
    assert c["sentences"] == (0, 1, 2) and c["uas"] == (5, 6, 6) and c["clas"] == (3, 4, 4)
    # a break moved by a word: A b | . C d . -> neither sentence matches
    moved = _conllu("1 A 2 nsubj;2 b 0 root", "1 . 3 punct;2 C 3 nsubj;3 d 0 root;4 . 3 punct")
    c = _counts(gold, moved)
    assert c["sentences"] == (0, 2, 2) and c["uas"] == (5, 6, 6)  # the first . hangs from d


def test_mlas_compares_function_children_through_the_alignment() -> None:
    gold = _conllu("1 in 2 case ADP;2 town 0 root NOUN")
    assert _counts(gold, gold)["mlas"] == (1, 1, 1)
    # the system splits "in": town's function child is an unmatched word
    c = _counts(gold, _conllu("1 i 3 case ADP;2 n 3 case ADP;3 town 0 root NOUN"))
    assert c["clas"] == (1, 1, 1) and c["mlas"] == (0, 1, 1)


def test_empty_nodes_are_not_words() -> None:
    with_empty = _conllu("1 The 2 det DET;2 dog 3 nsubj NOUN;2.1 ate;3 barks 0 root VERB;"
                         "4 . 3 punct PUNCT")
    system = _conllu("1 The 2 det DET;2 dogbarks 0 root VERB;3 . 2 punct PUNCT")
    assert _counts(with_empty, system) == _counts(GOLD, system)
    assert _counts(GOLD, with_empty)["words"] == (4, 4, 4)


def test_no_heads_gives_the_tags_only() -> None:
    system = _conllu("1 The _ _ DET;2 dogbarks _ _ VERB;3 . _ _ PUNCT")
    report = score_aligned(_read(GOLD, "g"), _read(system, "s"))
    assert not report.system_heads and report.scores["upos"].correct == 2
    assert all(report.scores[k] is None for k in ("uas", "las", "clas", "mlas", "blex"))
    assert report.missing["uas"] == ["HEAD"]


def test_precision_recall_f1() -> None:
    report = score_aligned(_read(GOLD, "g"), _read(
        _conllu("1 The 2 det DET;2 dogbarks 0 root VERB;3 . 2 punct PUNCT"), "s"))
    words = report.scores["words"]
    assert (words.precision, words.recall, words.f1) == (
        pytest.approx(200 / 3), pytest.approx(50.0), pytest.approx(100 * 4 / 7))
    assert report.as_dict()["words"] == words.f1
    assert list(report.as_dict()["aligned_scores"]) == list(ALIGNED_SCORES)


def test_different_text_names_file_line_and_character() -> None:
    system = _conllu("1 The 2 det DET;2 cat 3 nsubj NOUN;3 barks 0 root VERB;4 . 3 punct PUNCT")
    with pytest.raises(InputError) as error:
        score_aligned(_read(GOLD, "gold.conllu"), _read(system, "sys.conllu"))
    assert error.value.path == "sys.conllu" and error.value.line == 2
    assert "character 4" in error.value.problem and "'cat'" in error.value.problem
    assert "gold.conllu:2" in error.value.problem
    short = _conllu("1 The 2 det DET;2 dog 0 root NOUN")
    with pytest.raises(InputError, match="the system's text ends at character 7 of gold's"):
        score_aligned(_read(GOLD, "g"), _read(short, "s"))
    with pytest.raises(InputError, match="gold's text .* ends before character 13"):
        score_aligned(_read(GOLD, "g"), _read(GOLD.replace("\t.\t", "\t.!\t"), "s"))


def test_spaces_inside_forms_are_not_text() -> None:
    # a FORM with a no-break space and one with a space: the same text as without them
    gold = "1\t10\u00a0000\t_\tNUM\t_\t_\t0\troot\t_\t_\n\n"
    system = "1\t10 000\t_\tNUM\t_\t_\t0\troot\t_\t_\n\n"
    c = _counts(gold, system)
    assert c["tokens"] == (1, 1, 1) and c["uas"] == (1, 1, 1)


def test_space_separators_are_unicode_zs() -> None:
    zs = "".join(chr(c) for c in range(sys.maxunicode + 1)
                 if unicodedata.category(chr(c)) == "Zs")
    assert re.fullmatch(f"[{SPACE_SEPARATORS}]+", zs) and len(zs) == 17


def _perturbed(gold: list, seed: int) -> list:
    """Gold's words with heads, relations and UPOS changed at random (not trees: eval scores
    them all the same)."""
    rng = np.random.default_rng(seed)
    rels = [r for s in gold for r in s.deprels[1:]]
    tags = [t for s in gold for t in s.upos]
    out = []
    for s in gold:
        n = len(s)
        heads = np.where(rng.random(n + 1) < 0.2, rng.integers(0, n + 1, n + 1), s.heads)
        deprels = ["", *(rels[rng.integers(len(rels))] if rng.random() < 0.2 else r
                         for r in s.deprels[1:])]
        upos = [tags[rng.integers(len(tags))] if rng.random() < 0.2 else t for t in s.upos]
        out.append(s.with_tags(upos=upos).with_parse(heads, deprels))
    return out


def test_gold_words_give_the_numbers_of_eval(data: Path) -> None:
    gold = read_treebank(data / "de_gsd" / "test.conllu")  # multiword tokens
    system = _perturbed(gold, 3)
    report = score_aligned(gold, system)
    ev = score_system(gold, system, "include", [], False, None, None, "utf-8")
    for key in ("upos", "xpos", "ufeats", "alltags", "lemmas", "uas", "las", "las_universal"):
        s = report.scores[key]
        assert s.f1 == s.precision == s.recall == getattr(ev, key), key
    for key in ("clas", "mlas", "blex"):
        s, e = report.scores[key], ev.content_report.scores[key]
        assert (s.correct, s.gold, s.system, s.f1) == (e.correct, e.gold, e.system, e.f1)
    assert report.scores["tokens"].f1 == report.scores["sentences"].f1 == 100.0


def _official(gold: Path, system: Path) -> dict[str, tuple[int, int, int]]:
    names = {name: key for key, name in ALIGNED_SCORES.items()}
    out = subprocess.run([sys.executable, OFFICIAL, "--counts", str(gold), str(system)],
                         capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if cells[0] in names:
            counts[names[cells[0]]] = tuple(map(int, cells[1:4]))
    return counts


@pytest.mark.skipif(not OFFICIAL, reason="DPARSE_CONLL18_EVAL (conll18_ud_eval.py) not given")
@pytest.mark.parametrize("system", [
    _conllu("1 The 2 det DET;2 dog 3 nsubj NOUN;3 bar 0 root VERB;4 ks 3 flat VERB;"
            "5 . 3 punct PUNCT"),
    _conllu("1-2 Thedog;1 The 2 det DET;2 Dog 3 nsubj NOUN;3 barks 0 root VERB", "1 . 0 root"),
    _conllu("1 T 0 root;2-4 hedogb;2 he 1 dep;3 dog 1 dep;4 b 1 dep;5 arks. 1 dep"),
])
def test_equals_the_official_scorer(tmp_path: Path, system: str) -> None:
    gold_path, sys_path = tmp_path / "gold.conllu", tmp_path / "sys.conllu"
    gold_path.write_text(GOLD)
    sys_path.write_text(system)
    ours = {k: v for k, v in _counts(GOLD, system).items() if k != "las" and v is not None}
    assert {k: v for k, v in _official(gold_path, sys_path).items() if k in ours} == ours


@pytest.mark.skipif(not OFFICIAL, reason="DPARSE_CONLL18_EVAL (conll18_ud_eval.py) not given")
def test_equals_the_official_scorer_on_a_retokenized_treebank(data: Path, tmp_path: Path) -> None:
    gold = data / "pt_bosque" / "test.conllu"
    system = tmp_path / "sys.conllu"
    system.write_text(_retokenize()(gold, 0.1, 5), encoding="utf-8")
    report = score_aligned(read_treebank(gold), read_treebank(system, require_heads=False))
    ours = {k: (s.correct, s.gold, s.system) for k, s in report.scores.items() if s is not None}
    theirs = _official(gold, system)
    assert {k: v for k, v in theirs.items() if k in ours} == {
        k: v for k, v in ours.items() if k != "las"}


SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))


def _retokenize():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from retokenize import retokenize

    return retokenize


def test_random_retokenizations_align_consistently(data: Path, tmp_path: Path) -> None:
    """On re-tokenized slices of a treebank with multiword tokens: a file aligns with itself
    word for word; matched words come in order in both files; outside multiword tokens they
    have the same span, inside they have the same lowercased FORM; tokens and words never
    match more than either file has."""
    gold_path = tmp_path / "gold.conllu"
    text = (data / "pt_bosque" / "test.conllu").read_text(encoding="utf-8")
    gold_path.write_text("\n\n".join(text.split("\n\n")[:150]) + "\n\n", encoding="utf-8")
    gold = read_treebank(gold_path)
    g_seg = segment(gold)
    assert align(g_seg, g_seg) == list(range(len(g_seg.word_start)))
    for k in range(4):
        sys_path = tmp_path / f"sys{k}.conllu"
        sys_path.write_text(_retokenize()(gold_path, 0.05 + 0.1 * k, SEED * 10 + k))
        system = read_treebank(sys_path)
        s_seg = segment(system)
        assert align(s_seg, s_seg) == list(range(len(s_seg.word_start)))
        match = align(g_seg, s_seg)
        pairs = [(g, s) for g, s in enumerate(match) if s != UNALIGNED]
        assert all(a < b for (_, a), (_, b) in itertools.pairwise(pairs)), "out of order"
        for g, s in pairs:
            if g_seg.multiword[g] or s_seg.multiword[s]:
                assert g_seg.match_form[g] == s_seg.match_form[s]
            else:
                assert (g_seg.word_start[g], g_seg.word_end[g]) == \
                    (s_seg.word_start[s], s_seg.word_end[s])
        report = score_aligned(gold, system)
        for key in ("tokens", "sentences", "words"):
            score = report.scores[key]
            assert score.correct <= min(score.gold, score.system)
        assert report.scores["tokens"].correct < report.scores["tokens"].gold
