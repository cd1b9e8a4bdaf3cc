"""Multiword tokens into words (dparse.tokenizing.expander)."""

from __future__ import annotations

from dparse.tokenizing.expander import Expander, learn_expander, rule_of
from dparse.tokenizing.rawtext import Token


def tok(form: str, *words: str) -> Token:
    return Token(form, list(words) or [form], "_")


GERMAN = [tok("zum", "zu", "dem"), tok("zum", "zu", "dem"), tok("Zum", "Zu", "dem"),
          tok("beim", "bei", "dem"), tok("beim", "bei", "dem"), tok("im", "in", "dem"),
          tok("Haus"), tok("dem"), tok("warum"), tok("warum")]


def test_a_rule_rewrites_the_form_into_its_words() -> None:
    assert rule_of("zum", ["zu", "dem"]) == (1, "", ("dem",))
    assert rule_of("pelo", ["por", "o"]) == (3, "or", ("o",))
    assert rule_of("Don't", ["Do", "n't"]) == (3, "", ("n't",))


def test_training_expansions_are_kept_and_their_casing_followed() -> None:
    e = learn_expander(GERMAN)
    assert e.words("zum") == ["zu", "dem"]
    assert e.words("Zum") == ["Zu", "dem"]
    assert e.words("ZUM") == ["ZU", "DEM"]
    assert e.words("Haus") == ["Haus"] and e.words("dem") == ["dem"]


def test_a_form_training_left_whole_more_often_stays_whole() -> None:
    e = learn_expander([tok("nos", "em", "os"), tok("nos"), tok("nos")])
    assert e.words("nos") == ["nos"]
    e = learn_expander([tok("nos", "em", "os"), tok("nos", "em", "os"), tok("nos")])
    assert e.words("nos") == ["em", "os"]


def test_unseen_forms_take_the_rule_of_their_longest_decided_suffix() -> None:
    # "-eim" and "-m" vote for (cut 1, add "", rest "dem") ... but "warum" ends in "um" too:
    # "um" has two votes for the rule (zum, zum, Zum: three) and two for whole (warum x2)
    e = learn_expander(GERMAN)
    assert e.words("heim") == ["hei", "dem"]  # suffix "eim" (beim x2)
    assert e.words("Xyz") == ["Xyz"]  # no suffix decided
    assert e.words("darum") == ["darum"]  # "rum": warum x2, whole


def test_a_suffix_seen_once_whole_keeps_an_unseen_form_whole() -> None:
    # "pelas" x2 votes "-elas", "-las", "-as" and "-s" for its rule (3 votes against 1);
    # "tabelas", once, votes "-belas" and "-abelas" for whole: one vote is enough for whole
    e = learn_expander([tok("pelas", "por", "as"), tok("pelas", "por", "as"),
                        tok("tabelas")])
    assert e.words("mesabelas") == ["mesabelas"]  # "abelas": tabelas, whole
    assert e.words("xpelas") == ["xpor", "as"]  # "pelas": the rule, seen twice
    # a split seen once is no rule: min_count holds for splits
    e = learn_expander([tok("dela", "de", "ela"), tok("tabelas")])
    assert e.words("xdela") == ["xdela"]


def test_the_expander_is_saved_and_read_back_alike() -> None:
    e = learn_expander(GERMAN)
    back = Expander.from_dict(e.as_dict())
    for form in ["zum", "Zum", "heim", "darum", "im", "Haus", "ZUM", "x"]:
        assert back.words(form) == e.words(form)
