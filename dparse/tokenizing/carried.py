"""Models that carry a tokenizer, and raw text read through it.

A parser or tagger config with a ``tokenizer`` section (:class:`dparse.tokenizing.sections.
TokenizerConfig`) names a trained tokenizer; training the config checks it first
(:func:`check_tokenizer`) and the saved model directory holds a copy of its files in
:data:`TOKENIZER_DIR` (``tokenizer.json``, ``tokenizer.bin``, ``templates.json``,
``config.yaml``), under the model's one manifest. ``--format raw`` (:data:`RAW_FORMAT`) of
``dparse parse`` and ``dparse tag`` with such a model reads raw text: :func:`raw_sentences`
tokenizes it with the carried tokenizer into the sentences that ``dparse tokenize`` writes,
which the model then tags and parses (the output rebuilds the text exactly, as
``dparse tokenize``'s does). :func:`find_tokenizer` takes a tokenizer or a model that carries
one (``dparse tokenize``, ``dparse.load_tokenizer``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dparse.conll import Sentence, read_conll_block
from dparse.errors import DparseError, InputError
from dparse.modeldir import CONFIG_FILE, check_model_dir
from dparse.templates import TEMPLATES_FILE
from dparse.tokenizing.model import ARRAYS_FILE, JSON_FILE, TokenizerModel, conllu_lines

if TYPE_CHECKING:
    from dparse.epochs import TrainResult
    from dparse.sections import ExperimentConfig

TOKENIZER_DIR = "tokenizer"
RAW_FORMAT = "raw"  # --format raw: text to tokenize with the model's tokenizer


class CarryingTokenizer:
    """A trained model (any family's, with ``write_files``) and the tokenizer directory
    ``source`` it carries."""

    def __init__(self, model: Any, source: Path) -> None:
        self.model = model
        self.source = source

    def write_files(self, directory: Path) -> None:
        """The model's files, and the tokenizer's in :data:`TOKENIZER_DIR`."""
        self.model.write_files(directory)
        target = directory / TOKENIZER_DIR
        target.mkdir()
        for name in (JSON_FILE, ARRAYS_FILE, TEMPLATES_FILE, CONFIG_FILE):
            shutil.copyfile(self.source / name, target / name)


def check_tokenizer(cfg: ExperimentConfig) -> Path | None:
    """The directory of the tokenizer the config's ``tokenizer.model`` names, loaded once to
    check it (DparseError naming it otherwise); None without one."""
    if not cfg.tokenizer.model:
        return None
    source = Path(cfg.tokenizer.model)
    TokenizerModel.load(source)
    return source


def carry_tokenizer(result: TrainResult, source: Path | None) -> TrainResult:
    """``result`` whose model carries the tokenizer ``source`` (unchanged for None)."""
    if source is not None:
        result.model = CarryingTokenizer(result.model, source)
    return result


def carried_tokenizer(model_dir: str | os.PathLike) -> TokenizerModel:
    """The tokenizer a model directory carries; DparseError naming the directory without one
    (or when it is no model directory)."""
    directory = Path(model_dir)
    check_model_dir(directory)
    if not (directory / TOKENIZER_DIR).is_dir():
        raise DparseError(f"{directory}: this model carries no tokenizer, so it cannot read "
                          "raw text (--format raw, parse_text, tag_text): train it with a "
                          "tokenizer section (tokenizer: {model: DIR}, DIR a trained "
                          "tokenizer), or tokenize first with dparse tokenize")
    return TokenizerModel.load(directory / TOKENIZER_DIR, checked=True)


def find_tokenizer(model_dir: str | os.PathLike) -> TokenizerModel:
    """The tokenizer of ``model_dir``: a tokenizer model (``parser: tokenizer``), or the one
    a parser or tagger model carries in :data:`TOKENIZER_DIR`; DparseError naming the
    directory for a model that is neither."""
    directory = Path(model_dir)
    if (directory / JSON_FILE).is_file():
        return TokenizerModel.load(directory)
    check_model_dir(directory)
    if not (directory / TOKENIZER_DIR).is_dir():
        raise DparseError(f"{directory}: neither a tokenizer (parser: tokenizer) nor a model "
                          "that carries one (a parser or tagger trained with a tokenizer "
                          "section: tokenizer: {model: DIR}, DIR a trained tokenizer)")
    return carried_tokenizer(directory)


def raw_sentences(model_dir: str | os.PathLike, input: str | os.PathLike) -> Iterator[Sentence]:
    """The sentences of the raw text ``input`` (``-``: stdin) as the tokenizer that
    ``model_dir`` carries splits them (:func:`text_sentences`), named after ``input``."""
    from dparse.tokenizing.textfiles import read_text

    name = "<stdin>" if os.fspath(input) == "-" else os.fspath(input)
    yield from text_sentences(carried_tokenizer(model_dir), read_text(input), name)


def text_sentences(tokenizer: TokenizerModel, text: str, name: str) -> Iterator[Sentence]:
    """The sentences of ``text`` as ``tokenizer`` splits them: CoNLL-U sentences of words
    (:func:`dparse.tokenizing.model.conllu_lines`), their source ``name``. InputError naming
    ``name`` and the character offset for a text that is not Unicode (a lone surrogate)."""
    try:
        block = "".join(conllu_lines(tokenizer.tokenize(text))).encode("utf-8")
    except UnicodeEncodeError:
        _check_unicode(text, name)
        raise
    yield from read_conll_block(block, name, fmt="conllu", require_heads=False)


def _check_unicode(text: str, name: str) -> None:
    """InputError naming ``name``, the line and the character offset of the first character
    of ``text`` that UTF-8 cannot encode (a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(name, text.count("\n", 0, exc.start) + 1,
                         f"not Unicode text at character offset {exc.start} "
                         f"({text[exc.start]!r}: {exc.reason})") from None
