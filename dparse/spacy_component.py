"""dparse as a spaCy (3.8) pipeline component (``pip install 'dparse[spacy]'``).

The factory ``dparse`` is registered through spaCy's ``spacy_factories`` entry point, so that
an installed dparse needs no import::

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("dparse", config={"model": "models/en_ewt-o1-cle-tagged"})
    doc = nlp("She reads. He writes.")

Each sentence of a Doc (``doc.sents`` if something set sentence starts, else the whole Doc)
is parsed as :meth:`dparse.Parser.parse_many` parses its words: ``token.head`` and
``token.dep_`` (the model's labels, ``root`` for the root word, whose head is itself, as in
spaCy) and, with a model that tags (a pipeline model), ``token.pos_``, ``token.tag_``,
``token.morph`` and ``token.lemma_``. Tags that an earlier component set are passed on as the
UPOS, XPOS, FEATS and LEMMA columns (a model that tags predicts the empty ones: ``tags``
``auto``). White-space tokens (``token.is_space``) are not words: each is attached to the word
before it (the one after it at a sentence's start), label ``dep``.

``nlp.to_disk`` copies the model directory into the component's directory, and ``spacy.load``
loads it from there; the model is loaded on first use, once per process (``nlp.pipe(...,
n_process=N)`` forks the workers with the loaded model on Linux). :func:`doc_to_conllu` (also
``doc._.conllu``) writes a parsed Doc as CoNLL-U.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

if TYPE_CHECKING:
    from dparse.api import Parser
    from dparse.conll import Sentence

MODEL_DIR = "model"  # the model directory's copy inside the component's to_disk directory
SPACE_LABEL = "dep"  # the label of a white-space token, attached to a neighbouring word


@Language.factory(
    "dparse",
    default_config={"model": None, "decoder": None, "tags": "auto", "batch_size": 256},
    assigns=["token.head", "token.dep", "token.is_sent_start", "token.pos", "token.tag",
             "token.morph", "token.lemma"],
)
def make_dparse(nlp: Language, name: str, model: str | None, decoder: str | None, tags: str,
                batch_size: int) -> DparseComponent:
    """The ``dparse`` factory: a :class:`DparseComponent` parsing with the model directory
    ``model`` (None only for a pipeline that ``from_disk`` loads).

    Example::

        nlp.add_pipe("dparse", config={"model": "models/en_ewt-o1-cle", "batch_size": 256})
    """
    return DparseComponent(nlp, name, model, decoder, tags, batch_size)


class DparseComponent:
    """A spaCy component that parses (and, with a model that tags, tags) each sentence of a
    Doc with a dparse model (module doc); ``batch_size`` Docs are parsed at a time.

    Example::

        parser = nlp.add_pipe("dparse", config={"model": "models/en_ewt-o1-cle"})
        doc = parser(Doc(nlp.vocab, words=["Dogs", "bark", "."]))
    """

    def __init__(self, nlp: Language, name: str, model: str | None, decoder: str | None = None,
                 tags: str = "auto", batch_size: int = 256) -> None:
        self.name = name
        self.vocab = nlp.vocab
        self.model = None if model is None else Path(model)
        self.decoder = decoder
        self.tags = tags
        self.batch_size = batch_size
        self._parser: Parser | None = None

    @property
    def parser(self) -> Parser:
        """The dparse Parser, loaded on first use (DparseError for a bad model)."""
        if self._parser is None:
            from dparse.api import load
            from dparse.errors import ConfigError

            if self.model is None:
                raise ConfigError(f"spaCy component {self.name!r}: no model: "
                                  "add_pipe('dparse', config={'model': MODEL_DIR})")
            self._parser = load(self.model, decoder=self.decoder, tags=self.tags)
        return self._parser

    def __call__(self, doc: Doc) -> Doc:
        """Parse one Doc in place (and return it)."""
        return next(self.pipe([doc]))

    def pipe(self, docs: Iterable[Doc], batch_size: int | None = None) -> Iterator[Doc]:
        """Parse a stream of Docs in place, ``batch_size`` (default: the component's) at a
        time, yielding each as it is done."""
        for batch in minibatch(docs, batch_size or self.batch_size):
            spans = [(doc, span) for doc in batch for span in _sentences(doc)]
            parsed = self.parser.parse_many(_words(span) for _, span in spans)
            by_doc: dict[int, list[tuple[Span, Sentence]]] = {}
            for (doc, span), sentence in zip(spans, parsed, strict=True):
                by_doc.setdefault(id(doc), []).append((span, sentence))
            for doc in batch:
                self._assign(doc, by_doc.get(id(doc), []))
                yield doc

    def _assign(self, doc: Doc, parses: list[tuple[Span, Sentence]]) -> None:
        """Set the heads and labels (and tags) of ``doc`` from its sentences' parses."""
        strings = self.vocab.strings
        heads = np.arange(len(doc), dtype=np.int64)  # absolute; root and empty: itself
        labels = np.full(len(doc), strings.add(SPACE_LABEL), dtype=np.uint64)
        tagging = self.parser.tagging
        for span, sentence in parses:
            words = [t.i for t in span if not t.is_space]
            for m, (i, h) in enumerate(zip(words, sentence.heads[1:].tolist(), strict=True)):
                heads[i] = i if h == 0 else words[h - 1]
                labels[i] = strings.add(sentence.deprels[m + 1])
            _attach_spaces(span, heads)
            if tagging:
                _set_tags(doc, words, sentence)
        relative = (heads - np.arange(len(doc))).astype(np.uint64)
        doc.from_array([HEAD, DEP], np.stack([relative, labels], axis=1))

    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """Copy the model directory into ``path`` (``nlp.to_disk`` calls it)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        source = self.parser.model_dir
        target = path / MODEL_DIR
        if target.resolve() != source.resolve():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> DparseComponent:
        """Parse with the model that :meth:`to_disk` copied into ``path`` (``spacy.load``
        calls it); loaded on first use."""
        self.model = Path(path) / MODEL_DIR
        self._parser = None
        return self

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the loaded model (a process that unpickles it loads its own)."""
        return {**self.__dict__, "_parser": None}


def _sentences(doc: Doc) -> list[Span]:
    """The sentences of ``doc`` that hold a word: ``doc.sents`` if sentence starts are set,
    else the whole Doc."""
    spans = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
    return [span for span in spans if any(not t.is_space for t in span)]


def _words(span: Span) -> Sentence:
    """The words of ``span`` (white space left out) with the tags an earlier component set,
    as a dparse Sentence."""
    from dparse.conll import Sentence

    tokens = [t for t in span if not t.is_space]
    form = [" ".join(t.text.split()) for t in tokens]  # no tab or line break inside a word

    def column(values: list[str]) -> list[str] | None:
        return [v or "_" for v in values] if any(values) else None

    return Sentence.build(form, upos=column([t.pos_ for t in tokens]),
                          xpos=column([t.tag_ for t in tokens]) or ["_"] * len(tokens),
                          lemma=column([t.lemma_ for t in tokens]),
                          feats=column([str(t.morph) for t in tokens]))


def _attach_spaces(span: Span, heads: np.ndarray) -> None:
    """Attach each white-space token of ``span`` to the word before it (after it, before the
    first word)."""
    words = [t.i for t in span if not t.is_space]
    previous = None
    for t in span:
        if not t.is_space:
            previous = t.i
        else:
            heads[t.i] = previous if previous is not None else words[0]


def _set_tags(doc: Doc, words: list[int], sentence: Sentence) -> None:
    """The UPOS, XPOS, FEATS and LEMMA columns of ``sentence`` on its words in ``doc``."""
    columns = zip(words, sentence.upos, sentence.xpos, sentence.feats, sentence.lemma,
                  strict=True)
    for i, upos, xpos, feats, lemma in columns:
        token = doc[i]
        if upos != "_":
            token.pos_ = upos
        if xpos != "_":
            token.tag_ = xpos
        token.set_morph(None if feats == "_" else feats)
        if lemma != "_":
            token.lemma_ = lemma


def doc_to_conllu(doc: Doc) -> str:
    """``doc`` as CoNLL-U: one sentence per ``doc.sents`` (the whole Doc if none are set) with
    a ``# text`` comment, the words with their LEMMA, UPOS, XPOS, FEATS, HEAD and DEPREL
    (``_`` where unset); white-space tokens are left out.

    Example::

        text = doc_to_conllu(nlp("She reads. He writes."))   # also doc._.conllu
    """
    from dparse.conll import Sentence

    parsed = doc.has_annotation("DEP")
    spans = list(doc.sents) if parsed or doc.has_annotation("SENT_START") else [doc[:]]
    out = []
    for span in spans:
        tokens = [t for t in span if not t.is_space]
        if not tokens:
            continue
        number = {t.i: m for m, t in enumerate(tokens, 1)}
        heads = [-1, *(0 if t.head.i == t.i else number.get(t.head.i, 0) for t in tokens)] \
            if parsed else None
        rels = ["", *(t.dep_ or "_" for t in tokens)] if parsed else None
        text = " ".join(span.text.split())
        out.append(Sentence.build(
            [" ".join(t.text.split()) for t in tokens], heads, rels,
            upos=[t.pos_ or "_" for t in tokens], xpos=[t.tag_ or "_" for t in tokens],
            lemma=[t.lemma_ or "_" for t in tokens], feats=[str(t.morph) or "_" for t in tokens],
            comments=[f"# text = {text}"]).to_conllu())
    return "".join(out)


if not Doc.has_extension("conllu"):
    Doc.set_extension("conllu", getter=doc_to_conllu)
