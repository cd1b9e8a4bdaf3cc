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

Heads set before dparse runs are kept: a token whose dependency label an earlier component (or
the Doc's maker: ``Doc(..., heads=..., deps=...)``, ``token.head = ...`` with ``token.dep_``)
set keeps its head and label, as fixed arcs of constrained parsing (``dparse parse
--constraints keep``, :mod:`dparse.constraints`; a token without a label has no head in spaCy's
sense); the others are parsed around them. spaCy derives a Doc's sentence starts from its
heads, so a Doc whose tokens have heads only in part is parsed as one sentence (give each
sentence its own Doc); a Doc whose every token has one keeps ``doc.sents``. A head outside
the token's sentence, or on white space, is a DparseError naming the token; constraints that
no tree of the model's kind keeps, an InputError naming the sentence. A batch of Docs without
heads parses as without this rule; ``keep_heads: false`` in the component's config parses
every token anew.

``nlp.to_disk`` copies the model directory into the component's directory, and ``spacy.load``
loads it from there; the model is loaded on first use, once per process (``nlp.pipe(...,
n_process=N)`` forks the workers with the loaded model on Linux). :func:`doc_to_conllu` (also
``doc._.conllu``) writes a parsed Doc as CoNLL-U.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from spacy.attrs import DEP, HEAD, IS_SPACE, LEMMA, MORPH, ORTH, POS, SENT_START, TAG
from spacy.language import Language
from spacy.parts_of_speech import IDS as UNIVERSAL_POS
from spacy.tokens import Doc
from spacy.util import minibatch

from dparse.collector import collector_paused

if TYPE_CHECKING:
    from dparse.api import Parser
    from dparse.conll import Sentence

MODEL_DIR = "model"  # the model directory's copy inside the component's to_disk directory
SPACE_LABEL = "dep"  # the label of a white-space token, attached to a neighbouring word
_WHITE_SPACE = re.compile(r"\s")


@Language.factory(
    "dparse",
    default_config={"model": None, "decoder": None, "tags": "auto", "batch_size": 1000,
                    "keep_heads": True},
    assigns=["token.head", "token.dep", "token.is_sent_start", "token.pos", "token.tag",
             "token.morph", "token.lemma"],
)
def make_dparse(nlp: Language, name: str, model: str | None, decoder: str | None, tags: str,
                batch_size: int, keep_heads: bool) -> DparseComponent:
    """The ``dparse`` factory: a :class:`DparseComponent` parsing with the model directory
    ``model`` (None only for a pipeline that ``from_disk`` loads); ``keep_heads``: keep the
    heads set before it runs (module doc; False: parse every token anew).

    Example::

        nlp.add_pipe("dparse", config={"model": "models/en_ewt-o1-cle", "batch_size": 1000})
    """
    return DparseComponent(nlp, name, model, decoder, tags, batch_size, keep_heads)


class DparseComponent:
    """A spaCy component that parses (and, with a model that tags, tags) each sentence of a
    Doc with a dparse model (module doc); ``batch_size`` Docs are parsed at a time (as many
    as ``nlp.pipe``'s default: a model that tags tags up to 4,096 sentences at a time).

    Example::

        parser = nlp.add_pipe("dparse", config={"model": "models/en_ewt-o1-cle"})
        doc = parser(Doc(nlp.vocab, words=["Dogs", "bark", "."]))
    """

    def __init__(self, nlp: Language, name: str, model: str | None, decoder: str | None = None,
                 tags: str = "auto", batch_size: int = 1000, keep_heads: bool = True) -> None:
        self.name = name
        self.vocab = nlp.vocab
        self.model = None if model is None else Path(model)
        self.decoder = decoder
        self.tags = tags
        self.batch_size = batch_size
        self.keep_heads = keep_heads
        self._parser: Parser | None = None
        self._label_ids = _Ids(nlp.vocab.strings.add)  # labels, tags and lemmas
        self._morph_ids = _Ids(nlp.vocab.morphology.add)  # FEATS

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
        time, yielding a batch's Docs when it is done. Python's cyclic garbage collector is
        paused while a batch is parsed (:func:`dparse.collector.collector_paused`)."""
        for batch in minibatch(docs, batch_size or self.batch_size):
            with collector_paused():
                found = [(doc, _DocWords(doc, self.keep_heads)) for doc in batch]
                keep = any(found_words.has_heads for _, found_words in found)
                parsed = self.parser.parse_many(
                    (found_words.sentence(k) for _, found_words in found
                     for k in range(len(found_words.sentences))),
                    constraints="keep" if keep else None)
                for doc, found_words in found:
                    self._assign(doc, found_words,
                                 [next(parsed) for _ in found_words.sentences])
            yield from batch

    def _assign(self, doc: Doc, found: _DocWords, parses: list[Sentence]) -> None:
        """Set the heads and labels (and tags) of ``doc`` from its sentences' parses."""
        ids = self._label_ids
        heads = list(range(len(doc)))  # absolute; roots (and spaces, for now): themselves
        labels = [ids[SPACE_LABEL]] * len(doc)
        for words, sentence in zip(found.sentences, parses, strict=True):
            for i, h, label in zip(words, sentence.heads.tolist()[1:], sentence.deprels[1:],
                                   strict=True):
                heads[i] = words[h - 1] if h else i
                labels[i] = ids[label]
        found.attach_spaces(heads)
        columns = [heads, labels]
        attrs = [HEAD, DEP]
        if self.parser.tagging:
            columns += self._tag_ids(len(doc), found, parses)
            attrs += [POS, TAG, MORPH, LEMMA]
        rows = np.array(columns, dtype=np.uint64).T
        rows[:, 0] -= np.arange(len(doc), dtype=np.uint64)  # HEAD is relative (mod 2**64)
        doc.from_array(attrs, rows)

    def _tag_ids(self, n: int, found: _DocWords, parses: list[Sentence]) -> list[list[int]]:
        """The POS, TAG, MORPH and LEMMA ids of a Doc of ``n`` tokens from its sentences'
        UPOS, XPOS, FEATS and LEMMA columns (0, unset, for ``_``, a UPOS that is not a
        universal tag, and white space)."""
        ids, morphs = self._label_ids, self._morph_ids
        pos, tag, morph, lemma = ([0] * n for _ in range(4))
        for words, sentence in zip(found.sentences, parses, strict=True):
            columns = zip(words, sentence.upos, sentence.xpos, sentence.feats, sentence.lemma,
                          strict=True)
            for i, u, x, f, lm in columns:
                pos[i] = UNIVERSAL_POS.get(u, 0)
                tag[i] = ids[x] if x != "_" else 0
                morph[i] = morphs[f] if f != "_" else 0
                lemma[i] = ids[lm] if lm != "_" else 0
        return [pos, tag, morph, lemma]

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


class _Ids(dict):
    """A string -> its id in the vocabulary (``add``: the StringStore's, or the
    morphology's for FEATS), added on first use."""

    def __init__(self, add: Callable[[str], int]) -> None:
        super().__init__()
        self.add = add

    def __missing__(self, text: str) -> int:
        self[text] = self.add(text)
        return self[text]


class _DocWords:
    """The words of a Doc by sentence: ``bounds`` the (start, end) token indices of each
    sentence (``doc.sents``' if sentence starts are set, else the whole Doc), ``sentences``
    the token indices of the words of each that has one (white-space tokens left out);
    :meth:`sentence` gives one as a dparse Sentence. (Read with one ``to_array``: making
    ``doc.sents`` or asking ``doc.has_annotation`` costs more than parsing a short Doc.)"""

    def __init__(self, doc: Doc, keep_heads: bool = True) -> None:
        self.doc = doc
        n = len(doc)
        # sentence start (1 start, -1 not, 0 unset), white space, text, the tags set, and the
        # dependency label and head (relative, mod 2**64) set
        rows = doc.to_array([SENT_START, IS_SPACE, ORTH, POS, TAG, LEMMA, MORPH, DEP, HEAD]) \
            if n else np.zeros((0, 9), dtype=np.uint64)
        starts = rows[:, 0].tolist()
        # heads set on some tokens only: spaCy derived the sentence starts from them (each
        # token that is its own head starts a sentence), which is no segmentation: one sentence
        partial = bool(rows[:, 7].any()) and not (rows[:, 7].astype(bool) | rows[:, 1]).all()
        set_starts = any(starts[1:]) and not partial
        edges = [i for i in range(1, n) if starts[i] == 1] if set_starts else []
        edges = [0, *edges, n]
        self.bounds = [(a, b) for a, b in zip(edges, edges[1:], strict=False) if a < b]
        self.space = rows[:, 1].astype(bool).tolist()
        self.has_space = any(self.space)
        if self.has_space:
            self.sentences = [words for a, b in self.bounds
                              if (words := [i for i in range(a, b) if not self.space[i]])]
        else:
            self.sentences = [list(range(a, b)) for a, b in self.bounds]
        strings = doc.vocab.strings
        self.texts = [strings[h] for h in rows[:, 2].tolist()]
        self.tagged = bool(rows[:, 3:7].any())
        # the heads set before dparse runs (absolute token index; -1: none), kept when parsing
        self.has_heads = keep_heads and bool(rows[:, 7].any())
        self.deps = rows[:, 7].tolist()
        self.heads = ((np.arange(n, dtype=np.uint64) + rows[:, 8]).astype(np.int64).tolist()
                      if self.has_heads else [])

    def sentence(self, k: int) -> Sentence:
        """Sentence ``k``'s words (with the tags an earlier component set) as a dparse
        Sentence."""
        from dparse.conll import Sentence

        words = self.sentences[k]
        texts = self.texts
        form = [texts[i] for i in words]
        if _WHITE_SPACE.search("".join(form)):  # no tab or line break inside a word
            form = [" ".join(word.split()) for word in form]
        heads, deprels = self.fixed_arcs(words) if self.has_heads else (None, None)
        if not self.tagged:
            return Sentence.build(form, heads, deprels, xpos=["_"] * len(form))
        tokens = [self.doc[i] for i in words]

        def column(values: list[str]) -> list[str] | None:
            return [v or "_" for v in values] if any(values) else None

        return Sentence.build(form, heads, deprels, upos=column([t.pos_ for t in tokens]),
                              xpos=column([t.tag_ for t in tokens]) or ["_"] * len(tokens),
                              lemma=column([t.lemma_ for t in tokens]),
                              feats=column([str(t.morph) for t in tokens]))

    def fixed_arcs(self, words: list[int]) -> tuple[list[int], list[str]]:
        """The HEAD and DEPREL columns ([n+1], entry 0 the root's) of the sentence of the
        tokens ``words`` from the heads set before dparse runs: a labeled token's head (0
        where it is its own head, spaCy's root) and label, -1 and ``_`` for the others;
        DparseError for a head outside the sentence's words."""
        from dparse.errors import DparseError

        position = {i: m for m, i in enumerate(words, 1)}
        strings = self.doc.vocab.strings
        heads, deprels = [-1], [""]
        for i in words:
            if not self.deps[i]:
                heads.append(-1)
                deprels.append("_")
                continue
            h = self.heads[i]
            if h != i and h not in position:
                raise DparseError(f"spaCy Doc token {i} ({self.texts[i]!r}): its head, token "
                                  f"{h}, is not a word of its sentence (tokens {words[0]}.."
                                  f"{words[-1]}); dparse keeps heads within a sentence")
            heads.append(0 if h == i else position[h])
            deprels.append(strings[self.deps[i]])
        return heads, deprels

    def attach_spaces(self, heads: list[int]) -> None:
        """Attach each white-space token to the word before it in its sentence (after it,
        before the sentence's first word)."""
        if not self.has_space:
            return
        for start, end in self.bounds:
            inside = [i for i in range(start, end) if not self.space[i]]
            if not inside:
                continue
            previous = inside[0]
            for i in range(start, end):
                if self.space[i]:
                    heads[i] = previous
                else:
                    previous = i


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
