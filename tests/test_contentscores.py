"""CoNLL 2018 content-word scores of ``dparse eval`` (dparse.contentscores): CLAS, MLAS and BLEX
against counts made by hand from the shared task's definitions, the JSON and text reports, the
scores that are not applicable, and udapi's reimplementation of the scorer on real data."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from dparse.cli.eval import eval_command
from dparse.conll import Sentence, read_treebank, write_conll
from dparse.contentscores import (
    CONTENT_RELATIONS,
    CONTENT_SCORES,
    FUNCTION_RELATIONS,
    score_content,
)
from dparse.errors import DparseError, InputError


def _lines(*rows: str) -> str:
    """CoNLL-U text: in each row but comments, runs of spaces between fields become tabs."""
    return "".join((row if row.startswith("#") else "\t".join(row.split())) + "\n"
                   for row in rows)


# 3 sentences, 16 words; the multiword token 5-6 and the empty node 7.1 are not words.
# Gold content words (universal relation in CONTENT_RELATIONS): cat (nmod:poss), owner, n't,
# sleep | New, York (flat), spite, of (fixed), rain | Go: 10. The det, case, aux and the two
# punct are not content words. Function-word children: cat [The det, 's case], sleep [did aux],
# rain [in case].
GOLD = _lines(
    "# sent_id = 1",
    "1   The   the   DET   DT  Definite=Def|PronType=Art        2 det       _ _",
    "2   cat   cat   NOUN  NN  Number=Sing                      4 nmod:poss _ _",
    "3   's    's    PART  POS _                                2 case      _ _",
    "4   owner owner NOUN  NN  Number=Sing                      7 nsubj     _ _",
    "5-6 didn't _    _     _   _                                _ _         _ _",
    "5   did   do    AUX   VBD Mood=Ind|Tense=Past|VerbForm=Fin 7 aux       _ _",
    "6   n't   not   PART  RB  Polarity=Neg                     7 advmod    _ _",
    "7   sleep sleep VERB  VB  VerbForm=Inf                     0 root      _ _",
    "7.1 slept sleep VERB  VBD _                                _ _         7:conj _",
    "8   .     .     PUNCT .   _                                7 punct     _ _",
    "",
    "# sent_id = 2",
    "1   New   New   PROPN NNP Number=Sing                      0 root      _ _",
    "2   York  _     PROPN NNP Number=Sing                      1 flat      _ _",
    "3   in    in    ADP   IN  _                                6 case      _ _",
    "4   spite spite NOUN  NN  Number=Sing                      3 fixed     _ _",
    "5   of    of    ADP   IN  _                                3 fixed     _ _",
    "6   rain  rain  NOUN  NN  Number=Sing                      1 nmod      _ _",
    "",
    "# sent_id = 3",
    "1   Go    go    VERB  VB  Mood=Imp|VerbForm=Fin            0 root      _ _",
    "2   !     !     PUNCT .   _                                1 punct     _ _",
    "",
)
# The system, word by word, by hand (C: CLAS, M: MLAS, B: BLEX of a gold content word):
#   The    det -> det:predet: the same universal relation, so cat keeps its children
#   cat    nmod:poss -> nmod (C), Typo=Yes added (not universal: M), lemma cats (not B)
#   owner  UPOS NOUN -> PROPN (C, not M, B)
#   did    aux -> cop: sleep's function-word child differs
#   n't    (C, M), lemma n't against not (not B)
#   sleep  (C, not M: its child, B)
#   .      punct -> dep: a system content word that gold does not have
#   New    (C, M), lemma new against New (not B: case counts)
#   York   Number=Plur (C, not M), lemma york against gold _ (B)
#   in     UPOS ADP -> SCONJ: rain's function-word child differs
#   spite  head 3 -> 6 (not C)
#   of     fixed -> case: no longer a content word (not C)
#   rain   (C, not M: its child, B)
#   Go     (C, M, B)
#   !      punct -> discourse: another system content word
# CLAS 8, MLAS 4, BLEX 5 correct of 10 gold and 11 system content words (cat, owner, n't,
# sleep, ., New, York, spite, rain, Go, !).
SYSTEM = _lines(
    "# sent_id = 1",
    "1   The   the   DET   DT  Definite=Def|PronType=Art        2 det:predet _ _",
    "2   cat   cats  NOUN  NN  Number=Sing|Typo=Yes             4 nmod      _ _",
    "3   's    's    PART  POS _                                2 case      _ _",
    "4   owner owner PROPN NN  Number=Sing                      7 nsubj     _ _",
    "5-6 didn't _    _     _   _                                _ _         _ _",
    "5   did   do    AUX   VBD Mood=Ind|Tense=Past|VerbForm=Fin 7 cop       _ _",
    "6   n't   n't   PART  RB  Polarity=Neg                     7 advmod    _ _",
    "7   sleep sleep VERB  VB  VerbForm=Inf                     0 root      _ _",
    "7.1 slept sleep VERB  VBD _                                _ _         7:conj _",
    "8   .     .     PUNCT .   _                                7 dep       _ _",
    "",
    "# sent_id = 2",
    "1   New   new   PROPN NNP Number=Sing                      0 root      _ _",
    "2   York  york  PROPN NNP Number=Plur                      1 flat      _ _",
    "3   in    in    SCONJ IN  _                                6 case      _ _",
    "4   spite spite NOUN  NN  Number=Sing                      6 fixed     _ _",
    "5   of    of    ADP   IN  _                                3 case      _ _",
    "6   rain  rain  NOUN  NN  Number=Sing                      1 nmod      _ _",
    "",
    "# sent_id = 3",
    "1   Go    go    VERB  VB  Mood=Imp|VerbForm=Fin            0 root      _ _",
    "2   !     !     PUNCT .   _                                1 discourse _ _",
    "",
)
GOLD_CONTENT, SYSTEM_CONTENT = 10, 11
CORRECT = {"clas": 8, "mlas": 4, "blex": 5}
COLUMN = {"lemma": 2, "upos": 3, "xpos": 4, "feats": 5, "head": 6, "deprel": 7}


def _blank(text: str, *columns: str) -> str:
    """CoNLL-U ``text`` with the named columns of every word line ``_``."""
    rows = []
    for line in text.splitlines(keepends=True):
        cols = line.rstrip("\n").split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            for name in columns:
                cols[COLUMN[name]] = "_"
        rows.append("\t".join(cols) + "\n")
    return "".join(rows)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for name, text in (("gold", GOLD), ("sys", SYSTEM)):
        paths[name] = tmp_path / f"{name}.conllu"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _eval(*args: object) -> tuple[int, str]:
    """``dparse eval ARGS``: exit status and output; a DparseError gives 2 and its message,
    as the command line's main does."""
    result = CliRunner().invoke(eval_command, [str(a) for a in args])
    if isinstance(result.exception, DparseError):
        return 2, str(result.exception)
    return result.exit_code, result.output


def test_relation_classes_are_the_shared_tasks() -> None:
    assert FUNCTION_RELATIONS == {"aux", "case", "cc", "clf", "cop", "det", "mark"}
    assert len(CONTENT_RELATIONS) == 29 and not CONTENT_RELATIONS & FUNCTION_RELATIONS
    assert {"fixed", "flat", "compound", "root", "dep", "orphan"} <= CONTENT_RELATIONS
    assert "punct" not in CONTENT_RELATIONS | FUNCTION_RELATIONS


def test_scores_match_a_hand_count(files: dict[str, Path]) -> None:
    report = score_content(read_treebank(files["gold"]), read_treebank(files["sys"]))
    assert report.words == 16 and report.missing == {}
    for key, correct in CORRECT.items():
        s = report.scores[key]
        assert (s.correct, s.gold, s.system) == (correct, GOLD_CONTENT, SYSTEM_CONTENT), key
        assert s.precision == pytest.approx(100 * correct / SYSTEM_CONTENT)
        assert s.recall == pytest.approx(100 * correct / GOLD_CONTENT)
        assert s.f1 == pytest.approx(200 * correct / (GOLD_CONTENT + SYSTEM_CONTENT))


@pytest.mark.parametrize("punct", ["include", "conll", "ptb", "upos"])
def test_cli_json_and_text_whatever_the_punctuation_rule(files: dict[str, Path],
                                                         punct: str) -> None:
    status, out = _eval(files["gold"], files["sys"], "--json", "--punct", punct)
    assert status == 0, out
    result = json.loads(out)
    for key, correct in CORRECT.items():
        assert result[key] == pytest.approx(200 * correct / (GOLD_CONTENT + SYSTEM_CONTENT))
        detail = result["content_scores"][key]
        assert (detail["correct"], detail["gold"], detail["system"]) == \
            (correct, GOLD_CONTENT, SYSTEM_CONTENT)
        assert detail["precision"] == pytest.approx(100 * correct / SYSTEM_CONTENT)
    status, text = _eval(files["gold"], files["sys"], "--punct", punct)
    assert status == 0, text
    assert "punctuation included whatever --punct says" in text
    # F1, P, R of CLAS: 16/21, 8/11, 8/10
    assert re.search(r"^CLAS\s+76\.19\s+72\.73\s+80\.00\s+\(8 correct of 10 gold, 11 system",
                     text, re.M), text
    assert re.search(r"^MLAS\s+38\.10\s+36\.36\s+40\.00\s", text, re.M)
    assert re.search(r"^BLEX\s+47\.62\s+45\.45\s+50\.00\s", text, re.M)


def test_gold_against_itself_is_100(files: dict[str, Path]) -> None:
    report = score_content(read_treebank(files["gold"]), read_treebank(files["gold"]))
    for s in report.scores.values():
        assert (s.correct, s.gold, s.system) == (GOLD_CONTENT,) * 3
        assert s.precision == s.recall == s.f1 == 100.0


def test_a_missing_column_leaves_its_score_not_applicable(files: dict[str, Path],
                                                          tmp_path: Path) -> None:
    gold = read_treebank(files["gold"])
    no_lemma = read_treebank(_write(tmp_path, "l.conllu", _blank(SYSTEM, "lemma")))
    report = score_content(gold, no_lemma)
    assert report.scores["blex"] is None and report.missing == {"blex": ["LEMMA"]}
    assert report.scores["clas"].correct == 8 and report.scores["mlas"].correct == 4
    no_tags = read_treebank(_write(tmp_path, "t.conllu", _blank(SYSTEM, "upos", "feats")))
    report = score_content(gold, no_tags)
    assert report.scores["mlas"] is None and report.missing == {"mlas": ["UPOS", "FEATS"]}
    status, text = _eval(files["gold"], tmp_path / "t.conllu")
    assert status == 0 and re.search(r"^MLAS\s+n/a\s+\(the system file has no UPOS and FEATS",
                                      text, re.M), text
    status, out = _eval(files["gold"], tmp_path / "l.conllu", "--json")
    assert json.loads(out)["blex"] is None and json.loads(out)["content_scores"]["blex"] is None
    # a gold file without lemmas: every system lemma is right (the gold lemma is _)
    bare_gold = read_treebank(_write(tmp_path, "g.conllu", _blank(GOLD, "lemma")))
    report = score_content(bare_gold, no_lemma)
    assert report.scores["blex"].correct == report.scores["clas"].correct == 8


def test_a_system_without_heads_has_no_content_scores(files: dict[str, Path],
                                                      tmp_path: Path) -> None:
    tagged = _write(tmp_path, "tagged.conllu", _blank(SYSTEM, "head", "deprel"))
    status, out = _eval(files["gold"], tagged, "--json")
    assert status == 0, out
    result = json.loads(out)
    assert {k: result[k] for k in CONTENT_SCORES} == dict.fromkeys(CONTENT_SCORES)
    assert result["content_scores"] is None


def test_labels_outside_ud_give_no_content_word() -> None:
    gold = [Sentence.build(["Juan", "come"], [-1, 2, 0], ["", "suj", "ROOT"], fmt="conllx")]
    report = score_content(gold, gold)
    assert all(s.gold == s.system == 0 and s.f1 is None for s in report.scores.values())


def test_different_words_are_an_error(files: dict[str, Path], tmp_path: Path) -> None:
    other = _write(tmp_path, "o.conllu", SYSTEM.replace("owner\towner", "owners\towner"))
    with pytest.raises(InputError, match=r"o\.conllu:\d+: system sentence 1 word 4 is 'owners'"):
        score_content(read_treebank(files["gold"]), read_treebank(other))


def _content_words(sentences: list[Sentence]) -> int:
    return sum(rel.split(":")[0] in CONTENT_RELATIONS for s in sentences for rel in s.deprels[1:])


def test_en_ewt_test_invariants(data: Path) -> None:
    """The first 500 sentences of en_ewt test: against itself every score is 100; with 20% of
    heads moved at random (trees or not: the scores need none) and the labels kept, the gold
    and system content-word counts are equal (P = R = F1), CLAS counts the content words whose
    head is right, BLEX is CLAS (gold lemmas) and MLAS is below it."""
    gold = read_treebank(data / "en_ewt" / "test.conllu")[:500]
    n_content = _content_words(gold)
    assert 0.5 * sum(map(len, gold)) < n_content < sum(map(len, gold))
    same = score_content(gold, gold)
    assert all(s.correct == s.gold == s.system == n_content for s in same.scores.values())
    rng = np.random.default_rng(0)
    system = []
    for s in gold:
        heads = s.heads.copy()
        move = rng.random(len(s) + 1) < 0.2
        heads[move] = rng.integers(0, len(s) + 1, size=int(move.sum()))
        system.append(s.with_parse(heads, s.deprels))
    right = sum(int(g.heads[m] == s.heads[m]) for g, s in zip(gold, system, strict=True)
                for m in range(1, len(g) + 1) if g.deprels[m].split(":")[0] in CONTENT_RELATIONS)
    scores = score_content(gold, system).scores
    assert scores["clas"].correct == right < n_content
    assert scores["clas"].precision == scores["clas"].recall == scores["clas"].f1
    assert scores["blex"] == scores["clas"]
    # MLAS also needs each word's function-word children: moving heads changes them
    assert scores["mlas"].correct < scores["clas"].correct


def _perturbed(gold: list[Sentence], seed: int, rate: float) -> list[Sentence]:
    """``gold`` with relations, UPOS, FEATS and lemmas replaced by others of the file at random
    and heads moved to words that keep a single-rooted tree (the scorer needs one)."""
    rng = np.random.default_rng(seed)
    pools = {name: sorted({v for s in gold for v in getattr(s, name)})
             for name in ("upos", "feats", "lemma")}
    rels = sorted({r for s in gold for r in s.deprels[1:]} - {"root"})
    out = []
    for s in gold:
        n = len(s)
        heads = s.heads.copy()
        rel = list(s.deprels)
        for m in range(1, n + 1):
            if heads[m] != 0 and rng.random() < rate:
                rel[m] = rels[rng.integers(len(rels))]
            if heads[m] != 0 and rng.random() < rate:
                below = {m}
                while True:  # m and its descendants, which cannot become its head
                    more = {d for d in range(1, n + 1) if heads[d] in below} - below
                    if not more:
                        break
                    below |= more
                choices = [h for h in range(1, n + 1) if h not in below]
                if choices:
                    heads[m] = choices[rng.integers(len(choices))]
        tags = {name: [pools[name][rng.integers(len(pools[name]))] if rng.random() < rate
                       else v for v in getattr(s, name)] for name in pools}
        out.append(s.with_parse(heads, rel).with_tags(**tags))
    return out


def _udapi_counts(gold: Path, system: Path) -> dict[str, tuple[int, int, int]]:
    """udapi's eval.Conll18 (a reimplementation of the CoNLL 2018 scorer): (correct, gold,
    system) of CLAS, MLAS and BLEX."""
    pytest.importorskip("udapi")
    from udapi.block.eval.conll18 import Conll18
    from udapi.block.read.conllu import Conllu
    from udapi.core.document import Document

    doc = Document()
    Conllu(files=str(gold), zone="gold").apply_on_document(doc)
    Conllu(files=str(system), zone="pred").apply_on_document(doc)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        block = Conll18(gold_zone="gold", print_counts=True)
        block.apply_on_document(doc)
        block.process_end()
    return {m.lower(): (int(c), int(g), int(p)) for m, c, g, p in re.findall(
        r"^(CLAS|MLAS|BLEX)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)", out.getvalue(), re.M)}


@pytest.mark.parametrize("treebank", ["en_ewt", "pt_bosque"])
def test_scores_match_udapi_on_real_data(data: Path, tmp_path: Path, treebank: str) -> None:
    """300 test sentences (pt_bosque: many multiword tokens), perturbed: the counts equal
    those of udapi's reimplementation of the official scorer."""
    gold = read_treebank(data / treebank / "test.conllu")[:300]
    system = _perturbed(gold, seed=1, rate=0.15)
    write_conll(gold, tmp_path / "gold.conllu")
    write_conll(system, tmp_path / "sys.conllu")
    theirs = _udapi_counts(tmp_path / "gold.conllu", tmp_path / "sys.conllu")
    report = score_content(gold, system)
    ours = {k: (s.correct, s.gold, s.system) for k, s in report.scores.items()}
    assert ours == theirs
    assert report.scores["mlas"].f1 < 60.0 < report.scores["clas"].f1 < 90.0
