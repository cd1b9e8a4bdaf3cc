"""Which POS column a parser reads, and which of its tags are prepositions and coordinators,
decided from the training data when the config says ``auto`` (the default).

Column (``features.tag: auto``, :func:`choose_column`): XPOS when it is filled in (at least
``MIN_XPOS_FILLED`` of the tokens have an XPOS other than ``_``) and not too fine (at most
``MAX_XPOS_TAGS`` distinct tags), else UPOS. da_ddt (XPOS ``_`` on 99% of the tokens) and the
treebanks with hundreds of XPOS tags (sv_talbanken, nl_alpino, bg_btb, sl_ssj, pt_bosque) get
UPOS; en_ewt (49 PTB tags) gets XPOS.

Word classes (``features.prepositions`` / ``features.coordinators: auto``,
:func:`auto_word_classes`), the first rule that applies:

1. the column is UPOS: the universal tags ``ADP`` and ``CCONJ`` (``CONJ``, UD v1);
2. the column is XPOS with Penn Treebank tags (``IN`` and ``CC`` both seen): ``IN`` and ``CC``;
3. the column is another XPOS tag set: the XPOS tags whose training tokens are most often
   UPOS ``ADP`` (prepositions) or ``CCONJ``/``CONJ`` (coordinators), e.g. ``Postp`` and
   ``Conj`` on tr_imst, ``APPR``, ``APPRART`` and ``KON`` on de_gsd.

A class may come out empty (a CoNLL-X file whose CPOSTAG column holds no universal tags): the
features that need it then never fire. An explicit space-separated list in the config wins;
an empty one (``--set features.prepositions=``) means no tags. The resolved column and tags are
stored in the model, so that parsing reads the column training read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from dparse.conll import Sentence

AUTO = "auto"
COLUMNS = ("upos", "xpos")
MAX_XPOS_TAGS = 64  # "auto" uses XPOS when it has at most this many tags ...
MIN_XPOS_FILLED = 0.9  # ... and at least this share of the tokens have one (not "_")
MISSING = frozenset({"_", ""})
UD_PREPOSITIONS = ("ADP",)
UD_COORDINATORS = ("CCONJ", "CONJ")  # CONJ: UD v1
PTB_PREPOSITIONS = ("IN",)
PTB_COORDINATORS = ("CC",)


def choose_column(sentences: Sequence[Sentence]) -> str:
    """"xpos" when XPOS is filled in and not too fine (module doc), else "upos"."""
    tags = Counter(x for s in sentences for x in s.xpos)
    total = sum(tags.values())
    filled = total - sum(tags[m] for m in MISSING)
    real = len(set(tags) - MISSING)
    if total == 0 or filled < MIN_XPOS_FILLED * total or real > MAX_XPOS_TAGS:
        return "upos"
    return "xpos"


def resolve_column(setting: str, sentences: Sequence[Sentence]) -> str:
    """The column a ``features.tag`` setting names: ``upos``/``xpos`` as is, ``auto`` chosen
    from ``sentences`` (the training data)."""
    if setting == AUTO:
        return choose_column(sentences)
    if setting not in COLUMNS:
        raise ValueError(f"unknown POS column {setting!r}; use auto, upos or xpos")
    return setting


def _majority_tags(sentences: Sequence[Sentence], upos: Sequence[str]) -> list[str]:
    """The XPOS tags whose tokens carry one of ``upos`` more often than any other UPOS, in
    order of first appearance."""
    counts: dict[str, Counter[str]] = {}
    for s in sentences:
        for x, u in zip(s.xpos, s.upos, strict=True):
            if x not in MISSING:
                counts.setdefault(x, Counter())[u] += 1
    return [x for x, c in counts.items() if c.most_common(1)[0][0] in upos]


def auto_word_classes(column: str, sentences: Sequence[Sentence]
                      ) -> tuple[list[str], list[str]]:
    """(prepositions, coordinators): the tags of ``column`` the module doc's rules give."""
    seen = {t for s in sentences for t in getattr(s, column)}
    if column == "upos":
        return ([t for t in UD_PREPOSITIONS if t in seen],
                [t for t in UD_COORDINATORS if t in seen])
    if set(PTB_PREPOSITIONS + PTB_COORDINATORS) <= seen:
        return list(PTB_PREPOSITIONS), list(PTB_COORDINATORS)
    return (_majority_tags(sentences, UD_PREPOSITIONS),
            _majority_tags(sentences, UD_COORDINATORS))


@dataclass(frozen=True)
class TagSettings:
    """The resolved tag settings of a parser: its POS ``column`` ("upos" or "xpos") and the
    tags of that column that are ``prepositions`` and ``coordinators``."""

    column: str
    prepositions: tuple[str, ...]
    coordinators: tuple[str, ...]

    @classmethod
    def resolve(cls, tag: str, prepositions: str | None, coordinators: str | None,
                sentences: Sequence[Sentence]) -> TagSettings:
        """Resolve the config's ``features.tag``, ``prepositions`` and ``coordinators`` (each
        possibly ``auto``; word lists space-separated, None or "" for none) on the training
        ``sentences``."""
        column = resolve_column(tag, sentences)
        auto = (auto_word_classes(column, sentences)
                if AUTO in (prepositions, coordinators) else ([], []))
        preps = auto[0] if prepositions == AUTO else (prepositions or "").split()
        coords = auto[1] if coordinators == AUTO else (coordinators or "").split()
        return cls(column, tuple(preps), tuple(coords))

    def describe(self) -> str:
        """One line for the training log."""
        return (f"POS column {self.column}; prepositions: {' '.join(self.prepositions) or '-'}; "
                f"coordinators: {' '.join(self.coordinators) or '-'}")
