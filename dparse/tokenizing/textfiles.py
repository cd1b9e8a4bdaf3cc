"""Raw text files in and out: reading a text strictly as UTF-8, tokenizing a file into CoNLL-U
(``dparse tokenize``) and writing a treebank file's raw text (``dparse tokenize --text-of``)."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dparse.conll import read_treebank
from dparse.errors import InputError
from dparse.outputs import write_text
from dparse.tokenizing.model import TokenizerModel, conllu_lines
from dparse.tokenizing.rawtext import raw_text


def _name(path: str | os.PathLike) -> str:
    return "<stdin>" if os.fspath(path) == "-" else os.fspath(path)


def read_text(path: str | os.PathLike) -> str:
    """The text of ``path`` (``-``: stdin), kept as it is (line ends, a byte-order mark).
    InputError naming the file, the line and the byte offset of the first byte that is not
    UTF-8."""
    name = _name(path)
    try:
        if name == "<stdin>":
            data = sys.stdin.buffer.read()
        else:
            data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(name, line, f"invalid UTF-8 at byte offset {exc.start} "
                         f"(byte 0x{data[exc.start]:02x}: {exc.reason})") from None


@dataclass
class TokenizeStats:
    """What :func:`tokenize_file` did: ``characters`` of text, ``sentences``, ``tokens``,
    ``words`` out, ``seconds`` of tokenizing (reading the model and the files excluded)."""

    characters: int
    text_bytes: int
    sentences: int
    tokens: int
    words: int
    seconds: float

    def summary(self) -> str:
        """One line for stderr."""
        rate = self.text_bytes / 1e6 / self.seconds if self.seconds > 0 else float("inf")
        return (f"tokenized {self.characters} characters into {self.sentences} sentences, "
                f"{self.tokens} tokens, {self.words} words in {self.seconds:.2f}s "
                f"({rate:.2f} MB/s)")


def tokenize_file(model: TokenizerModel, input: str | os.PathLike,
                  output: str | os.PathLike | None) -> TokenizeStats:
    """Tokenize the text of ``input`` (``-``: stdin) with ``model`` into CoNLL-U at
    ``output`` (``-`` or None: stdout), written whole or not at all."""
    text = read_text(input)
    start = time.perf_counter()
    sentences = model.tokenize(text)
    conllu = "".join(conllu_lines(sentences))
    seconds = time.perf_counter() - start
    write_text(output, conllu)
    return TokenizeStats(len(text), len(text.encode("utf-8")), len(sentences),
                         sum(len(s.tokens) for s in sentences),
                         sum(len(w) for s in sentences for w in s.words), seconds)


def write_raw_text(gold: str | os.PathLike, output: str | os.PathLike | None) -> None:
    """Write the raw text of the CoNLL-U file ``gold`` (:func:`dparse.tokenizing.rawtext.
    raw_text`) to ``output``."""
    write_text(output, raw_text(read_treebank(gold, require_heads=False)))
