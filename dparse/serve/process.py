"""UDPipe's ``/process`` over dparse: a request's parameters in, the CoNLL-U answer out.

UDPipe's parameters (its REST API documentation): ``model`` (a name, a prefix, or nothing for
the default), ``data`` (required), ``input`` (``conllu``, the default; ``horizontal``: a
sentence a line, tokens separated by white space, read as ``dparse parse --format text``
reads them (U+00A0 separates tokens too); ``vertical``: a token a line, its first
tab-separated field, a blank line ending a sentence), ``tagger`` and ``parser`` (present:
tag, parse; absent or ``none``: not; a value other than ``none``, ``default`` or empty is
refused, dparse's options being parameters of their own), ``output`` (``conllu``);
``tokenizer`` (present: the data is raw text, split into sentences and words by the tokenizer
the model carries, as ``dparse parse --format raw`` reads it, ``input`` then unused; refused
for a model without one). dparse's own: ``decoder`` (another
decoder than the model's), ``tags`` (``auto``, ``predict``, ``keep``: as ``dparse parse
--tags``), ``kbest`` K, ``constraints`` (``keep``, ``misc``), ``marginals`` (``1``/``true``;
with ``marginals_threshold`` and ``temperature``): as ``dparse parse`` takes them, one of
kbest, constraints and marginals at a time.

With ``parser``, the result is byte for byte what ``dparse parse`` writes for the same data
and options (``--format conllu``, ``--format text``, or ``--format raw`` with ``tokenizer``;
vertical input as its horizontal form); ``tagger`` alone runs the model's tagger (``dparse
tag``); neither writes the input back as CoNLL-U. A request error is a
:class:`RequestError` with status 400 and a message naming the problem (the line of malformed
input; the sentence over ``max_words``).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dparse import __version__
from dparse.api import Parser, _kbest_block
from dparse.conll import TEXT_FORMAT, Sentence, read_conll_block, write_conll
from dparse.constraints import CONSTRAINT_MODES
from dparse.errors import DparseError, InputError
from dparse.serve.errors import BAD_REQUEST, RequestError
from dparse.serve.limits import Limits
from dparse.serve.models import ModelSet, ServedModel
from dparse.tagging import TAG_MODES
from dparse.tokenizing.carried import RAW_FORMAT, text_sentences

INPUTS = {"conllu": "conllu", "horizontal": TEXT_FORMAT, "vertical": "vertical"}
OUTPUTS = ("conllu",)
RUN_VALUES = ("", "default")  # a tagger or parser value that runs it (``none``: not)
TRUE, FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")
MAX_KBEST = 100
ACKNOWLEDGEMENT = f"dparse {__version__}"
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc

KNOWN = frozenset({"model", "data", "input", "output", "tagger", "parser", "tokenizer",
                   "decoder", "tags", "kbest", "constraints", "marginals",
                   "marginals_threshold", "temperature"})


def bad(message: str) -> RequestError:
    return RequestError(BAD_REQUEST, message)


@dataclass(frozen=True)
class Process:
    """One ``/process`` request, checked: the model, the data (UTF-8 text), its input
    format (a key of ``INPUTS``, or ``RAW_FORMAT`` with ``tokenizer``), what to run and
    dparse's options (module doc)."""

    model: ServedModel
    data: str
    input: str = "conllu"
    tag: bool = False
    parse: bool = True
    decoder: str | None = None
    tags: str = "auto"
    kbest: int | None = None
    constraints: str | None = None
    marginals: bool = False
    marginals_threshold: float = 0.01
    temperature: float = 1.0

    @classmethod
    def of(cls, params: Mapping[str, str], models: ModelSet) -> Process:
        """The request of ``params`` (as :mod:`dparse.serve.params` reads them); RequestError
        (400) for a missing or bad parameter."""
        unknown = sorted(set(params) - KNOWN)
        if unknown:
            raise bad(f"Unknown parameter '{unknown[0]}' (known: {', '.join(sorted(KNOWN))}).")
        if "data" not in params:
            raise bad("The parameter 'data' is required.")
        model = models.find(params.get("model", ""))
        tokenize = _runs(params, "tokenizer")
        if tokenize and not model.tokenizes:
            raise bad(f"The model '{model.name}' has no tokenizer: send tokenized text "
                      "(input=horizontal, vertical or conllu), or use a model trained with a "
                      "tokenizer section.")
        fmt = RAW_FORMAT if tokenize else params.get("input", "conllu")
        if fmt not in INPUTS and not tokenize:
            raise bad(f"Unknown input format '{fmt}' (known: {', '.join(INPUTS)}).")
        output = params.get("output", "conllu")
        if output not in OUTPUTS:
            raise bad(f"Unknown output format '{output}' (dparse writes {', '.join(OUTPUTS)}).")
        tag, parse = _runs(params, "tagger"), _runs(params, "parser")
        if tag and not model.tags:
            raise bad(f"The model '{model.name}' does not contain a tagger.")
        tags = params.get("tags", "auto")
        if tags not in TAG_MODES:
            raise bad(f"Unknown tags mode '{tags}' (known: {', '.join(TAG_MODES)}).")
        constraints = params.get("constraints") or None
        if constraints is not None and constraints not in CONSTRAINT_MODES:
            raise bad(f"Unknown constraints mode '{constraints}' (known: "
                      f"{', '.join(CONSTRAINT_MODES)}).")
        kbest = _number(params, "kbest", int, 1, MAX_KBEST)
        marginals = _flag(params, "marginals")
        if sum((kbest is not None, constraints is not None, marginals)) > 1:
            raise bad("kbest, constraints and marginals: one of them at a time.")
        if not parse and (kbest is not None or constraints is not None or marginals
                          or "decoder" in params or "tags" in params):
            raise bad("decoder, tags, kbest, constraints and marginals are parser options: add "
                      "the parameter 'parser'.")
        threshold = _number(params, "marginals_threshold", float, 0.0, 1.0, open_low=True)
        temperature = _number(params, "temperature", float, 0.0, None, open_low=True)
        return cls(model, params["data"], fmt, tag, parse, params.get("decoder") or None, tags,
                   kbest, constraints, marginals, 0.01 if threshold is None else threshold,
                   1.0 if temperature is None else temperature)

    def sentences(self, limits: Limits) -> list[Sentence]:
        """The data's sentences; RequestError (400) naming the line of malformed input or the
        sentence over ``limits.max_words``."""
        raw = self.data.encode("utf-8")
        try:
            if self.input == RAW_FORMAT:
                sentences = list(text_sentences(self.model.tokenizer(), self.data, "data"))
            elif self.input == "vertical":
                sentences = list(_vertical(self.data))
            else:
                sentences = list(read_conll_block(raw, "data", INPUTS[self.input],
                                                  require_heads=False))
        except DparseError as exc:
            raise bad(f"Cannot read the input in '{self.input}' format: {exc}") from None
        for k, sentence in enumerate(sentences, 1):
            if len(sentence) > limits.max_words:
                raise bad(f"Sentence {k} (line {sentence.lineno}) has {len(sentence)} words; "
                          f"this server takes at most {limits.max_words} words a sentence.")
        return sentences

    def run(self, sentences: list[Sentence]) -> str:
        """The CoNLL-U of ``sentences`` through the model as asked (module doc); RequestError
        (400) for what the model refuses (a decoder it lacks, constraints no tree meets)."""
        out = io.StringIO()
        try:
            if self.parse:
                parser = self.model.parser_for(self.decoder, self.tags)
                if self.kbest is not None:
                    out.writelines(_kbest_text(parser, sentences, self.kbest))
                    return out.getvalue()
                write_conll(self._parsed(parser, sentences), out)
            elif self.tag:
                write_conll(self.model.tagger().tag_many(sentences), out)
            else:
                write_conll(sentences, out)
        except DparseError as exc:
            raise bad(str(exc)) from None
        return out.getvalue()

    def _parsed(self, parser: Parser, sentences: list[Sentence]) -> Iterator[Sentence]:
        if self.marginals:
            from dparse.calibration import head_attributes

            for sentence in sentences:
                parsed, probs = parser.marginals(sentence, self.temperature)
                yield parsed.with_misc(head_attributes(probs, parsed.heads,
                                                       self.marginals_threshold))
            return
        yield from parser.parse_many(sentences, constraints=self.constraints)

    def answer(self, result: str) -> dict[str, object]:
        """UDPipe's JSON answer: the model's name, the acknowledgements, the result."""
        return {"model": self.model.name, "acknowledgements": [ACKNOWLEDGEMENT],
                "result": result}


def _runs(params: Mapping[str, str], name: str) -> bool:
    """Whether the ``tagger`` or ``parser`` parameter asks to run it (module doc)."""
    value = params.get(name)
    if value is None or value == "none":
        return False
    if value not in RUN_VALUES:
        raise bad(f"The parameter '{name}' takes no options in dparse ({value!r}): send it "
                  "empty; dparse's options are parameters of their own (decoder, tags, kbest, "
                  "constraints, marginals).")
    return True


def _flag(params: Mapping[str, str], name: str) -> bool:
    value = params.get(name, "").lower()
    if value not in TRUE + FALSE:
        raise bad(f"The parameter '{name}' is 1 or 0, not {params[name]!r}.")
    return value in TRUE


def _number(params: Mapping[str, str], name: str, kind: type, low: float, high: float | None,
            open_low: bool = False) -> int | float | None:
    """The number ``params[name]`` (None when absent or empty), checked against its range."""
    text = params.get(name, "")
    if not text:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise bad(f"The parameter '{name}' must be {'an integer' if kind is int else 'a number'}"
                  f", not {text!r}.") from None
    if value != value or (value <= low if open_low else value < low) or (
            high is not None and value > high):
        bound = f"{'above' if open_low else 'at least'} {low:g}" + (
            f" and at most {high:g}" if high is not None else "")
        raise bad(f"The parameter '{name}' must be {bound}, not {text!r}.")
    return value


def _vertical(data: str) -> Iterator[Sentence]:
    """The sentences of vertical input (module doc), each as its horizontal line would read:
    ``# sent_id`` and ``# text`` comments, ID and FORM filled."""
    tokens: list[str] = []
    first = 0
    count = 0
    for lineno, line in enumerate(data.splitlines(), 1):
        token = line.split("\t", 1)[0]
        if line.strip():
            if not token.strip():
                raise InputError("data", lineno, "the line's first tab-separated field (the "
                                 "token) is empty")
            if bad_char := _CONTROL.search(token):
                raise InputError("data", lineno, "the token holds the control character "
                                 f"U+{ord(bad_char.group()):04X}; a word cannot")
            first = first or lineno
            tokens.append(token)
        elif tokens:
            count += 1
            yield _sentence(tokens, count, first)
            tokens, first = [], 0
    if tokens:
        yield _sentence(tokens, count + 1, first)


def _sentence(tokens: list[str], count: int, lineno: int) -> Sentence:
    sentence = Sentence.build(tokens, comments=[f"# sent_id = {count}",
                                                f"# text = {' '.join(tokens)}"])
    sentence.source, sentence.lineno = "data", lineno
    return sentence


def _kbest_text(parser: Parser, sentences: Iterable[Sentence], k: int) -> Iterator[str]:
    """Each sentence's k best trees as ``dparse parse --kbest`` writes them."""
    for sentence in sentences:
        for rank, (tree, score) in enumerate(parser.parse_kbest(sentence, k), 1):
            yield _kbest_block(tree, rank, score)
