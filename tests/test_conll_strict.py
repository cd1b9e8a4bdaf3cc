"""Strict, clear input reading (dparse.conll) and gold-tree validation (dparse.gold).

Hand-made cases: byte-order marks, gzip recognized by its bytes (files and stdin), empty input,
comments after the last sentence, strict HEAD / ID / field syntax, decoding errors placed on
their line, and gold sentences that are not trees, in the library and through the commands
(eval, oracle, prune learn, train, ensemble). Every error names the file and the line.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from paths import REPO

from dparse.conll import Sentence, read_conll, read_treebank, write_conll
from dparse.errors import InputError
from dparse.gold import check_trees, keep_gold_trees, read_gold, vote_trees
from dparse.trees import tree_problem


def _word(i: int | str, form: str = "w", head: int | str = 0, rel: str = "dep") -> str:
    return f"{i}\t{form}\t_\tX\tX\t_\t{head}\t{rel}\t_\t_\n"


def _sentence(heads: list[int], comment: str | None = None) -> str:
    """A CoNLL 10-column sentence with these heads (of words 1..n) and a blank line after."""
    lines = [f"# {comment}\n"] if comment else []
    lines += [_word(m, f"w{m}", h) for m, h in enumerate(heads, 1)]
    return "".join(lines) + "\n"


def _tmp(tmp_path: Path, data: str | bytes, name: str = "x.conllu") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _text(sentences: list[Sentence]) -> str:
    buf = io.StringIO()
    write_conll(sentences, buf)
    return buf.getvalue()


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def _error(path: Path | str, **kw: object) -> InputError:
    with pytest.raises(InputError) as err:
        read_treebank(path, **kw)
    return err.value


def dparse(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("DPARSE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "dparse", *args], input=stdin,
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)


# -- byte-order marks -------------------------------------------------------------------------

BOM_CASES = {
    "word": _word(1) + "\n" + _word(1, "b"),
    "comment": "# sent_id = 1\n" + _word(1) + _word(2, head=1),
    "blank-lines": "\n\r\n" + _word(1) + "\n",
    "crlf": (_word(1) + "\n").replace("\n", "\r\n"),
}


@pytest.mark.parametrize("text", BOM_CASES.values(), ids=BOM_CASES.keys())
def test_bom_is_accepted_and_written_back(tmp_path: Path, text: str) -> None:
    path = _tmp(tmp_path, "\ufeff" + text)
    sentences = read_treebank(path)
    plain = read_treebank(_tmp(tmp_path, text, "plain.conllu"))
    assert [s.form for s in sentences] == [s.form for s in plain]
    assert [s.heads.tolist() for s in sentences] == [s.heads.tolist() for s in plain]
    assert [s.comments for s in sentences] == [s.comments for s in plain]
    assert [s.lineno for s in sentences] == [s.lineno for s in plain]
    assert sentences[0].line_of(1) == plain[0].line_of(1)
    out = tmp_path / "out.conllu"
    write_conll(sentences, out)
    assert out.read_bytes() == path.read_bytes()
    relabeled = [s.with_parse(s.heads, ["", *["x"] * len(s)]) for s in sentences]
    assert _text(relabeled).startswith("\ufeff")


def test_bom_in_malttab_and_errors_after_it_keep_their_line(tmp_path: Path) -> None:
    path = _tmp(tmp_path, "\ufeffa\tDT\t2\nb\tNN\t0\n", "x.dp")
    (sent,) = read_treebank(path)
    assert sent.form == ["a", "b"] and _text([sent]) == "\ufeffa\tDT\t2\nb\tNN\t0\n"
    err = _error(_tmp(tmp_path, "\ufeff" + _word(1) + _word(2, head=7)))
    assert err.line == 2 and "out of range 0..2" in err.problem


def test_bom_in_the_middle_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = _tmp(tmp_path, "\ufeff" + _word(1) + "\n" + "\ufeff" + _word(1))
    err = _error(path)
    assert (err.path, err.line) == (str(path), 3)
    assert "byte-order mark" in err.problem and "concatenated" in err.problem


def test_utf8_bom_read_as_latin1_says_which_encoding_to_use(tmp_path: Path) -> None:
    path = _tmp(tmp_path, "\ufeff" + _word(1))
    err = _error(path, encoding="latin-1")
    assert err.line == 1 and "--encoding utf-8" in err.problem


# -- gzip, stdin, empty input --------------------------------------------------------------------

TEXT = _word(1, "a", 2) + _word(2, "b", 0) + "\n" + _word(1, "c")


@pytest.mark.parametrize("name", ["x.conllu", "x.conllu.gz", "noext"])
def test_gzip_is_recognized_by_its_bytes_whatever_the_name(tmp_path: Path, name: str) -> None:
    path = _tmp(tmp_path, gzip.compress(TEXT.encode()), name)
    sentences = read_treebank(path, fmt="conllu")
    assert [s.form for s in sentences] == [["a", "b"], ["c"]]
    assert _text(sentences) == TEXT


def test_a_plain_file_named_gz_is_read_as_text(tmp_path: Path) -> None:
    assert _text(read_treebank(_tmp(tmp_path, TEXT, "x.conllu.gz"))) == TEXT


def test_gzip_and_bom_on_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, gzip.compress(("\ufeff" + TEXT).encode()))
    sentences = read_treebank("-")
    assert sentences[0].source == "<stdin>" and sentences[0].fmt == "conllx"
    assert _text(sentences) == "\ufeff" + TEXT


@pytest.mark.parametrize(
    "damage",
    [
        lambda gz: gz[:-12],  # truncated
        lambda gz: gz[:-8] + bytes([gz[-8] ^ 1]) + gz[-7:],  # CRC mismatch
        lambda gz: gz[:12] + b"\xff" * 40 + gz[52:],  # corrupt deflate data
        lambda gz: gz + b"garbage",  # trailing bytes that are not a gzip member
    ],
    ids=["truncated", "crc", "corrupt", "trailing"],
)
def test_damaged_gzip_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: object
) -> None:
    data = damage(gzip.compress((TEXT + "\n").encode() * 50))  # type: ignore[operator]
    path = _tmp(tmp_path, data, "x.conllu")
    err = _error(path)
    assert err.path == str(path) and "corrupt or truncated gzip data" in err.problem
    _stdin(monkeypatch, data)
    err = _error("-")
    assert err.path == "<stdin>" and "corrupt or truncated gzip data" in err.problem


@pytest.mark.parametrize("data", [b"", b"\n\n", b"\r\n \t\n", "\ufeff".encode()])
def test_empty_input_has_no_sentences_from_stdin_and_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    assert read_treebank(_tmp(tmp_path, data, "noext")) == []
    assert read_treebank(_tmp(tmp_path, data, "x.conllu")) == []
    _stdin(monkeypatch, data)
    assert read_treebank("-") == []
    _stdin(monkeypatch, gzip.compress(data))
    assert read_treebank("-") == []


def test_closed_stdin_and_unknown_encoding_are_input_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    assert _error("-").path == "<stdin>"
    path = _tmp(tmp_path, TEXT)
    err = _error(path, encoding="bogus")
    assert err.path == str(path) and "unknown text encoding 'bogus'" in err.problem


# -- comments after the last sentence ----------------------------------------------------------

TRAILING = {
    "after-blank": _word(1) + "\n# the end\n",
    "no-final-newline": _word(1) + "\n# the end",
    "blank-lines-around": _word(1) + "\n\n# a\n\n# b\n\n",
    "no-blank": _word(1) + "# directly after\n",
    "two-sentences": _word(1) + "\n" + _word(1, "b") + "\n# the end\n",
    "crlf": (_word(1) + "\n# the end\n").replace("\n", "\r\n"),
}


@pytest.mark.parametrize("text", TRAILING.values(), ids=TRAILING.keys())
def test_comments_after_the_last_sentence_are_kept(tmp_path: Path, text: str) -> None:
    sentences = read_treebank(_tmp(tmp_path, text))
    assert len(sentences) == text.count("\tw\t") + text.count("\tb\t")
    assert _text(sentences) == text
    # written twice in a row, the comment stays a comment and every sentence is read back
    again = read_treebank(_tmp(tmp_path, _text(sentences + sentences), "twice.conllu"))
    assert [s.form for s in again] == [s.form for s in sentences] * 2


def test_comment_blocks_between_sentences_join_the_next_sentence(tmp_path: Path) -> None:
    text = _word(1, "a") + "\n# stray\n\n# sent_id = 2\n" + _word(1, "b") + "\n"
    first, second = read_treebank(_tmp(tmp_path, text))
    assert second.comments == ["# stray", "# sent_id = 2"]
    assert (second.lineno, second.line_of(1)) == (3, 6)
    assert _text([first, second]) == text


def test_comments_without_a_sentence_are_an_error(tmp_path: Path) -> None:
    path = _tmp(tmp_path, "\n# only\n# comments\n")
    err = _error(path)
    assert (err.path, err.line) == (str(path), 2) and "no sentence" in err.problem


def test_separator_without_final_newline_is_completed_when_writing(tmp_path: Path) -> None:
    (sent,) = read_treebank(_tmp(tmp_path, _word(1) + "\n   "))
    assert _text([sent]) == _word(1) + "\n   "
    again = read_treebank(_tmp(tmp_path, _text([sent, sent]), "twice.conllu"))
    assert len(again) == 2


# -- strict syntax -------------------------------------------------------------------------------

BAD_HEADS = ["0_1", "+1", " 1", "1 ", "\uff11", "\u0661", "1.0", "01", "00", "-1", "1e0", "0x1",
             "one", "\u00b2"]


@pytest.mark.parametrize("head", BAD_HEADS)
@pytest.mark.parametrize("require_heads", [True, False])
def test_head_must_be_a_plain_decimal_integer(
    tmp_path: Path, head: str, require_heads: bool
) -> None:
    path = _tmp(tmp_path, _word(1) + _word(2, head=head) + _word(3, head=1))
    err = _error(path, require_heads=require_heads)
    assert (err.path, err.line) == (str(path), 2)
    assert err.problem.startswith(f"HEAD {head!r} is not a word ID")
    assert "0..3" in err.problem and ("or _" in err.problem) != require_heads


def test_head_out_of_range_and_huge(tmp_path: Path) -> None:
    for head in ("4", "99999999999999999999"):
        err = _error(_tmp(tmp_path, _word(1) + _word(2, head=1) + _word(3, head=head)))
        assert err.line == 3 and err.problem == f"HEAD {head} is out of range 0..3"


def test_missing_head_says_what_the_file_needs(tmp_path: Path) -> None:
    err = _error(_tmp(tmp_path, _word(1) + _word(2, head="_")))
    assert err.line == 2 and "needs a HEAD (0..2) for every word" in err.problem
    assert "require_heads" not in str(err)
    err = _error(_tmp(tmp_path, "a\tDT\t2\nb\tNN\n", "x.dp"))
    assert err.line == 2 and "needs a HEAD for every word" in err.problem


BAD_IDS = {
    "leading-zero": ("01", "malformed ID '01'"),
    "fullwidth": ("\uff11", "malformed ID"),
    "plus": ("+1", "malformed ID"),
    "space": (" 1", "malformed ID"),
    "range-leading-zero": ("01-2", "malformed multiword token range"),
    "range-arabic-digit": ("\u0661-2", "malformed multiword token range"),
    "range-three-parts": ("1-2-3", "malformed multiword token range"),
    "empty-node-leading-zero": ("0.01", "malformed empty node ID"),
    "empty-node-fullwidth": ("0.\uff11", "malformed empty node ID"),
}


@pytest.mark.parametrize(("tok", "problem"), BAD_IDS.values(), ids=BAD_IDS.keys())
def test_ids_are_strict(tmp_path: Path, tok: str, problem: str) -> None:
    path = _tmp(tmp_path, "# c\n" + f"{tok}\tx\t_\t_\t_\t_\t_\t_\t_\t_\n" + _word(1) + _word(2))
    err = _error(path)
    assert (err.path, err.line) == (str(path), 2) and problem in err.problem


@pytest.mark.parametrize("column", range(10))
def test_empty_fields_name_their_column(tmp_path: Path, column: int) -> None:
    cols = _word(2, head=1).rstrip("\n").split("\t")
    cols[column] = ""
    path = _tmp(tmp_path, _word(1) + "\t".join(cols) + "\n", "x.conll")
    err = _error(path)
    names = ["ID", "FORM", "LEMMA", "CPOSTAG", "POSTAG", "FEATS", "HEAD", "DEPREL", "PHEAD",
             "PDEPREL"]
    assert err.line == 2 and err.problem.startswith(f"empty {names[column]} field")
    assert f"(column {column + 1})" in err.problem


@pytest.mark.parametrize(("line", "column"), [("\tNN\t0\n", "FORM"), ("a\t\t0\n", "POS"),
                                              ("a\tNN\t0\t\n", "DEPREL")])
def test_empty_malttab_fields(tmp_path: Path, line: str, column: str) -> None:
    err = _error(_tmp(tmp_path, "b\tNN\t0\n" + line, "x.dp"))
    assert err.line == 2 and err.problem.startswith(f"empty {column} field")


def test_errors_on_stdin_name_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, (_word(1) + _word(2, head="0_1")).encode())
    err = _error("-")
    assert str(err) == "<stdin>:2: HEAD '0_1' is not a word ID: expected a plain decimal " \
        "integer 0..2"


# -- undecodable bytes ---------------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("where", ["file", "gzip", "stdin"])
def test_undecodable_byte_names_its_line_across_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newline: str, where: str
) -> None:
    """The reader decodes in chunks of a few KB: bad bytes far into the input, on lines that
    straddle chunk boundaries, are still placed on their line."""
    lines = (_word(1, "w" * 30) + _word(2, "w" * 30, 1) + "\n").replace("\n", newline) * 600
    rows = lines.encode().split(newline.encode())
    for bad_line in (1, 2, 500, 1001, len(rows) - 2):  # word lines; every third is blank
        data_rows = list(rows)
        data_rows[bad_line - 1] = data_rows[bad_line - 1].replace(b"\tw", b"\t\xe9", 1)
        assert data_rows[bad_line - 1] != rows[bad_line - 1]
        data = newline.encode().join(data_rows)
        if where == "gzip":
            data = gzip.compress(data)
        if where == "stdin":
            _stdin(monkeypatch, data)
            err = _error("-", fmt="conllu")
        else:
            err = _error(_tmp(tmp_path, data, "x.conllu"))
        assert err.line == bad_line, (bad_line, err)
        assert "--encoding latin-1" in err.problem


# -- gold trees ----------------------------------------------------------------------------------

NOT_TREES = {
    "cycle": ([2, 3, 2, 0], "cycle through words"),
    "self-loop": ([0, 2, 1], "word 2 is its own head"),
    "no-root": ([2, 3, 1], "cycle through words"),
    "two-roots": ([0, 1, 0], "2 words attached to the root"),
}


@pytest.mark.parametrize(("heads", "problem"), NOT_TREES.values(), ids=NOT_TREES.keys())
def test_gold_sentence_that_is_not_a_tree_names_file_line_and_problem(
    tmp_path: Path, heads: list[int], problem: str
) -> None:
    text = _sentence([0, 1]) + _sentence(heads, "sent_id = 2") + _sentence([0])
    path = _tmp(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_gold(path, "testing")
    assert (err.value.path, err.value.line) == (str(path), 4)
    assert err.value.problem.startswith("gold sentence 2: the heads are not a tree: ")
    assert problem in err.value.problem


def test_several_roots_are_allowed_in_conllx_but_not_in_conllu(tmp_path: Path) -> None:
    text = _sentence([0, 1, 0])
    assert len(read_gold(_tmp(tmp_path, text, "x.conll"), "testing")) == 1
    assert len(read_gold(_tmp(tmp_path, "a\tX\t0\nb\tX\t0\n", "x.dp"), "testing")) == 1
    with pytest.raises(InputError, match="CoNLL-U sentences have a single root"):
        read_gold(_tmp(tmp_path, text, "x.conllu"), "testing")


def test_real_conllx_data_with_several_roots_is_accepted(data: Path) -> None:
    path = data / "conll2007_nltk" / "eus.test"
    sentences = read_gold(path, "testing", encoding="latin-1")
    assert len(sentences) == 580
    assert sum(int((s.heads[1:] == 0).sum()) > 1 for s in sentences) > 100


def test_skipping_counts_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = _sentence([0]) + _sentence([2, 1]) + _sentence([0, 1]) + _sentence([0, 0])
    path = _tmp(tmp_path, text)
    flags = [ok for _, ok in check_trees(read_conll(path), skip_invalid=True)]
    assert flags == [True, False, True, False]
    err = capsys.readouterr().err
    assert f"{path}: skipped 2 of 4 gold sentences whose heads are not a tree" in err
    assert "the first at line 3: cycle through words [1, 2]" in err
    assert [len(s) for s in read_gold(path, "testing", skip_invalid=True)] == [1, 2]


def test_empty_or_fully_skipped_gold_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no sentences: training needs at least one"):
        read_gold(_tmp(tmp_path, ""), "training")
    path = _tmp(tmp_path, _sentence([1]), "bad.conllu")
    with pytest.raises(InputError, match="no sentences left once .* skipped: training"):
        read_gold(path, "training", skip_invalid=True)


def test_keep_gold_trees_drops_the_same_sentences_of_every_parse(tmp_path: Path) -> None:
    gold = read_treebank(_tmp(tmp_path, _sentence([0]) + _sentence([1]) + _sentence([0, 1])))
    sys1 = [s.with_parse(np.arange(-1, len(s)), s.deprels) for s in gold]
    kept, (parses,) = keep_gold_trees(gold, [sys1], skip_invalid=True)
    assert kept == [gold[0], gold[2]] and parses == [sys1[0], sys1[2]]
    # a parse with another sentence count is left whole, for the alignment check to report
    kept, (parses,) = keep_gold_trees(gold, [sys1[:2]], skip_invalid=True)
    assert kept == gold and parses == sys1[:2]
    with pytest.raises(InputError, match="gold sentence 2"):
        keep_gold_trees(gold, [sys1])


def test_vote_trees_keeps_the_place_of_a_skipped_tree(tmp_path: Path) -> None:
    path = _tmp(tmp_path, _sentence([0, 1]) + _sentence([2, 1]))
    first, second = vote_trees(read_conll(path), skip_invalid=True)
    assert first.heads.tolist() == [-1, 0, 1] and second.heads.tolist() == [-1, -1, -1]
    assert second.form == ["w1", "w2"]
    with pytest.raises(InputError, match="other parse sentence 2: the heads are not a tree"):
        list(vote_trees(read_conll(path)))


def test_tree_problem() -> None:
    assert tree_problem([-1, 0, 1]) is None
    assert tree_problem([-1, 0, 0]) is None
    assert tree_problem([-1, 0, 0], single_root=True) == (
        "2 words attached to the root [1, 2], expected exactly one")
    assert tree_problem([-1, 2, 1]) == "cycle through words [1, 2]"


# -- through the command line ----------------------------------------------------------------


@pytest.fixture
def cycle(tmp_path: Path) -> tuple[Path, Path]:
    """A gold file whose second sentence (line 4) has a cycle, and a system file."""
    gold = _tmp(tmp_path, _sentence([0, 1]) + _sentence([2, 3, 2, 0]) + _sentence([0, 1]),
                "gold.conllu")
    system = _tmp(tmp_path, _sentence([0, 1]) + _sentence([0, 1, 1, 1]) + _sentence([2, 0]),
                  "sys.conllu")
    return gold, system


def _assert_fails_on_line(run: subprocess.CompletedProcess, path: Path, line: int,
                          problem: str) -> None:
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"dparse: error: {path}:{line}: ")
    assert problem in run.stderr and "Traceback" not in run.stderr


def test_eval_refuses_or_skips_a_gold_cycle(cycle: tuple[Path, Path]) -> None:
    gold, system = cycle
    run = dparse("eval", str(gold), str(system), "--json")
    _assert_fails_on_line(run, gold, 4, "gold sentence 2: the heads are not a tree: cycle")
    run = dparse("eval", str(gold), str(system), "--json", "--skip-invalid-trees")
    assert run.returncode == 0, run.stderr
    assert "skipped 1 of 3 gold sentences" in run.stderr
    assert '"sentences": 2' in run.stdout and '"uas": 50.0' in run.stdout


def test_oracle_refuses_or_skips_a_gold_cycle(cycle: tuple[Path, Path]) -> None:
    gold, system = cycle
    run = dparse("oracle", str(gold), str(system), str(system))
    _assert_fails_on_line(run, gold, 4, "cycle through words")
    run = dparse("oracle", str(gold), str(system), str(system), "--skip-invalid-trees",
                 "--json")
    assert run.returncode == 0 and "skipped 1 of 3 gold sentences" in run.stderr


def test_prune_learn_refuses_cycles_and_empty_treebanks(
    cycle: tuple[Path, Path], tmp_path: Path
) -> None:
    gold, _ = cycle
    out = tmp_path / "dict.json"
    _assert_fails_on_line(dparse("prune", "learn", str(gold), "-o", str(out)), gold, 4, "cycle")
    assert not out.exists()
    run = dparse("prune", "learn", str(gold), "-o", str(out), "--skip-invalid-trees")
    assert run.returncode == 0 and out.exists() and "skipped 1 of 3" in run.stderr
    empty = _tmp(tmp_path, "", "empty.conllu")
    run = dparse("prune", "learn", str(empty), "-o", str(tmp_path / "e.json"))
    assert run.returncode == 2 and f"{empty}: no sentences" in run.stderr


def test_eval_of_an_empty_file_names_the_other_file(cycle: tuple[Path, Path],
                                                    tmp_path: Path) -> None:
    _, system = cycle
    empty = _tmp(tmp_path, "", "empty.conllu")
    run = dparse("eval", str(empty), str(system))
    assert run.returncode == 2 and "<gold>" not in run.stderr
    assert f"{system}: system has 3 sentences but the gold file has none" in run.stderr
    run = dparse("eval", str(system), str(empty))
    assert run.returncode == 2 and "<system>" not in run.stderr
    assert f"{system}: gold has 3 sentences but the system file has none" in run.stderr


def test_eval_reads_gzip_and_bom_from_stdin(cycle: tuple[Path, Path], tmp_path: Path) -> None:
    _, system = cycle
    data = gzip.compress(b"\xef\xbb\xbf" + system.read_bytes())
    run = subprocess.run([sys.executable, "-m", "dparse", "eval", "-", str(system), "--json"],
                         input=data, capture_output=True, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr
    assert b'"uas": 100.0' in run.stdout


@pytest.fixture(scope="module")
def small_treebank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with train.conllu (8 sentences), a config naming it and a tiny model."""
    folder = tmp_path_factory.mktemp("strict")
    sentences = [_sentence([0, 1, 2]), _sentence([2, 0, 2, 3]), _sentence([0, 1])] * 3
    _tmp(folder, "".join(sentences[:8]), "train.conllu")
    _tmp(folder, "".join(sentences[:3]), "dev.conllu")
    _tmp(folder, "name: tiny\ndata:\n  train: train.conllu\n  dev: dev.conllu\n"
         "features:\n  arc_bits: 12\n  label_bits: 8\ntraining:\n  epochs: 1\n", "tiny.yaml")
    run = dparse("train", str(folder / "tiny.yaml"), "--out", str(folder / "model"),
                 "--data-root", str(folder), "-q")
    assert run.returncode == 0, run.stderr
    return folder


def test_train_refuses_or_skips_gold_that_is_not_a_tree(small_treebank: Path,
                                                        tmp_path: Path) -> None:
    bad = _tmp(tmp_path, _sentence([0, 1]) * 3 + _sentence([0, 3, 2]), "bad.conllu")
    config = str(small_treebank / "tiny.yaml")
    common = ("--data-root", str(small_treebank), "-q")
    run = dparse("train", config, "--out", str(tmp_path / "m"), *common,
                 "--set", f"data.train={bad}")
    _assert_fails_on_line(run, bad, 10, "gold sentence 4: the heads are not a tree: cycle")
    assert not (tmp_path / "m").exists()
    run = dparse("train", config, "--out", str(tmp_path / "m"), *common,
                 "--set", f"data.dev={bad}", "--set", "data.skip_invalid_trees=true")
    assert run.returncode == 0, run.stderr
    assert f"{bad}: skipped 1 of 4 gold sentences" in run.stderr


def test_train_refuses_an_empty_train_or_dev_file(small_treebank: Path, tmp_path: Path) -> None:
    empty = _tmp(tmp_path, "\n", "empty.conllu")
    config = str(small_treebank / "tiny.yaml")
    for key, role in (("train", "training (data.train)"), ("dev", "model selection")):
        run = dparse("train", config, "--out", str(tmp_path / "m"), "--data-root",
                     str(small_treebank), "-q", "--set", f"data.{key}={empty}")
        assert run.returncode == 2 and "Traceback" not in run.stderr
        assert f"dparse: error: {empty}: no sentences: {role}" in run.stderr


def test_ensemble_refuses_or_ignores_an_other_parse_that_is_not_a_tree(
    small_treebank: Path, tmp_path: Path
) -> None:
    text = _sentence([0, 1, 2]) + _sentence([2, 0, 2, 3])
    source = _tmp(tmp_path, text, "in.conllu")
    other = _tmp(tmp_path, _sentence([0, 1, 2]) + _sentence([2, 0, 4, 3]), "other.conllu")
    args = ("ensemble", str(small_treebank / "model"), str(source), "--other", str(other),
            "--decoder", "cle")
    run = dparse(*args)
    _assert_fails_on_line(run, other, 5, "other parse sentence 2: the heads are not a tree")
    run = dparse(*args, "-o", str(tmp_path / "out.conllu"), "--skip-invalid-trees")
    assert run.returncode == 0, run.stderr
    assert "skipped 1 of 2 other parse sentences" in run.stderr
    assert [s.form for s in read_treebank(tmp_path / "out.conllu")] == [
        ["w1", "w2", "w3"], ["w1", "w2", "w3", "w4"]]
