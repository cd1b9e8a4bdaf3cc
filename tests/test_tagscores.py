"""Tag scores of ``dparse eval`` (dparse.tagscores): UPOS, XPOS, UFeats, AllTags and Lemmas
against counts made by hand, systems without heads, JSON keys, confusions, unseen words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dparse.cli.eval import eval_command
from dparse.conll import Sentence, read_treebank
from dparse.errors import DparseError
from dparse.tagscores import CONFUSIONS_SHOWN, TAG_SCORES, score_tags, universal_feats


def _lines(*rows: str) -> str:
    """CoNLL-U text: in each row but comments, runs of spaces between fields become tabs."""
    return "".join((row if row.startswith("#") else "\t".join(row.split())) + "\n"
                   for row in rows)


# 11 words in 3 sentences; a multiword token (1-2 Del) and an empty node (4.1) are not words
GOLD = _lines(
    "# sent_id = 1",
    "1-2 Del  _     _     _   _                                                 _ _     _ _",
    "1   De   de    ADP   SPS _                                                 3 case  _ _",
    "2   el   el    DET   DA  Definite=Def|Gender=Masc|Number=Sing|PronType=Art 3 det   _ _",
    "3   perro perro NOUN NC  Gender=Masc|Number=Sing                           4 nsubj _ _",
    "4   vio  ver   VERB  VM  Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin 0 root _ _",
    "4.1 vio  ver   VERB  VM  _                                                 _ _     _ _",
    "5   .    .     PUNCT FP  PunctType=Peri                                    4 punct _ _",
    "",
    "# sent_id = 2",
    "1   Su   su  DET DP Number=Sing|Number[psor]=Sing|Person=3|Poss=Yes|PronType=Prs 2 det _ _",
    "2   casa _     NOUN  NC  Gender=Fem|Number=Sing                            3 nsubj _ _",
    "3   cae  caer  VERB  VM  Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root _ _",
    "4   Juan Juan  PROPN NP  NameType=Prs                                      3 obj   _ _",
    "",
    "# sent_id = 3",
    "1   Corre correr VERB VM Mood=Imp|Number=Sing|Person=2|VerbForm=Fin        0 root  _ _",
    "2   !    !     PUNCT FAT _                                                 1 punct _ _",
    "",
)
# What the system gets wrong, by hand (11 words):
#   UPOS    el DET->PRON, cae VERB->AUX, Corre VERB->AUX                  8/11
#   XPOS    vio VM->VMI                                                   10/11
#   UFeats  perro Number=Sing->Plur; right despite: el's features in another order, Su's
#           layered Number[psor] changed, '.' and Juan losing non-universal features  10/11
#   AllTags el, perro, vio, cae, Corre                                    6/11
#   Lemmas  perro->perros, Juan->juan; casa (gold lemma _) right with 'casar'  9/11
SYSTEM = _lines(
    "# sent_id = 1",
    "1-2 Del  _     _     _   _                                                 _ _     _ _",
    "1   De   de    ADP   SPS _                                                 3 case  _ _",
    "2   el   el    PRON  DA  Gender=Masc|Definite=Def|PronType=Art|Number=Sing 3 det   _ _",
    "3   perro perros NOUN NC Gender=Masc|Number=Plur                           4 nsubj _ _",
    "4   vio  ver   VERB  VMI Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin 0 root _ _",
    "4.1 vio  ver   VERB  VM  _                                                 _ _     _ _",
    "5   .    .     PUNCT FP  _                                                 4 punct _ _",
    "",
    "# sent_id = 2",
    "1   Su   su  DET DP Number=Sing|Number[psor]=Plur|Person=3|Poss=Yes|PronType=Prs 2 det _ _",
    "2   casa casar NOUN  NC  Gender=Fem|Number=Sing                            3 nsubj _ _",
    "3   cae  caer  AUX   VM  Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root _ _",
    "4   Juan juan  PROPN NP  _                                                 3 obj   _ _",
    "",
    "# sent_id = 3",
    "1   Corre correr AUX VM  Mood=Imp|Number=Sing|Person=2|VerbForm=Fin        0 root  _ _",
    "2   !    !     PUNCT FAT _                                                 1 punct _ _",
    "",
)
# FORMs seen: not De (only an empty node's FORM), casa, Juan, nor Corre (only 'corre')
TRAIN = _lines(
    "1   el   el    DET   DA  _ 2 det   _ _",
    "2   perro perro NOUN NC  _ 3 nsubj _ _",
    "3   vio  ver   VERB  VM  _ 0 root  _ _",
    "3.1 De   de    ADP   SPS _ _ _     _ _",
    "4   .    .     PUNCT FP  _ 3 punct _ _",
    "",
    "1   Su   su    DET   DP  _ 2 det   _ _",
    "2   corre correr VERB VM _ 0 root  _ _",
    "3   cae  caer  VERB  VM  _ 2 conj  _ _",
    "4   !    !     PUNCT FAT _ 2 punct _ _",
    "",
)
EXPECTED = {"upos": 8, "xpos": 10, "ufeats": 10, "alltags": 6, "lemmas": 9}
# of the 4 unseen words De, casa, Juan, Corre: Corre's UPOS (so AllTags), Juan's lemma wrong
EXPECTED_UNSEEN = {"upos": 3, "xpos": 4, "ufeats": 4, "alltags": 3, "lemmas": 3}


COLUMN = {"lemma": 2, "upos": 3, "xpos": 4, "feats": 5, "head": 6, "deprel": 7, "deps": 8,
          "misc": 9}


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


def _headless(text: str) -> str:
    """``text`` with every word's HEAD and DEPREL ``_`` (a tagger's output)."""
    return _blank(text, "head", "deprel")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for name, text in (("gold", GOLD), ("sys", SYSTEM), ("train", TRAIN),
                       ("tagged", _headless(SYSTEM))):
        paths[name] = tmp_path / f"{name}.conllu"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def _eval(*args: object) -> tuple[int, str]:
    """``dparse eval ARGS``: exit status and output; a DparseError gives 2 and its message,
    as the command line's main does."""
    result = CliRunner().invoke(eval_command, [str(a) for a in args])
    if isinstance(result.exception, DparseError):
        return 2, str(result.exception)
    return result.exit_code, result.output


def test_universal_feats_keeps_only_the_scorers_features() -> None:
    assert universal_feats("Number=Sing|Number[psor]=Sing|Poss=Yes|Typo=Yes") == \
        "Number=Sing|Poss=Yes"
    assert universal_feats("PronType=Art|Definite=Def") == "Definite=Def|PronType=Art"
    assert universal_feats("Number=Plur,Sing") == "Number=Plur,Sing"  # a value as written
    assert universal_feats("NameType=Prs") == universal_feats("_") == "_"


def test_scores_match_a_hand_count(files: dict[str, Path]) -> None:
    report = score_tags(read_treebank(files["gold"]), read_treebank(files["sys"]))
    assert report.words == 11
    for key, correct in EXPECTED.items():
        score = report.scores[key]
        assert (score.words, score.correct) == (11, correct), key
        assert score.accuracy == pytest.approx(100 * correct / 11)
        assert score.confusions is None and score.unseen_accuracy is None  # no detail


def test_cli_text_and_json_report_the_hand_count(files: dict[str, Path]) -> None:
    status, text = _eval(files["gold"], files["sys"])
    assert status == 0, text
    assert "punctuation included whatever --punct says" in text
    for key, correct in EXPECTED.items():
        assert f"{TAG_SCORES[key]:<7}  {100 * correct / 11:6.2f}  ({correct} of 11)" in text
    status, out = _eval(files["gold"], files["sys"], "--json", "--punct", "upos")
    data = json.loads(out)
    assert status == 0 and data["system_heads"] is True and data["tag_words"] == 11
    assert data["scored"] == 9  # the parse scores leave out PUNCT; the tag scores do not
    assert {k: round(data[k], 2) for k in TAG_SCORES} == {
        k: round(100 * c / 11, 2) for k, c in EXPECTED.items()}
    assert "tag_detail" not in data


def test_a_system_without_heads_gets_the_tag_scores_only(files: dict[str, Path]) -> None:
    status, text = _eval(files["gold"], files["tagged"])
    assert status == 0, text
    assert text.startswith("Parse scores: n/a, left out: the system file has no heads")
    assert "UAS" not in text and "Lemmas    81.82  (9 of 11)" in text
    status, out = _eval(files["gold"], files["tagged"], "--json")
    data = json.loads(out)
    assert status == 0 and data["system_heads"] is False
    assert data["uas"] is None and data["las"] is None and data["complete_match"] is None
    assert (data["sentences"], data["tokens"]) == (3, 11)
    assert data["upos"] == pytest.approx(800 / 11)


def test_a_system_without_heads_still_must_match_gold(files: dict[str, Path],
                                                      tmp_path: Path) -> None:
    # other words are aligned with gold's through the text (dparse.alignedscores), which
    # must be gold's
    other_word = tmp_path / "other.conllu"
    other_word.write_text(_headless(SYSTEM).replace("\tcasa\t", "\tcosa\t"))
    status, out = _eval(files["gold"], other_word)
    assert status == 2 and f"{other_word}:12: the text differs from gold's at character" in out
    assert "token 'cosa' has 'o' as its character 2" in out
    fewer = tmp_path / "fewer.conllu"
    fewer.write_text(_headless(SYSTEM).rsplit("# sent_id = 3", 1)[0])
    status, out = _eval(files["gold"], fewer)
    assert status == 2 and "the system's text ends at character" in out


def test_heads_on_some_words_only_is_an_error(files: dict[str, Path], tmp_path: Path) -> None:
    partial = tmp_path / "partial.conllu"
    partial.write_text(SYSTEM.replace("3\tobj\t", "_\t_\t"))  # Juan, line 14
    status, out = _eval(files["gold"], partial)
    assert status == 2 and f"{partial}:14: HEAD is _ but other words" in out
    status, out = _eval(files["gold"], files["tagged"], "--other", files["sys"])
    assert status == 2 and "--other compares parses" in out


def test_columns_the_system_leaves_empty_are_not_applicable(files: dict[str, Path],
                                                            tmp_path: Path) -> None:
    def sentences(text: str) -> list[Sentence]:
        path = tmp_path / "s.conllu"
        path.write_text(text)
        return read_treebank(path, require_heads=False)

    gold = read_treebank(files["gold"])
    report = score_tags(gold, sentences(_blank(SYSTEM, "lemma", "xpos", "feats")))
    assert report.scores["upos"].correct == 8
    assert all(report.scores[k] is None for k in ("xpos", "ufeats", "alltags", "lemmas"))
    assert report.as_dict()["xpos"] is None  # null in JSON, as every n/a score
    # a gold file without XPOS (as da_ddt) does not need it for AllTags
    report = score_tags(sentences(_blank(GOLD, "xpos")), sentences(_blank(SYSTEM, "xpos")))
    assert report.scores["xpos"] is None and report.scores["alltags"].correct == 7
    tagged = tmp_path / "upos.conllu"
    tagged.write_text(_headless(SYSTEM).replace("\tVMI\t", "\tVM\t"))
    status, text = _eval(files["gold"], tagged)
    assert status == 0 and "XPOS     100.00  (11 of 11)" in text
    gold_only_forms = tmp_path / "forms.conllu"
    gold_only_forms.write_text(_blank(GOLD, *COLUMN))
    status, text = _eval(files["gold"], gold_only_forms)
    assert status == 0 and text.count("n/a  (not in the system file)") == 5


def test_detail_confusions_and_unseen_words_by_hand(files: dict[str, Path]) -> None:
    status, out = _eval(files["gold"], files["tagged"], "--detail", "--json", "--train",
                        files["train"])
    assert status == 0, out
    detail = json.loads(out)["tag_detail"]
    assert json.loads(out)["tag_unseen_words"] == 4
    pairs = {k: [(c["gold"], c["predicted"], c["count"]) for c in d["confusions"]]
             for k, d in detail.items()}
    assert pairs["upos"] == [("VERB", "AUX", 2), ("DET", "PRON", 1)]
    assert pairs["xpos"] == [("VM", "VMI", 1)]
    assert pairs["ufeats"] == [("Gender=Masc|Number=Sing", "Gender=Masc|Number=Plur", 1)]
    assert pairs["lemmas"] == [("Juan", "juan", 1), ("perro", "perros", 1)]
    assert ("DET DA Definite=Def|Gender=Masc|Number=Sing|PronType=Art",
            "PRON DA Definite=Def|Gender=Masc|Number=Sing|PronType=Art", 1) in pairs["alltags"]
    assert len(pairs["alltags"]) == 5
    for key, correct in EXPECTED_UNSEEN.items():
        assert detail[key]["unseen_accuracy"] == pytest.approx(100 * correct / 4), key
    status, text = _eval(files["gold"], files["tagged"], "--detail", "--train", files["train"])
    assert status == 0 and "4 of 11 words" in text
    assert "UPOS      72.73   75.00" in text and "      2  VERB  AUX" in text
    status, text = _eval(files["gold"], files["sys"], "--detail")  # with the parse breakdowns
    assert status == 0 and "unseen in training: left out (give --train FILE)" in text
    assert "Most confused XPOS (gold -> predicted)" in text and "Per gold DEPREL" in text
    status, out = _eval(files["gold"], files["sys"], "--detail", "--json")
    data = json.loads(out)
    assert data["tag_detail"]["upos"]["unseen_accuracy"] is None and "breakdowns" in data
    assert data["tag_unseen_words"] is None
    status, out = _eval(files["gold"], files["sys"], "--train", files["train"])
    assert status == 2 and "--train is for --detail" in out


def test_only_the_most_frequent_confusions_are_kept() -> None:
    tags = [f"T{k:02d}" for k in range(14)]
    gold = [Sentence.build(["w"] * 16, upos=["A"] * 16)]
    system = [Sentence.build(["w"] * 16, upos=[*tags, "T05", "A"])]
    score = score_tags(gold, system, detail=True).scores["upos"]
    assert score.correct == 1 and len(score.confusions) == CONFUSIONS_SHOWN
    assert score.confusions[0] == ("A", "T05", 2)
    assert [p for _, p, _ in score.confusions[1:]] == [t for t in tags if t != "T05"][:9]


def test_en_ewt_test_against_itself_is_100_on_every_tag_score(data: Path) -> None:
    gold = data / "en_ewt" / "test.conllu"
    status, out = _eval(gold, gold, "--json")
    assert status == 0, out
    result = json.loads(out)
    assert result["tag_words"] == result["tokens"] > 20000
    assert {k: result[k] for k in TAG_SCORES} == dict.fromkeys(TAG_SCORES, 100.0)
