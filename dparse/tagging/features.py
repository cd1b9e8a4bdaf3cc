"""What the tagger's features read: word atoms and the templates of each column.

A word's *atoms* (:data:`ATOMS`) are stable 64-bit hashes of strings made from its form
(:func:`dparse.tagging.tagger.hash_strings`), computed once per word type: the form, the form
lower-cased, its prefixes and suffixes of 1 to 4 and 1 to 5 characters (of the lower-cased form;
shorter words repeat their whole form), its shape (each upper-case letter ``X``, lower-case ``x``,
digit ``d``, other characters kept, runs cut to two) and its *ambiguity class*: the UPOS tags the
training data gave the type (``?`` for a type not seen there), which stands in for the tags of
words not yet predicted (to the right).

A template (:data:`TEMPLATES`) conjoins one to three parts, each an atom or a column (``D``
the draft UPOS, ``U`` UPOS, ``X`` XPOS, ``F`` FEATS, ``L`` the lemma rule) at an offset from
the word (``-1``: the word before). The column being predicted is read to the left only
(greedy left to right); columns predicted before it are read anywhere: the UPOS pass reads the
draft pass's tags of the words to its right, which a left-to-right pass has not predicted yet.
The bias is the template ``(("bias", 0),)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dparse.tagging.tagger import TEMPLATE_WIDTH, form_atoms, hash_strings

# The columns in the order they are predicted; ``draft`` is a first UPOS pass, whose tags of
# the words to the right the UPOS pass reads (never written out).
COLUMNS = ("draft", "upos", "xpos", "feats", "lemma")
DRAFT = "draft"
COLUMN_LETTERS = {"D": 0, "U": 1, "X": 2, "F": 3, "L": 4}
LETTER_OF = {name: letter for letter, name in zip("DUXFL", COLUMNS, strict=True)}
ATOMS = ("bias", "form", "lower", "p1", "p2", "p3", "p4", "s1", "s2", "s3", "s4", "s5", "shape",
         "amb")
UNKNOWN_CLASS = "?"


Part = tuple[str, int]
Template = tuple[Part, ...]

_WORD = (
    (("bias", 0),), (("form", 0),), (("lower", 0),),
    (("p1", 0),), (("p2", 0),), (("p3", 0),), (("p4", 0),),
    (("s1", 0),), (("s2", 0),), (("s3", 0),), (("s4", 0),), (("s5", 0),),
    (("shape", 0),), (("amb", 0),),
)
_CONTEXT = (
    (("lower", -1),), (("lower", 1),), (("lower", -2),), (("lower", 2),),
    (("s3", -1),), (("s3", 1),), (("shape", -1),), (("shape", 1),),
    (("amb", 1),), (("amb", 2),), (("amb", -1),),
    (("lower", -1), ("lower", 0)), (("lower", 0), ("lower", 1)),
    (("amb", 0), ("amb", 1)), (("shape", 0), ("s3", 0)),
)
_TAG_HISTORY = (  # the tags to the left (of the pass's own column)
    (("U", -1),), (("U", -2), ("U", -1)), (("U", -1), ("lower", 0)),
    (("amb", 0), ("U", -1)), (("U", -1), ("amb", 1)),
)
_DRAFT_RIGHT = (  # the draft's tags of the words to the right, and of the word itself
    (("D", 1),), (("D", 2),), (("D", 1), ("D", 2)), (("U", -1), ("D", 1)),
    (("D", 1), ("lower", 0)), (("D", 1), ("s3", 0)), (("D", 0),), (("D", 0), ("D", 1)),
    (("U", -1), ("D", 0), ("D", 1)),
)


def _as_draft(templates: tuple[Template, ...]) -> tuple[Template, ...]:
    return tuple(tuple(("D" if src == "U" else src, off) for src, off in t) for t in templates)


TEMPLATES: dict[str, tuple[Template, ...]] = {
    "draft": _as_draft(_WORD + _CONTEXT + _TAG_HISTORY),
    "upos": _WORD + _CONTEXT + _TAG_HISTORY + (
        (("U", -1), ("s3", 0)), (("U", -2), ("U", -1), ("amb", 0)), (("shape", 0), ("U", -1)),
    ) + _DRAFT_RIGHT,
    "xpos": _WORD + _CONTEXT + (
        (("U", 0),), (("U", 0), ("lower", 0)), (("U", 0), ("s2", 0)), (("U", 0), ("s3", 0)),
        (("U", -1),), (("U", 1),), (("U", 0), ("U", 1)), (("U", -1), ("U", 0)),
        (("X", -1),), (("X", -2), ("X", -1)), (("X", -1), ("U", 0)),
    ),
    "feats": _WORD + (
        (("lower", -1),), (("lower", 1),), (("s3", -1),), (("s3", 1),),
        (("U", 0),), (("X", 0),), (("U", 0), ("lower", 0)), (("X", 0), ("lower", 0)),
        (("U", 0), ("s1", 0)), (("U", 0), ("s2", 0)), (("U", 0), ("s3", 0)),
        (("U", 0), ("s4", 0)), (("U", 0), ("X", 0)),
        (("U", -1),), (("U", 1),), (("X", -1),), (("X", 1),), (("U", -2), ("U", -1)),
        (("F", -1),), (("F", -1), ("U", 0)), (("U", 0), ("U", -1), ("U", 1)),
    ),
    "lemma": (
        (("bias", 0),), (("form", 0),), (("lower", 0),),
        (("s1", 0),), (("s2", 0),), (("s3", 0),), (("s4", 0),), (("s5", 0),),
        (("p1", 0),), (("p2", 0),), (("shape", 0),),
        (("U", 0),), (("X", 0),), (("F", 0),), (("U", 0), ("F", 0)),
        (("U", 0), ("s1", 0)), (("U", 0), ("s2", 0)), (("U", 0), ("s3", 0)),
        (("U", 0), ("s4", 0)), (("U", 0), ("lower", 0)), (("F", 0), ("s3", 0)),
    ),
}
#: The version of the tagger's features: what the atoms and the template parts read and how a
#: feature is keyed (dparse/tagging/tagger.pyx), saved with every tagger (dparse.templates). A
#: tagger keeps its columns' template lists (tagger.bin), so other lists in TEMPLATES need no
#: new version; a change that gives a template of a saved tagger other features does.
TEMPLATES_VERSION = 1


def template_array(templates: Sequence[Template], column: str) -> np.ndarray:
    """Templates as the int32 [F, 7] rows of :mod:`dparse.tagging.tagger` for ``column``."""
    rows = np.zeros((len(templates), TEMPLATE_WIDTH), dtype=np.int32)
    own = COLUMN_LETTERS[LETTER_OF[column]]
    for f, template in enumerate(templates):
        if not 1 <= len(template) <= 3:
            raise ValueError(f"template {template}: 1 to 3 parts")
        rows[f, 0] = len(template)
        for p, (source, offset) in enumerate(template):
            if source in COLUMN_LETTERS:
                index = len(ATOMS) + COLUMN_LETTERS[source]
                if COLUMN_LETTERS[source] == own and offset >= 0:
                    raise ValueError(f"template {template}: {column} is read to the left only")
                if COLUMN_LETTERS[source] > own:
                    raise ValueError(f"template {template}: {source} is predicted after "
                                     f"{column}")
            elif source in ATOMS:
                index = ATOMS.index(source)
            else:
                raise ValueError(f"template {template}: unknown source {source!r}")
            rows[f, 1 + 2 * p] = index
            rows[f, 2 + 2 * p] = offset
    return rows


def word_shape(form: str) -> str:
    """``Xx``-style shape of a form: upper ``X``, lower ``x``, digit ``d``, other characters
    kept; runs of one symbol cut to two (``McDonald's`` -> ``XxXxx'x``)."""
    out: list[str] = []
    for ch in form:
        symbol = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if len(out) >= 2 and out[-1] == symbol and out[-2] == symbol:
            continue
        out.append(symbol)
    return "".join(out)


def ambiguity_atoms(classes: Sequence[str]) -> np.ndarray:
    """The ``amb`` atoms of ambiguity classes (uint64, as :func:`word_atoms` makes them)."""
    return hash_strings(["a" + amb for amb in classes])


def word_atoms(forms: Sequence[str], ambiguity: Sequence[str] | None = None) -> np.ndarray:
    """The atoms of word types: uint64 [len(forms), len(ATOMS)]; ``ambiguity[i]`` is the
    type's ambiguity class (None: :data:`UNKNOWN_CLASS` for all, types not seen in training).
    Atom a of a form is the :func:`~dparse.tagging.tagger.hash_strings` hash of a string made of
    a tag and a part of the form (:func:`atom_strings`), hashed without building it."""
    ambiguity = ambiguity if ambiguity is not None else [UNKNOWN_CLASS] * len(forms)
    return form_atoms(list(forms), list(ambiguity))


def atom_strings(form: str, ambiguity: str) -> list[str]:
    """The strings whose hashes are the atoms of ``form`` (in the order of :data:`ATOMS`)."""
    lower = form.lower()
    return ["b", "f" + form, "l" + lower,
            "p1" + lower[:1], "p2" + lower[:2], "p3" + lower[:3], "p4" + lower[:4],
            "s1" + lower[-1:], "s2" + lower[-2:], "s3" + lower[-3:], "s4" + lower[-4:],
            "s5" + lower[-5:], "h" + word_shape(form), "a" + ambiguity]
