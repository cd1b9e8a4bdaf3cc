"""The models a server holds: each loaded once, under a name; looked up as UDPipe's server
looks them up.

A model is named on the command line as ``NAME=DIR`` or by its directory alone (its name is
then the directory's last component). A request names one by ``model``: its name, or any
hyphen-separated prefix of a name (``en_ewt`` for ``en_ewt-o1-cle``; the first model given
that has the prefix takes it), or nothing for the first model (the default). Another decoder
or ``tags`` mode than the model's (``decoder``, ``tags`` parameters) loads the same directory
again once, on first use (its weights are memory-mapped: the mapped pages are shared); one
the model refuses is refused again without loading (up to ``MAX_REFUSED`` such pairs a model,
so that requests cannot grow the memory).
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from dparse.api import Parser, Tagger, load, load_tagger
from dparse.errors import DparseError
from dparse.serve.errors import BAD_REQUEST, RequestError
from dparse.tokenizing.carried import TOKENIZER_DIR, carried_tokenizer
from dparse.tokenizing.model import TokenizerModel

MAX_REFUSED = 64  # (decoder, tags) refusals a model remembers (module doc)
NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.+-]*")  # what a model name may be


def model_argument(text: str) -> tuple[str, str]:
    """(name, directory) of a ``NAME=DIR`` or ``DIR`` argument of ``dparse serve``: a
    directory that exists is taken whole, whatever ``=`` it holds. DparseError for a name
    that is not a plain name (letters, digits, ``_ . + -``) or a directory that is missing.

    Example::

        model_argument("en=models/en_ewt-o1-cle")  # ("en", "models/en_ewt-o1-cle")
    """
    name, sep, directory = text.partition("=")
    if not sep or os.path.isdir(text):
        name, directory = Path(text).resolve().name, text
    if not NAME.fullmatch(name):
        raise DparseError(f"{text}: model name {name!r} must be letters, digits and _ . + - "
                          "(name a model NAME=DIR)")
    if not os.path.isdir(directory):
        raise DparseError(f"{text}: no model directory {directory!r}")
    return name, directory


@dataclass
class ServedModel:
    """One model: its ``name``, ``directory`` and ``parser`` (the model's decoder, ``tags``
    auto), whether it ``tags`` (a pipeline model) and ``tokenizes`` (it carries a tokenizer:
    :mod:`dparse.tokenizing.carried`); the parsers of other decoders and tag modes, its tagger
    alone and its tokenizer, loaded on first use."""

    name: str
    directory: str
    parser: Parser
    tags: bool
    tokenizes: bool = False
    _variants: dict[tuple[str | None, str], Parser] = field(default_factory=dict)
    _refused: dict[tuple[str | None, str], str] = field(default_factory=dict)
    _tagger: Tagger | None = None
    _tokenizer: TokenizerModel | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def load(cls, name: str, directory: str) -> ServedModel:
        parser = load(directory)
        return cls(name, directory, parser, parser.tagging,
                   (Path(directory) / TOKENIZER_DIR).is_dir())

    @property
    def capabilities(self) -> list[str]:
        """What UDPipe's ``/models`` lists for it: ``tokenizer`` (it carries one), ``tagger``
        (a pipeline model) and ``parser``."""
        return ["tokenizer"] * self.tokenizes + ["tagger"] * self.tags + ["parser"]

    def parser_for(self, decoder: str | None, tags: str) -> Parser:
        """The parser with ``decoder`` (None: the model's) and ``tags`` mode; RequestError
        (400) naming the problem when the model cannot take them."""
        if decoder in (None, self.parser.decoder) and tags == "auto":
            return self.parser
        key = (decoder, tags)
        with self._lock:
            parser = self._variants.get(key)
            if parser is None:
                if key in self._refused:
                    raise RequestError(BAD_REQUEST, self._refused[key])
                try:
                    parser = load(self.directory, decoder=decoder, tags=tags)
                except DparseError as exc:
                    message = (f"Model '{self.name}' cannot parse with decoder {decoder!r}, "
                               f"tags {tags!r}: {exc}")
                    if len(self._refused) < MAX_REFUSED:
                        self._refused[key] = message
                    raise RequestError(BAD_REQUEST, message) from None
                self._variants[key] = parser
            return parser

    def tokenizer(self) -> TokenizerModel:
        """The tokenizer the model carries (loaded on first use)."""
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = carried_tokenizer(self.directory)
            return self._tokenizer

    def tagger(self) -> Tagger:
        """The model's tagger alone (a pipeline model's; loaded on first use)."""
        with self._lock:
            if self._tagger is None:
                self._tagger = load_tagger(self.directory)
            return self._tagger


class ModelSet:
    """The models of a server, in the order given (the first is the default), found by name
    or prefix (module doc)."""

    def __init__(self, models: list[ServedModel]) -> None:
        if not models:
            raise DparseError("dparse serve needs at least one model")
        self.models = models
        self._names: dict[str, ServedModel] = {}
        for model in models:
            if model.name in self._names:
                raise DparseError(f"two models are named {model.name!r}: name them NAME=DIR")
            self._names[model.name] = model
        aliases: dict[str, ServedModel] = {}
        for model in models:
            parts = model.name.split("-")
            for k in range(1, len(parts)):
                aliases.setdefault("-".join(parts[:k]), model)
        self._aliases = {**aliases, **self._names, "": models[0]}

    @classmethod
    def load(cls, arguments: list[tuple[str, str]]) -> ModelSet:
        """The models of ``(name, directory)`` pairs, each loaded."""
        return cls([ServedModel.load(name, directory) for name, directory in arguments])

    @property
    def default(self) -> ServedModel:
        return self.models[0]

    def find(self, name: str) -> ServedModel:
        """The model ``name`` names (module doc); RequestError (400) naming the known ones."""
        model = self._aliases.get(name)
        if model is None:
            known = ", ".join(m.name for m in self.models)
            raise RequestError(BAD_REQUEST, f"The requested model '{name}' does not exist "
                               f"(models: {known}).")
        return model

    def describe(self) -> dict[str, object]:
        """UDPipe's ``/models`` answer: each model's capabilities, and the default's name."""
        return {"models": {m.name: m.capabilities for m in self.models},
                "default_model": self.default.name}


def load_message(arguments: list[tuple[str, str]]) -> str | None:
    """Load the models ``(name, directory)`` and drop them: None, or the message of the
    DparseError that one raised (``dparse serve --workers N`` checks them so, in a process of
    its own)."""
    try:
        ModelSet.load(arguments)
    except DparseError as exc:
        return str(exc)
    return None
