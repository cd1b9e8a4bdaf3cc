"""Constrained parsing: arcs fixed (and their labels) or forbidden in a sentence's parse.

Where constraints come from (``dparse parse --constraints keep --forbid FILE``, the API's
``constraints`` and ``forbid`` arguments):

- ``keep``: the input's filled HEAD column fixes the arc HEAD -> word (a word whose HEAD is
  ``_`` is free); a filled DEPREL fixes that word's label (with or without a fixed HEAD).
- A CoNLL-U word whose MISC column holds ``Forbid=H1,H2`` (node ids, 0 the root) may not take
  any of those heads: read with ``keep``, with a forbid file, and with ``misc`` (which fixes
  nothing); a parse without constraints reads no MISC.
- A forbid file (:func:`read_forbid_file`), one arc a line::

      # SENTENCE <TAB> DEPENDENT <TAB> HEAD   (lines starting with # and blank lines skipped)
      weblog-0001	3	7
      2	4	0

  SENTENCE is a sentence's ``# sent_id``, or, for a sentence without one, its 1-based
  position in the input; the arc HEAD -> DEPENDENT is forbidden.

:class:`Constraints` holds one sentence's; :meth:`Constraints.check` refuses a set that admits
no tree of the decoder's kind (a cycle of fixed arcs, two root words fixed under a single root,
a fixed head out of range or forbidden, every head of a word forbidden, crossing fixed arcs
for a projective decoder, or no tree at all) with an :class:`InputError` naming the sentence
(file, line, sent_id). Every family's loaded parser honours them through its
``parse_constrained`` (:class:`ConstrainedParser`; :func:`constrained_parse` calls it): the
graph family's exact decoders and the undirected MST return the best tree that keeps them
(:mod:`dparse.graph.constrained`, :meth:`dparse.undirected.parser.UndirectedParser.constrained`),
the approximate graph decoders, easy-first, the beam shift-reduce parser and the forest
reranker a tree that keeps them (:mod:`dparse.transition.easyfirst`,
:mod:`dparse.transition.shiftreduce`, :mod:`dparse.rerank.model`); :func:`checked` checks a
sentence's set for the parser's kind of tree and :func:`fixed_deprels` writes the fixed labels.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from dparse.conll import PathLike, Sentence
from dparse.errors import DparseError, InputError
from dparse.timer import ParseTimer

# --constraints: keep fixes the input's filled HEAD and DEPREL columns; misc reads only the
# MISC Forbid= attributes (both read them)
CONSTRAINT_MODES = ("keep", "misc")
FORBID_KEY = "Forbid"  # the MISC attribute: Forbid=H1,H2
Arc = tuple[int, int]  # (dependent, head)


@dataclass
class Constraints:
    """One sentence's constraints: ``heads`` int32 [n+1] (heads[m] the fixed head of word m,
    -1 free; heads[0] == -1), ``labels`` [n+1] (labels[m] the fixed DEPREL of word m or None),
    ``forbidden`` bool [n+1, n+1] (forbidden[h, m]: the arc h -> m may not be used) and
    ``source``, ``line``, ``name``: the file, line and words ("sentence 3 (sent_id x)") that
    errors name."""

    heads: np.ndarray
    labels: list[str | None]
    forbidden: np.ndarray
    source: str = "<memory>"
    line: int | None = None
    name: str = "sentence"

    @classmethod
    def free(cls, n: int, source: str = "<memory>", line: int | None = None,
             name: str = "sentence") -> Constraints:
        """No constraint on a sentence of n words."""
        return cls(np.full(n + 1, -1, dtype=np.int32), [None] * (n + 1),
                   np.zeros((n + 1, n + 1), dtype=bool), source, line, name)

    def __len__(self) -> int:
        return len(self.heads) - 1

    @property
    def empty(self) -> bool:
        """Whether nothing is fixed or forbidden."""
        return (not bool((self.heads[1:] >= 0).any()) and not bool(self.forbidden.any())
                and not any(label is not None for label in self.labels))

    def allowed(self) -> np.ndarray:
        """bool [n+1, n+1]: the arcs h -> m a tree satisfying the constraints may use (no arc
        into the root, no self-loop; a fixed word only from its head; not forbidden). Call
        after :meth:`check` (a fixed head must be in range)."""
        allowed = ~self.forbidden
        allowed[:, 0] = False
        np.fill_diagonal(allowed, False)
        fixed = np.flatnonzero(self.heads >= 0)
        allowed[:, fixed] = False
        allowed[self.heads[fixed], fixed] = True
        return allowed

    def satisfied_by(self, heads: np.ndarray) -> bool:
        """Whether the tree ``heads`` (int [n+1]) has every fixed arc and no forbidden one."""
        words = np.arange(1, len(self.heads))
        fixed = self.heads[1:] >= 0
        return (bool(np.all(heads[1:][fixed] == self.heads[1:][fixed]))
                and not bool(self.forbidden[heads[1:], words].any()))

    def error(self, problem: str, word: int | None = None,
              sentence: Sentence | None = None) -> InputError:
        """An InputError naming the sentence (and ``word``'s line when the sentence is known)."""
        line = self.line
        if word is not None and sentence is not None and sentence.source == self.source:
            line = sentence.line_of(word)
        return InputError(self.source, line, f"{self.name}: {problem}")

    def check(self, projective: bool, single_root: bool, decoder: str,
              sentence: Sentence | None = None) -> None:
        """InputError naming the sentence unless a tree (projective if ``projective``, with
        one root word if ``single_root``) has every fixed arc and no forbidden one."""
        n = len(self)
        heads = self.heads
        for m in range(1, n + 1):
            h = int(heads[m])
            if h > n or h == m or h < -1:
                raise self.error(f"word {m}: fixed head {h} is not a head of it (0..{n}, not "
                                 "itself)", m, sentence)
            if h >= 0 and self.forbidden[h, m]:
                raise self.error(f"word {m}: its fixed head {h} is also forbidden", m, sentence)
        cycle = _fixed_cycle(heads)
        if cycle:
            arcs = ", ".join(f"{heads[m]} -> {m}" for m in cycle)
            raise self.error(f"the fixed arcs {arcs} make a cycle", cycle[0], sentence)
        roots = np.flatnonzero(heads == 0)
        if single_root and len(roots) > 1:
            raise self.error(f"words {' and '.join(map(str, roots[:2]))} are both fixed to the "
                             f"root, but decoder {decoder} builds single-rooted trees",
                             int(roots[1]), sentence)
        allowed = self.allowed()
        for m in range(1, n + 1):
            if not allowed[:, m].any():
                raise self.error(f"word {m}: every head is forbidden", m, sentence)
        if projective:
            crossing = _crossing(heads)
            if crossing:
                (h1, m1), (h2, m2) = crossing
                raise self.error(f"the fixed arcs {h1} -> {m1} and {h2} -> {m2} cross, but "
                                 f"decoder {decoder} builds projective trees", m2, sentence)
        if not tree_exists(allowed, projective, single_root):
            kind = " ".join(word for word, on in (("projective", projective),
                                                  ("single-rooted", single_root)) if on)
            raise self.error(f"no {kind + ' ' if kind else ''}tree has every fixed arc and no "
                             f"forbidden one (decoder {decoder})")


def _fixed_cycle(heads: np.ndarray) -> list[int]:
    """The words of a cycle of fixed arcs (heads int [n+1], -1 free), in order; [] if none."""
    state = np.zeros(len(heads), dtype=np.int8)  # 0 unseen, 1 on the current path, 2 done
    for start in range(1, len(heads)):
        path = []
        m = start
        while m > 0 and state[m] == 0 and heads[m] >= 0:
            state[m] = 1
            path.append(m)
            m = int(heads[m])
        if m > 0 and state[m] == 1:
            return path[path.index(m):]
        state[path] = 2
    return []


def _crossing(heads: np.ndarray) -> tuple[Arc, Arc] | None:
    """Two fixed arcs (head, dependent) that cross (node 0 left of word 1), or None."""
    arcs = [(int(h), m) for m, h in enumerate(heads) if m > 0 and h >= 0]
    for i, (h1, m1) in enumerate(arcs):
        lo1, hi1 = sorted((h1, m1))
        for h2, m2 in arcs[i + 1:]:
            lo2, hi2 = sorted((h2, m2))
            if lo1 < lo2 < hi1 < hi2 or lo2 < lo1 < hi2 < hi1:
                return (h1, m1), (h2, m2)
    return None


def tree_exists(allowed: np.ndarray, projective: bool, single_root: bool) -> bool:
    """Whether some tree (projective, single-rooted as asked) uses only the arcs of
    ``allowed`` (bool [n+1, n+1]): the exact decoder over 0 / -inf scores uses a disallowed arc
    only when no tree avoids them (dparse.decoders)."""
    from dparse.decoders import get_decoder

    scores = np.where(allowed, 0.0, -np.inf)
    heads = get_decoder("eisner" if projective else "cle").decode(scores,
                                                                  single_root=single_root)
    return bool(allowed[heads[1:], np.arange(1, len(heads))].all())


class ForbidFile:
    """A forbid file read whole (:func:`read_forbid_file`): the arcs (dependent, head) by
    sentence key, each with the line it came from, so that an entry matching no sentence of
    the input, or out of its range, is an error naming that line."""

    def __init__(self, path: str, arcs: Mapping[str, list[tuple[int, int, int]]]) -> None:
        self.path = path
        self.arcs = dict(arcs)  # key -> [(dependent, head, line)]
        self._used: set[str] = set()

    def take(self, key: str, n: int) -> list[Arc]:
        """The arcs of the sentence ``key`` of n words; InputError for one out of range."""
        entries = self.arcs.get(key, [])
        if entries:
            self._used.add(key)
        for dep, head, line in entries:
            if not (1 <= dep <= n and 0 <= head <= n):
                raise InputError(self.path, line, f"sentence {key} has words 1..{n}: no arc "
                                 f"{head} -> {dep}")
        return [(dep, head) for dep, head, _ in entries]

    def check_all_used(self) -> None:
        """InputError naming the first line whose sentence was not in the input."""
        unused = [(entries[0][2], key) for key, entries in self.arcs.items()
                  if key not in self._used]
        if unused:
            line, key = min(unused)
            raise InputError(self.path, line, f"no sentence {key!r} (sent_id, or position "
                             "for a sentence without one) in the input")


def read_forbid_file(path: PathLike) -> ForbidFile:
    """A forbid file: ``SENTENCE<TAB>DEPENDENT<TAB>HEAD`` lines (module doc); InputError
    naming the line of a malformed one, DparseError for an unreadable file."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DparseError(f"{name}: cannot read the forbid file: {exc}") from None
    arcs: dict[str, list[tuple[int, int, int]]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 3 or not cols[1].isdecimal() or not cols[2].isdecimal():
            raise InputError(name, lineno, "expected SENTENCE<TAB>DEPENDENT<TAB>HEAD, "
                             f"DEPENDENT and HEAD word ids (HEAD 0: the root), got {line!r}")
        arcs.setdefault(cols[0], []).append((int(cols[1]), int(cols[2]), lineno))
    return ForbidFile(name, arcs)


def sent_id(sentence: Sentence) -> str | None:
    """The value of the sentence's ``# sent_id = ...`` comment, or None."""
    for comment in sentence.comments:
        key, eq, value = comment[1:].partition("=")
        if eq and key.strip() == "sent_id":
            return value.strip()
    return None


def _misc_forbidden(sentence: Sentence, constraints: Constraints) -> Iterator[Arc]:
    """The arcs (dependent, head) that the MISC column's ``Forbid=H1,H2`` rules out
    (CoNLL-U); InputError naming the word's line for a malformed value."""
    if sentence.fmt != "conllu":
        return
    n = len(sentence)
    for m, misc in enumerate(sentence.misc, 1):
        for item in misc.split("|"):
            key, eq, value = item.partition("=")
            if key != FORBID_KEY or not eq:
                continue
            heads = value.split(",")
            if not all(h.isdecimal() and int(h) <= n for h in heads):
                raise constraints.error(f"word {m}: {FORBID_KEY}={value}: expected node ids "
                                        f"0..{n}, comma-separated", m, sentence)
            yield from ((m, int(h)) for h in heads)


def sentence_constraints(sentence: Sentence, keep: bool, forbid: Iterable[Arc] = (),
                         position: int | None = None) -> Constraints:
    """The constraints of ``sentence``: its HEAD and DEPREL columns if ``keep``, its MISC
    ``Forbid=`` attributes and the arcs ``forbid`` (dependent, head); ``position`` (1-based)
    names it in errors."""
    n = len(sentence)
    key = sent_id(sentence)
    name = f"sentence {position}" if position is not None else "sentence"
    if key is not None:
        name += f" (sent_id {key})"
    c = Constraints.free(n, sentence.source, sentence.lineno, name)
    if keep:
        c.heads = np.asarray(sentence.heads, dtype=np.int32).copy()
        c.heads[0] = -1
        c.labels = [None] + [rel if rel not in ("", "_") else None
                             for rel in sentence.deprels[1:]]
    for dep, head in (*_misc_forbidden(sentence, c), *forbid):
        if not (1 <= dep <= n and 0 <= head <= n):
            raise c.error(f"no arc {head} -> {dep} to forbid: words 1..{n}")
        c.forbidden[head, dep] = True
    return c


def checked(constraints: Constraints | None, projective: bool, single_root: bool,
            decoder: str, sentence: Sentence | None = None) -> Constraints | None:
    """``constraints`` checked for a decoder of that kind (:meth:`Constraints.check`), or
    None when there are none (None, or :attr:`Constraints.empty`): a parser then parses the
    sentence as it does without constraints."""
    if constraints is None or constraints.empty:
        return None
    constraints.check(projective, single_root, decoder, sentence)
    return constraints


def fixed_deprels(deprels: list[str], constraints: Constraints | None) -> list[str]:
    """``deprels`` (entry 0 the root's) with each word's fixed label in place of its own."""
    if constraints is None:
        return deprels
    return [rel if fixed is None else fixed
            for rel, fixed in zip(deprels, constraints.labels, strict=True)]


@runtime_checkable
class ConstrainedParser(Protocol):
    """A loaded parser that honours constraints: every parsing family's
    (:class:`dparse.parsers.LoadedParser` with this method); ``projective``: whether its trees
    are projective (constraints must then admit a projective tree)."""

    projective: bool

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints]],
                          timer: ParseTimer) -> Iterator[Sentence]:
        """Each sentence parsed under its constraints (InputError for an impossible set)."""
        ...


@dataclass
class ConstraintSource:
    """What a parse is asked to honour: ``keep`` the input's HEAD and DEPREL columns, the
    ``forbid`` file's arcs (or None) and the MISC ``Forbid=`` attributes (always read)."""

    keep: bool = False
    forbid: ForbidFile | None = None

    @classmethod
    def of(cls, constraints: str | None, forbid: PathLike | None) -> ConstraintSource | None:
        """From the API's and the command's arguments: ``constraints`` None, ``keep`` or
        ``misc``, ``forbid`` a forbid file's path or None; None when neither asks for
        anything."""
        if constraints is not None and constraints not in CONSTRAINT_MODES:
            raise DparseError(f"constraints: {constraints!r}: expected one of "
                              f"{', '.join(CONSTRAINT_MODES)} (or None)")
        if constraints is None and forbid is None:
            return None
        return cls(constraints == "keep",
                   None if forbid is None else read_forbid_file(forbid))

    def pairs(self, sentences: Iterable[Sentence]) -> Iterator[tuple[Sentence, Constraints]]:
        """Each sentence with its constraints; at the end, InputError for a forbid-file entry
        that matched no sentence."""
        for position, sentence in enumerate(sentences, 1):
            arcs: Sequence[Arc] = ()
            if self.forbid is not None:
                key = sent_id(sentence)
                arcs = self.forbid.take(key if key is not None else str(position),
                                        len(sentence))
            yield sentence, sentence_constraints(sentence, self.keep, arcs, position)
        if self.forbid is not None:
            self.forbid.check_all_used()


def constrained_parse(parser: object, items: Iterable[tuple[Sentence, Constraints]],
                      timer: ParseTimer, model_dir: str) -> Iterator[Sentence]:
    """``parser`` (a :class:`dparse.parsers.LoadedParser`) run on ``items`` under their
    constraints; DparseError when its family does not honour constraints."""
    if not isinstance(parser, ConstrainedParser):
        raise DparseError(f"{model_dir}: this model's parser family does not honour "
                          "constraints")
    return parser.parse_constrained(items, timer)
