"""The raw text of a treebank file, its layout and UD's spacing marks
(dparse.tokenizing.rawtext)."""

from __future__ import annotations

import itertools

import pytest

from dparse.conll import read_treebank
from dparse.errors import InputError
from dparse.tokenizing.rawtext import (
    escape_spaces,
    layout,
    raw_text,
    rebuild_text,
    spaces_after,
    spaces_before,
    spacing_misc,
    tokens_of,
    unescape_spaces,
)

WHITE = [" ", "\t", "\n", "\r", "\u00a0", "\u3000", "\x0b", "\x0c", "\x1c", "\x1f", "\x85",
         "\u2028", "\u2029"]

TREEBANK = """\
# newdoc id = d1
# newpar
# sent_id = 1
# text = Don't stop.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\t_\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\t_\t_\t3\tadvmod\t_\t_
3\tstop\tstop\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = 2
# text = Go on
1\tGo\tgo\tVERB\t_\t_\t0\troot\t_\t_
1.1\tgone\t_\t_\t_\t_\t_\t_\t0:root\t_
2\ton\ton\tADP\t_\t_\t1\tcompound:prt\t_\tSpaceAfter=No

# newpar
# sent_id = 3
# text = Yes  sir
1\tYes\tyes\tINTJ\t_\t_\t0\troot\t_\tSpacesAfter=\\s\\s
2\tsir\tsir\tNOUN\t_\t_\t1\tvocative\t_\t_

# newdoc
# sent_id = 4
# text = End.
1\tEnd\tend\tNOUN\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\tSpaceAfter=No

"""


@pytest.fixture
def sentences(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text(TREEBANK, encoding="utf-8")
    return read_treebank(path, require_heads=False)


def test_the_raw_text_joins_text_lines_by_the_paragraph_and_document_marks(sentences) -> None:
    # sentence 2 follows one without SpaceAfter=No: a space; 3 starts a paragraph: a line
    # break; 4 a document: a blank line; the text ends with a line break
    assert raw_text(sentences) == "Don't stop. Go on\nYes  sir\n\nEnd.\n"


def test_sentences_follow_each_other_without_space_after_space_after_no(tmp_path) -> None:
    path = tmp_path / "t.conllu"
    path.write_text("# text = A\n1\tA\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No\n\n"
                    "# text = B\n1\tB\t_\t_\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    assert raw_text(read_treebank(path, require_heads=False)) == "AB\n"


def test_the_layout_of_the_tokens_is_the_raw_text_where_text_lines_agree(sentences) -> None:
    lay = layout(sentences)
    assert lay.text == raw_text(sentences)
    assert [lay.text[s:e] for s, e in lay.token_spans] == [t.form for t in lay.tokens]
    assert [t.form for t in lay.tokens] == ["Don't", "stop", ".", "Go", "on", "Yes", "sir",
                                            "End", "."]
    assert lay.sentence_ends == [2, 4, 6, 8]


def test_tokens_keep_multiword_ranges_and_leave_out_empty_nodes(sentences) -> None:
    tokens = tokens_of(sentences[0])
    assert [(t.form, t.words) for t in tokens] == [("Don't", ["Do", "n't"]), ("stop", ["stop"]),
                                                   (".", ["."])]
    assert [t.words for t in tokens_of(sentences[1])] == [["Go"], ["on"]]


def test_a_sentence_without_text_is_an_error_naming_its_line(tmp_path) -> None:
    path = tmp_path / "t.conllu"
    path.write_text("# text = A\n1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
                    "1\tB\t_\t_\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"t\.conllu:4: .*# text"):
        raw_text(read_treebank(path, require_heads=False))


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_every_run_of_white_space_survives_the_spacing_marks(size: int) -> None:
    for run in itertools.product([*WHITE, "|", "\\"][:15] if size < 3 else WHITE[:6],
                                 repeat=size):
        spaces = "".join(run)
        if "|" in spaces or "\\" in spaces:
            assert unescape_spaces(escape_spaces(spaces)) == spaces
            continue
        misc = "|".join(spacing_misc(spaces, before=spaces)) or "_"
        assert "\n" not in misc and "\r" not in misc and " " not in misc
        assert len(misc.splitlines()) == 1, repr(misc)
        assert spaces_after(misc) == spaces
        assert spaces_before(misc) == spaces


def test_one_space_needs_no_mark_and_none_is_space_after_no() -> None:
    assert spacing_misc(" ") == []
    assert spacing_misc("") == ["SpaceAfter=No"]
    assert spacing_misc("\n") == ["SpacesAfter=\\n"]
    assert spaces_after("_") == " " and spaces_after("SpaceAfter=No|X=1") == ""


def test_rebuilding_a_gold_file_gives_its_tokens_and_their_spacing(sentences) -> None:
    # the gold file marks nothing between sentences: rebuilt, each sentence's last token
    # gives its own spacing (one space unless SpaceAfter=No)
    assert rebuild_text(sentences) == "Don't stop. Go onYes  sir End."
