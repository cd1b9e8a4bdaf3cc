"""Penn Treebank phrase-structure trees (.mrg) to dependencies (Penn2Malt conversion).

The conversion follows Yamada and Matsumoto (2003) as implemented by Nivre's Penn2Malt, the one the
papers' PTB experiments use: empty elements (``-NONE-``), the constituents left empty by their
removal, function tags and co-indices (``NP-SBJ-1`` -> ``NP``) are stripped; each constituent's head
child is found with the head-percolation table :data:`HEAD_RULES`; the lexical head of every
non-head child depends on the lexical head of the head child. Punctuation stays a token. Labels are
the Penn2Malt label set (ROOT, P, SBJ, OBJ, PRD, VC, SBAR, NMOD, AMOD, PMOD, VMOD, DEP) chosen by
:func:`arc_label` from the categories of the dependent's maximal projection and of its mother.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dparse.conll import Sentence
from dparse.errors import DparseError, InputError

# (direction, priority list) per nonterminal: "r" searches the children right to left, "l" left to
# right; for each category of the list in turn the first child of that category is the head; if
# none matches, the first child in the search direction is. After Yamada and Matsumoto (2003),
# Table 1 (a modification of Collins 1999), in the form Penn2Malt distributes it.
HEAD_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ADJP": (
        "r",
        (
            "NNS",
            "QP",
            "NN",
            "$",
            "ADVP",
            "JJ",
            "VBN",
            "VBG",
            "ADJP",
            "JJR",
            "NP",
            "JJS",
            "DT",
            "FW",
            "RBR",
            "RBS",
            "SBAR",
            "RB",
        ),
    ),
    "ADVP": (
        "l",
        ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN"),
    ),
    "CONJP": ("l", ("CC", "RB", "IN")),
    "FRAG": ("l", ()),
    "INTJ": ("r", ()),
    "LST": ("l", ("LS", ":")),
    "NAC": (
        "r",
        (
            "NN",
            "NNS",
            "NNP",
            "NNPS",
            "NP",
            "NAC",
            "EX",
            "$",
            "CD",
            "QP",
            "PRP",
            "VBG",
            "JJ",
            "JJS",
            "JJR",
            "ADJP",
            "FW",
        ),
    ),
    "NP": ("r", ("POS|NN|NNP|NNPS|NNS", "NX", "JJR", "CD", "JJ", "JJS", "RB", "QP", "NP")),
    "NX": ("r", ("POS|NN|NNP|NNPS|NNS", "NX", "JJR", "CD", "JJ", "JJS", "RB", "QP", "NP")),
    "PP": ("l", ("IN", "TO", "VBG", "VBN", "RP", "FW")),
    "PRN": ("r", ()),
    "PRT": ("l", ("RP",)),
    "QP": ("r", ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),
    "RRC": ("l", ("VP", "NP", "ADVP", "ADJP", "PP")),
    "S": ("r", ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),
    "SBAR": (
        "r",
        ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG"),
    ),
    "SBARQ": ("r", ("SQ", "S", "SINV", "SBARQ", "FRAG")),
    "SINV": ("l", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),
    "SQ": ("l", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),
    "UCP": ("l", ()),
    "VP": ("l", ("VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP")),
    "WHADJP": ("l", ("CC", "WRB", "JJ", "ADJP")),
    "WHADVP": ("r", ("CC", "WRB")),
    "WHNP": ("r", ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),
    "WHPP": ("r", ("IN", "TO", "FW")),
    "X": ("r", ()),
}
DEFAULT_RULE: tuple[str, tuple[str, ...]] = ("l", ())
# standard WSJ sections of the dependency parsing literature
WSJ_SPLITS: dict[str, range] = {"train": range(2, 22), "dev": range(22, 23), "test": range(23, 24)}

PUNCT_TAGS = frozenset({"``", "''", ",", ".", ":", "-LRB-", "-RRB-"})
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(slots=True)
class Node:
    """A constituent (``word is None``) or a preterminal (``label`` is the POS tag)."""

    label: str
    children: list[Node] = field(default_factory=list)
    word: str | None = None
    functions: frozenset[str] = frozenset()

    @property
    def is_leaf(self) -> bool:
        return self.word is not None


@dataclass(slots=True)
class DepSentence:
    """A converted sentence: words, POS tags, heads (1-based, 0 = root) and labels."""

    words: list[str]
    tags: list[str]
    heads: list[int]
    labels: list[str]


def read_trees(path: str | Path) -> Iterator[Node]:
    """Yield the trees of a bracketed .mrg file, outer empty-label brackets removed."""
    path = str(path)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    yield from parse_trees(text, path)


def parse_trees(text: str, source: str = "<string>") -> Iterator[Node]:
    """Yield the trees of bracketed text; errors name ``source`` and the line."""
    stack: list[Node] = []
    pending_label = False
    tree_start = 0
    for match in _TOKEN.finditer(text):
        tok = match.group()
        if tok == "(":
            node = Node("")
            if stack:
                stack[-1].children.append(node)
            else:
                tree_start = match.start()
            stack.append(node)
            pending_label = True
        elif tok == ")":
            if not stack:
                raise InputError(source, _line(text, match.start()), "unbalanced ')'")
            node = stack.pop()
            pending_label = False
            if not stack:
                yield _unwrap(node, source, _line(text, match.start()))
        elif pending_label:
            stack[-1].label = tok
            pending_label = False
        else:
            line = _line(text, match.start())
            if not stack:
                raise InputError(source, line, f"text outside a tree: {tok!r}")
            node = stack[-1]
            if node.children or node.word is not None:
                raise InputError(source, line, f"unexpected word {tok!r}")
            node.word = tok
    if stack:
        raise InputError(source, _line(text, tree_start), "unbalanced '(': tree not closed")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _unwrap(node: Node, source: str, line: int) -> Node:
    """Strip the outer ``( ... )`` (or ROOT/TOP) bracket around a single tree."""
    while node.label in ("", "ROOT", "TOP") and len(node.children) == 1 and not node.is_leaf:
        node = node.children[0]
    if node.is_leaf and not node.label:
        raise InputError(source, line, "a leaf without a POS tag")
    return node


def split_label(label: str) -> tuple[str, frozenset[str]]:
    """``NP-SBJ-1`` -> (``NP``, {``SBJ``}); ``-NONE-`` and ``-LRB-`` stay whole."""
    if label.startswith("-") or not label:
        return label, frozenset()
    parts = re.split(r"[-=]", label)
    return parts[0], frozenset(p for p in parts[1:] if p and not p.isdigit())


def clean(node: Node) -> Node | None:
    """Remove empty elements and constituents left empty; strip function tags and indices.

    Returns None when nothing but empty elements is left under ``node``.
    """
    if node.is_leaf:
        return None if node.label == "-NONE-" else node
    kept = [c for c in (clean(child) for child in node.children) if c is not None]
    if not kept:
        return None
    category, functions = split_label(node.label)
    return Node(category, kept, None, functions)


def head_child(node: Node) -> int:
    """Index of the head child of a constituent by :data:`HEAD_RULES`."""
    direction, priorities = HEAD_RULES.get(node.label, DEFAULT_RULE)
    children = node.children
    order = range(len(children) - 1, -1, -1) if direction == "r" else range(len(children))
    for group in priorities:
        categories = group.split("|")
        for i in order:
            if children[i].label in categories and "TPC" not in children[i].functions:
                return i
    for i in order:
        if not (children[i].is_leaf and children[i].label in PUNCT_TAGS):
            return i
    return order[0]


def arc_label(dependent: Node, mother: Node) -> str:
    """Penn2Malt-style label of the arc from ``mother``'s head to ``dependent``'s head."""
    if dependent.is_leaf and dependent.label in PUNCT_TAGS:
        return "P"
    if "SBJ" in dependent.functions:
        return "SBJ"
    if "PRD" in dependent.functions:
        return "PRD"
    m, d = mother.label, dependent.label
    if m == "VP":
        if d == "NP" and not dependent.functions:
            return "OBJ"
        if d == "VP":
            return "VC"
    if m == "SBAR" and d in ("S", "SQ", "SINV", "SBARQ"):
        return "SBAR"
    if m in ("NP", "NAC", "NX", "WHNP"):
        return "NMOD"
    if m in ("ADJP", "ADVP", "QP", "WHADJP", "WHADVP"):
        return "AMOD"
    if m in ("PP", "WHPP"):
        return "PMOD"
    if m in ("VP", "S", "SQ", "SINV", "SBAR", "SBARQ"):
        return "VMOD"
    return "DEP"


def tree_to_dependencies(tree: Node) -> DepSentence:
    """Convert one tree (raw, as read) to a dependency sentence."""
    cleaned = clean(tree)
    if cleaned is None:
        return DepSentence([], [], [], [])
    words: list[str] = []
    tags: list[str] = []
    heads: list[int] = []
    labels: list[str] = []

    def visit(node: Node) -> int:
        """Number the leaves under ``node``, attach its non-head children; return its head."""
        if node.is_leaf:
            words.append(node.word or "")
            tags.append(node.label)
            heads.append(0)
            labels.append("ROOT")
            return len(words)
        lexical = [visit(child) for child in node.children]
        h = head_child(node)
        for i, child in enumerate(node.children):
            if i != h:
                heads[lexical[i] - 1] = lexical[h]
                labels[lexical[i] - 1] = arc_label(child, node)
        return lexical[h]

    visit(cleaned)
    return DepSentence(words, tags, heads, labels)


def convert_files(paths: Iterable[str | Path]) -> Iterator[DepSentence]:
    """Yield the converted sentences of .mrg files, in order; empty trees are skipped."""
    for path in paths:
        for tree in read_trees(path):
            sent = tree_to_dependencies(tree)
            if sent.words:
                yield sent


def to_sentence(sent: DepSentence) -> Sentence:
    """A converted sentence as a CoNLL-X :class:`Sentence` (CPOSTAG = POSTAG = the PTB tag)."""
    return Sentence.build(
        sent.words,
        [-1, *sent.heads],
        ["", *sent.labels],
        upos=sent.tags,
        xpos=sent.tags,
        fmt="conllx",
    )


def wsj_files(root: str | Path, split: str) -> list[Path]:
    """The .mrg files of a standard WSJ split under ``root`` (sections ``00``..``24``)."""
    if split not in WSJ_SPLITS:
        raise DparseError(f"unknown WSJ split {split!r}; expected one of {', '.join(WSJ_SPLITS)}")
    files: list[Path] = []
    for section in WSJ_SPLITS[split]:
        directory = Path(root) / f"{section:02d}"
        if not directory.is_dir():
            raise DparseError(f"{directory}: WSJ section directory not found")
        files.extend(sorted(p for p in directory.iterdir() if p.suffix.lower() == ".mrg"))
    return files
