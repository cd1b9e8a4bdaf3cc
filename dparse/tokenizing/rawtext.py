"""Raw text and CoNLL-U tokens: the text of a treebank file, its tokens' places in it, and the
spacing marks of UD's MISC column.

The raw text of a file (:func:`raw_text`, what ``dparse tokenize --text-of`` prints) is the
concatenation of its sentences' ``# text`` lines, in order. Between two sentences: a blank line
(``"\\n\\n"``) where the second starts with a ``# newdoc`` comment, a line break (``"\\n"``)
where it starts with ``# newpar``, otherwise one space, or nothing where the first one's last
token has ``SpaceAfter=No``. The text ends with a line break. So a treebank that marks
paragraphs has one paragraph a line, one that marks only documents one document a line (a blank
line between documents), one that marks neither one line.

The tokenizer trains on the same layout built from the tokens (:func:`layout`): each token's
FORM (a multiword token's range line's FORM), then its spacing (``SpaceAfter=No``: none;
``SpacesAfter``: the spaces it gives; otherwise one space), the sentences joined as above.

Spacing marks (UD's MISC attributes, :func:`spacing_misc`, :func:`spaces_after`): on a token's
line (a multiword token's range line), ``SpaceAfter=No`` where no white space follows it,
nothing where one space does, ``SpacesAfter=S`` for any other run of white space; the first
token of a text has ``SpacesBefore=S`` for white space before it. ``S`` escapes as UD does (``\\s``
space, ``\\t`` tab, ``\\n`` and ``\\r`` line ends, ``\\p`` ``|``, ``\\\\`` backslash), and any
other white space that ends a line for ``str.splitlines`` as ``\\uXXXX`` (four hex digits), so
that a MISC value never breaks its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dparse.conll import Sentence
from dparse.errors import InputError

_ESCAPES = {" ": "\\s", "\t": "\\t", "\n": "\\n", "\r": "\\r", "|": "\\p", "\\": "\\\\"}
_UNESCAPES = {v[1]: k for k, v in _ESCAPES.items()}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)")
_LINE_ENDS = frozenset("\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def escape_spaces(spaces: str) -> str:
    """``spaces`` as a SpacesAfter / SpacesBefore value (module doc)."""
    return "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04X}" if c in _LINE_ENDS else c)
                   for c in spaces)


def unescape_spaces(value: str) -> str:
    """The white space a SpacesAfter / SpacesBefore value stands for."""
    def one(m: re.Match) -> str:
        code = m.group(1)
        return chr(int(code[1:], 16)) if len(code) == 5 else _UNESCAPES.get(code, code)
    return _ESCAPE.sub(one, value)


def spacing_misc(after: str, before: str = "") -> list[str]:
    """The MISC attributes of a token followed by the white space ``after`` (and, for a
    text's first token, preceded by ``before``)."""
    attributes = [f"SpacesBefore={escape_spaces(before)}"] if before else []
    if after == "":
        attributes.append("SpaceAfter=No")
    elif after != " ":
        attributes.append(f"SpacesAfter={escape_spaces(after)}")
    return attributes


def _attributes(misc: str) -> dict[str, str]:
    return dict(item.partition("=")[::2] for item in misc.split("|")) if misc != "_" else {}


def spaces_after(misc: str) -> str:
    """The white space after a token whose MISC is ``misc`` (module doc)."""
    attributes = _attributes(misc)
    if "SpacesAfter" in attributes:
        return unescape_spaces(attributes["SpacesAfter"])
    return "" if attributes.get("SpaceAfter") == "No" else " "


def spaces_before(misc: str) -> str:
    """The white space that a text's first token with MISC ``misc`` says comes before it."""
    return unescape_spaces(_attributes(misc).get("SpacesBefore", ""))


@dataclass
class Token:
    """One token of a sentence: its ``form``, its ``words`` (several for a multiword token)
    and its ``misc`` (its line's MISC: a multiword token's range line's)."""

    form: str
    words: list[str]
    misc: str


def tokens_of(sent: Sentence) -> list[Token]:
    """The tokens of a CoNLL-U sentence, in order (empty nodes left out)."""
    tokens: list[Token] = []
    last = 0  # the last word of the multiword token being read
    for line in sent.to_conll().splitlines():
        line = line.removeprefix("\ufeff")
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        ident = cols[0]
        misc = cols[-1] if len(cols) >= 10 else "_"
        if "-" in ident:
            first, _, end = ident.partition("-")
            last = int(end)
            tokens.append(Token(cols[1], [], misc))
        elif "." not in ident:
            if int(ident) <= last:
                tokens[-1].words.append(cols[1])
            else:
                tokens.append(Token(cols[1], [cols[1]], misc))
    return tokens


def _marks(sent: Sentence) -> tuple[bool, bool]:
    """Whether the sentence starts a document and a paragraph (its comments)."""
    comments = sent.comments
    doc = any(re.match(r"#\s*newdoc\b", c) for c in comments)
    par = any(re.match(r"#\s*newpar\b", c) for c in comments)
    return doc, par


def _between(previous_last: Token, sent: Sentence) -> str:
    """The text between a sentence whose last token is ``previous_last`` and ``sent``."""
    doc, par = _marks(sent)
    if doc:
        return "\n\n"
    if par:
        return "\n"
    return "" if spaces_after(previous_last.misc) == "" else " "


def raw_text(sentences: Sequence[Sentence]) -> str:
    """The raw text of a file's sentences (module doc). InputError naming the sentence's line
    where a sentence has no ``# text`` comment."""
    pieces: list[str] = []
    previous: Token | None = None
    for sent in sentences:
        text = next((c.partition("=")[2].strip() for c in sent.comments
                     if re.match(r"#\s*text\s*=", c)), None)
        if text is None:
            raise InputError(sent.source, sent.lineno, "the sentence has no '# text =' "
                             "comment: its raw text is unknown")
        tokens = tokens_of(sent)
        if previous is not None:
            pieces.append(_between(previous, sent))
        pieces.append(text)
        previous = tokens[-1] if tokens else previous
    if pieces:
        pieces.append("\n")
    return "".join(pieces)


@dataclass
class Layout:
    """The text of a file built from its tokens (module doc) and where its tokens lie:
    ``token_spans`` (start, end) and ``sentence_ends`` (the index of each sentence's last
    token), ``tokens`` in order."""

    text: str
    tokens: list[Token] = field(default_factory=list)
    token_spans: list[tuple[int, int]] = field(default_factory=list)
    sentence_ends: list[int] = field(default_factory=list)


def layout(sentences: Iterable[Sentence]) -> Layout:
    """The :class:`Layout` of a file's sentences (those without a token left out)."""
    out = Layout("")
    pieces: list[str] = []
    at = 0
    for sent in sentences:
        tokens = tokens_of(sent)
        if not tokens:
            continue
        if out.tokens:
            gap = _between(out.tokens[-1], sent)
            pieces.append(gap)
            at += len(gap)
        for k, token in enumerate(tokens):
            out.tokens.append(token)
            out.token_spans.append((at, at + len(token.form)))
            pieces.append(token.form)
            at += len(token.form)
            if k + 1 < len(tokens):
                gap = spaces_after(token.misc)
                pieces.append(gap)
                at += len(gap)
        out.sentence_ends.append(len(out.tokens) - 1)
    if pieces:
        pieces.append("\n")
    out.text = "".join(pieces)
    return out


def rebuild_text(sentences: Iterable[Sentence]) -> str:
    """The text that tokenized sentences (``dparse tokenize``'s output) say they came from:
    every token's FORM followed by the white space its MISC gives, the first token preceded by
    its ``SpacesBefore``."""
    pieces: list[str] = []
    for sent in sentences:
        for token in tokens_of(sent):
            if not pieces:
                pieces.append(spaces_before(token.misc))
            pieces.append(token.form)
            pieces.append(spaces_after(token.misc))
    return "".join(pieces)
