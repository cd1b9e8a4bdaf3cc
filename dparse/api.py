"""dparse's public Python API, exported from :mod:`dparse` (README, "From Python").

:func:`load` gives a :class:`Parser`: ``parse`` one sentence, ``parse_many`` a stream,
``parse_file`` a file as ``dparse parse`` does (the command is a thin layer over it: the same
bytes), ``parse_kbest`` one sentence's k best trees (graph models with an exact decoder).
:func:`load_tagger` gives a :class:`Tagger` (a tagger model, or a pipeline model's
tagger): ``tag``, ``tag_many`` and ``tag_file``, as ``dparse tag`` does. :func:`load_tokenizer`
gives a :class:`Tokenizer` (a tokenizer model, or the one a parser or tagger model carries):
``tokenize`` raw text into sentences and ``tokenize_file``, as ``dparse tokenize`` does; a model
that carries a tokenizer parses and tags raw text (``parse_text``, ``tag_text``). :func:`read` and
:func:`write` read and write CoNLL-X, CoNLL-U and Malt-TAB files, :func:`evaluate` scores a
parse as ``dparse eval --json`` does, :func:`train` trains a model as ``dparse train`` does.
Sentences are :class:`dparse.conll.Sentence` objects.

One meaning per argument name: ``jobs`` is a number of processes (the workers of
``parse_many``, ``parse_file`` and their tagging twins; in :func:`train`, the processes that
run a forest reranker's or a tagging pipeline's jackknife folds), ``workers`` the workers of
iterative parameter mixing (:func:`train` only), ``overrides`` config values as a mapping
(``{"decoder.options.max_iter": 5}``) or as ``key.path=value`` strings, wherever a config is
read (:func:`load`, :func:`load_tagger`, :func:`train`).

Errors are :class:`dparse.DparseError` subclasses (:class:`dparse.InputError` for bad input,
:class:`dparse.ConfigError` for a bad config or model); nothing here exits the process or prints
(progress bars only with ``train(..., progress=True)``).

Threads and processes: the module functions keep no state and may run in several threads at
once. A :class:`Parser` or :class:`Tagger` may be shared by threads: each step of the model
(one sentence, or one tagging batch of a model that tags) runs under its lock, so threads take
turns rather than parse in parallel (``jobs`` > 1 forks its workers under the lock too). For
parallel parsing use processes: ``jobs=N`` (workers forked with the model loaded once, on
Linux), or several processes that each :func:`load` the same model directory (only read).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dparse.batch.parallel_parse import (
    DEFAULT_CHUNK,
    ParallelParser,
    Shard,
    count_sentences,
    parse_with_workers,
)
from dparse.config import load_config
from dparse.conll import (
    TEXT_FORMAT,
    PathLike,
    Sentence,
    Words,
    as_sentence,
    read_conll,
    write_conll,
)
from dparse.errors import ConfigError, DparseError
from dparse.evaluation import Evaluation, SentencesOrPath, score_system
from dparse.parsers import LoadedParser, ParserSpec, train_model, train_options
from dparse.timer import ParseTimer

if TYPE_CHECKING:
    import numpy as np

    from dparse.calibration import MarginalsOutput, TemperatureFit
    from dparse.constraints import Constraints, ConstraintSource
    from dparse.tokenizing.model import TokenizerModel
    from dparse.tokenizing.textfiles import TokenizeStats

_TEXT_NAME = "<text>"  # the source the sentences of a raw-text string name

__all__ = [
    "Evaluation",
    "ParseStats",
    "Parser",
    "Tagger",
    "Tokenizer",
    "TrainedModel",
    "evaluate",
    "load",
    "load_tagger",
    "load_tokenizer",
    "read",
    "train",
    "write",
]


def load(model_dir: PathLike, *, decoder: str | None = None, tags: str = "auto",
         overrides: Mapping[str, Any] | Sequence[str] = ()) -> Parser:
    """Load the trained model in ``model_dir`` as a :class:`Parser`.

    ``decoder``: another decoder than the model's (``dparse parse --decoder``); ``tags``: how a
    model that tags treats the input's tags (``auto`` predicts the columns the input leaves
    empty, ``predict`` all, ``keep`` none); ``overrides``: the values of the config that
    parsing reads (``--set``), ``{"decoder.options.max_iter": 5}`` or
    ``["decoder.options.max_iter=5"]``. ConfigError or DparseError for a model that cannot be
    loaded (a tagger model among them: :func:`load_tagger` loads it).

    Example::

        parser = dparse.load("models/en_ewt-o1-cle-tagged")
        sentence = parser.parse(["I", "saw", "her", "."])
    """
    return Parser(ParserSpec(os.fspath(model_dir), _override_strings(overrides), decoder, tags))


def load_tagger(model_dir: PathLike, *, tags: str = "auto",
                overrides: Mapping[str, Any] | Sequence[str] = ()) -> Tagger:
    """Load the tagger of ``model_dir`` as a :class:`Tagger`: a tagger model (``parser:
    tagger``), or the tagger that a pipeline model (a parser trained with a tagger section)
    carries. ``tags`` and ``overrides`` as for :func:`load`; DparseError for a parser that
    carries no tagger.

    Example::

        tagger = dparse.load_tagger("models/en_ewt-tagger", tags="predict")
        print(tagger.tag(["Dogs", "bark", "."]).upos)
    """
    return Tagger(ParserSpec(os.fspath(model_dir), _override_strings(overrides), None, tags,
                             tag_only=True))


def load_tokenizer(model_dir: PathLike) -> Tokenizer:
    """Load the tokenizer of ``model_dir`` as a :class:`Tokenizer`: a tokenizer model
    (``parser: tokenizer``), or the tokenizer that a parser or tagger model trained with a
    ``tokenizer`` section carries (its ``tokenizer/``). DparseError naming the directory for a
    model that is neither.

    Example::

        tokenizer = dparse.load_tokenizer("models/en_ewt-tokenizer")
        for sentence in tokenizer.tokenize("Don't stop. Go on!"):
            print(sentence.words)       # ['Do', "n't", 'stop', '.'], then ['Go', 'on', '!']
    """
    from dparse.tokenizing.carried import find_tokenizer

    return Tokenizer(Path(model_dir), find_tokenizer(model_dir))


@dataclass
class ParseStats:
    """What :meth:`Parser.parse_file` (or :meth:`Tagger.tag_file`) did: its ``timer``
    (sentences, tokens, inference seconds and ``wall``, the seconds of reading, parsing and
    writing), the decoder (None for a Tagger), the share of sentences a certifying decoder
    proved optimal (else None), the worker processes, and ``warnings``: one line per column
    the model reads that the input leaves empty.

    Example::

        stats = parser.parse_file("test.conllu", "test.parsed.conllu")
        print(stats.timer.tokens_per_second, stats.warnings)
    """

    timer: ParseTimer
    decoder: str | None
    certified_percent: float | None = None
    jobs: int = 1
    warnings: list[str] = field(default_factory=list)


class _Model:
    """What :class:`Parser` and :class:`Tagger` share: the model of a spec, loaded once, run
    under a lock on one sentence, a stream or a file."""

    def __init__(self, spec: ParserSpec) -> None:
        self._spec = spec
        self._loaded: LoadedParser = spec.load()
        self._lock = threading.Lock()
        self.model_dir = Path(spec.model_dir)
        self._tokenizer: TokenizerModel | None = None  # the carried one, loaded on first use

    def _text(self, text: str) -> list[Sentence]:
        """Raw text through the tokenizer the model carries (loaded once), then the model."""
        from dparse.tokenizing.carried import carried_tokenizer

        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = carried_tokenizer(self.model_dir)
            tokenizer = self._tokenizer
        sentences = _text_sentences(tokenizer, text)
        return list(self._locked(self._loaded.parse(iter(sentences), ParseTimer())))

    def _one(self, words: Words | Sentence) -> Sentence:
        """One sentence through the model, under the lock."""
        sentence = as_sentence(words)
        with self._lock:
            return next(self._loaded.parse((sentence,), ParseTimer()))

    def _many(self, sentences: Iterable[Words | Sentence], jobs: int, batch_size: int
              ) -> Iterator[Sentence]:
        """A stream through the model, here (one job) or in ``jobs`` worker processes."""
        _check_jobs(jobs, batch_size)
        source = (as_sentence(item, k) for k, item in enumerate(sentences, 1))
        if jobs == 1:
            return self._locked(self._loaded.parse(source, ParseTimer()))
        return self._in_workers(source, jobs, batch_size)

    def _constrained(self, pairs: Iterable[tuple[Sentence, Constraints]], timer: ParseTimer
                     ) -> Iterator[Sentence]:
        """Sentences with their constraints through the model (every family's loaded parser
        honours them: dparse.constraints)."""
        from dparse.constraints import constrained_parse

        return constrained_parse(self._loaded, pairs, timer, str(self.model_dir))

    def _locked(self, parsed: Iterator[Sentence]) -> Iterator[Sentence]:
        """``parsed``, each step of it under the lock."""
        while True:
            with self._lock:
                sentence = next(parsed, None)
            if sentence is None:
                return
            yield sentence

    def _in_workers(self, source: Iterator[Sentence], jobs: int, batch_size: int
                    ) -> Iterator[Sentence]:
        with self._lock:  # the workers fork while no other thread is inside the model
            pool = ParallelParser(self._spec, jobs, batch_size, self._loaded)
        with pool:
            yield from pool.parse_sentences(source)

    def _file(self, input: PathLike, output: PathLike, jobs: int, fmt: str | None,
              encoding: str, batch_size: int, shard: str | None, forest: PathLike | None,
              decoder_name: str | None, tagging: bool,
              constraints: ConstraintSource | None = None,
              marginals: MarginalsOutput | None = None) -> ParseStats:
        """The file ``input`` through the model into ``output`` (the options of
        :meth:`Parser.parse_file`); ``decoder_name``: the parser's decoder (None for a
        Tagger); ``tagging``: the model tags, so the input's columns are not checked against
        the ones it reads; ``constraints``: what the parse honours (dparse.constraints)."""
        from dparse.columns import INPUT_SAMPLE, ColumnCounter, input_gaps
        from dparse.decoders import find_decoder
        from dparse.modeldir import VOCAB_FILE
        from dparse.tokenizing.carried import RAW_FORMAT, raw_sentences
        from dparse.vocab import Vocabulary

        _check_jobs(jobs, batch_size)
        if constraints is not None and (jobs > 1 or (shard and constraints.forbid)):
            raise DparseError("constraints: parse with jobs=1 (and a forbid file without a "
                              "shard: its sentences are counted in the whole input)")
        if forest is not None and jobs > 1:
            raise DparseError("forest= writes one forest file: parse with jobs=1")
        if marginals is not None and (jobs > 1 or forest is not None):
            raise DparseError("marginals= are written by one job without forest=")
        if marginals is not None and constraints is not None:
            raise DparseError("marginals= and constraints: one or the other")
        if forest is not None and constraints is not None:
            raise DparseError("forest= and constraints: one or the other")
        name = os.fspath(input)
        selected = Shard.parse(shard) if shard is not None else None
        if fmt == RAW_FORMAT:  # text, tokenized by the model's tokenizer
            if selected is not None:
                raise DparseError("--format raw reads the whole text: no shard")
            sentences: Iterable[Sentence] = raw_sentences(self.model_dir, name)
        else:
            sentences = read_conll(name, fmt=fmt, encoding=encoding, require_heads=False)
        if selected is not None:
            sentences = selected.select(sentences, count_sentences(name, fmt, encoding))
        unread, trained = ((), None) if tagging else Vocabulary.read_columns(
            self.model_dir / VOCAB_FILE)
        source_name = "<stdin>" if name == "-" else name
        if jobs > 1:
            warnings = []
            if name != "-" and not tagging and fmt != RAW_FORMAT:  # judged on the file's start
                sample = islice(read_conll(name, fmt=fmt, encoding=encoding,
                                           require_heads=False), INPUT_SAMPLE)
                warnings = input_gaps(trained, unread, ColumnCounter.of(sample), source_name)
            # a file: read by the workers, in blocks of sentences (words alone: read here)
            source = (sentences if selected is not None or fmt in (TEXT_FORMAT, RAW_FORMAT)
                      else name)
            with self._lock:  # the workers fork while no other thread is inside the model
                done = parse_with_workers(self._spec, source, os.fspath(output), encoding,
                                          jobs, batch_size, fmt, self._loaded)
            certified = 100 * done.certified / done.calls if done.calls else None
            return ParseStats(done.timer, decoder_name, certified, jobs, warnings)
        timer = ParseTimer()
        # An approximate decoder that certifies optimality (dd2) counts its certified sentences.
        decoder = None if decoder_name is None else find_decoder(decoder_name)
        counting = hasattr(decoder, "certified_share")
        counter = ColumnCounter()
        with self._lock:
            if counting:
                decoder.reset_stats()
            started = time.perf_counter()
            if marginals is None:
                self._write(counter.through(sentences), output, encoding, forest, timer,
                            constraints)
            else:
                self._write_marginals(counter.through(sentences), output, encoding, timer,
                                      marginals)
            timer.wall = time.perf_counter() - started
            certified = 100 * decoder.certified_share if counting else None
        warnings = [] if tagging else input_gaps(trained, unread, counter, source_name)
        return ParseStats(timer, decoder_name, certified, 1, warnings)

    def _write(self, sentences: Iterable[Sentence], output: PathLike, encoding: str,
               forest: PathLike | None, timer: ParseTimer,
               constraints: ConstraintSource | None = None) -> None:
        """Run ``sentences`` through the model into ``output`` (and their forests into
        ``forest``), under ``constraints`` when given."""
        if constraints is not None:
            write_conll(self._constrained(constraints.pairs(sentences), timer), output,
                        encoding=encoding)
            return
        if forest is None:
            write_conll(self._loaded.parse(sentences, timer), output, encoding=encoding)
            return
        if not self._loaded.builds_forests:
            raise ConfigError(f"{self.model_dir}: --forest needs a model that builds packed "
                              "forests (parser: shiftreduce)")
        from dparse.hypergraph.forest_io import forest_writer  # only for forests

        with forest_writer(os.fspath(forest)) as forests:
            write_conll(self._loaded.parse(sentences, timer, lambda i, f: forests.write(f, i)),
                        output, encoding=encoding)


    def _parse_marginals(self) -> Callable[..., Iterator[tuple[Sentence, Any]]]:
        """The loaded model's ``parse_marginals`` (a graph model's); ConfigError otherwise."""
        parse = getattr(self._loaded, "parse_marginals", None)
        if parse is None:
            raise ConfigError(f"{self.model_dir}: head probabilities (--marginals) need a "
                              "graph model (parser: graph)")
        return parse

    def _write_marginals(self, sentences: Iterable[Sentence], output: PathLike,
                         encoding: str, timer: ParseTimer, options: MarginalsOutput) -> None:
        """Run ``sentences`` through the model into ``output`` with their head probabilities
        as ``options`` say (MISC attributes, the table written after the output)."""
        from dparse.calibration import ARC_HEADER, arc_rows, head_attributes
        from dparse.errors import InputError
        from dparse.outputs import write_text

        parsed = self._parse_marginals()(sentences, timer, options.temperature)
        rows = [ARC_HEADER]

        def annotated() -> Iterator[Sentence]:
            for position, (sentence, probs) in enumerate(parsed, 1):
                if options.table is not None:
                    rows.extend(arc_rows(position, probs, sentence.heads, options.threshold))
                if not options.misc:
                    yield sentence
                elif sentence.fmt != "conllu":
                    raise InputError(sentence.source, sentence.lineno, "head probabilities go "
                                     f"in CoNLL-U's MISC column; {sentence.fmt} has none (write "
                                     "them with a marginals table alone)")
                else:
                    yield sentence.with_misc(head_attributes(probs, sentence.heads,
                                                             options.threshold))

        write_conll(annotated(), output, encoding=encoding)
        if options.table is not None:
            write_text(options.table, "".join(rows))


class Parser(_Model):
    """A loaded model (made by :func:`load`): parses sentences, streams and files.

    A sentence given as words is a list of strings, or of (word, tag) pairs whose tag fills
    both UPOS and XPOS (as Malt-TAB's one POS column does); a :class:`dparse.Sentence` (from
    :func:`read`) is parsed with its columns. Results are Sentences whose ``heads[m]`` is the
    head of word m (0: the root; ``heads[0]`` is -1) and ``deprels[m]`` its label. Safe to share
    between threads (module doc: they take turns). Attributes: ``model_dir``, ``decoder``
    (its name), ``tagging`` (whether it tags first: a pipeline model).

    Example::

        parser = dparse.load("models/en_ewt-o1-cle-tagged")
        s = parser.parse(["Dogs", "bark", "."])
        print(s.heads[1:], s.deprels[1:], s.upos)
    """

    def __init__(self, spec: ParserSpec) -> None:
        from dparse.modeldir import TAGGER_DIR

        super().__init__(spec)
        self.tagging = (self.model_dir / TAGGER_DIR).is_dir()

    @property
    def decoder(self) -> str:
        """The decoder's name.

        Example::

            dparse.load("models/en_ewt-o1-cle", decoder="eisner").decoder == "eisner"
        """
        return self._loaded.decoder_name

    def __repr__(self) -> str:
        return f"<dparse.Parser {self.model_dir} decoder={self.decoder}>"

    def parse(self, words: Words | Sentence, *, constraints: str | None = None,
              forbid: Iterable[tuple[int, int]] = ()) -> Sentence:
        """Parse (and, with a model that tags, tag) one sentence: a list of words, of (word,
        tag) pairs, or a Sentence.

        Constrained parsing (every family; ``dparse parse --constraints``, dparse.constraints):
        ``constraints="keep"`` keeps the Sentence's filled heads and deprels (a head -1 is
        free) and predicts the rest, ``"misc"`` reads only its MISC ``Forbid=`` attributes;
        ``forbid``: (dependent, head) arcs ruled out. InputError for constraints no tree
        satisfies.

        Example::

            s = parser.parse(["She", "reads", "."])
            assert s.words == ["She", "reads", "."] and s.heads[0] == -1
            fixed = dparse.Sentence.build(["She", "reads", "."], [-1, 2, -1, -1])
            assert parser.parse(fixed, constraints="keep", forbid=[(3, 2)]).heads[1] == 2
        """
        if constraints is None and not forbid:
            return self._one(words)
        from dparse.constraints import ConstraintSource, sentence_constraints

        source = ConstraintSource.of(constraints, None) or ConstraintSource()
        sentence = as_sentence(words)
        pair = (sentence, sentence_constraints(sentence, source.keep, forbid))
        with self._lock:
            return next(self._constrained((pair,), ParseTimer()))

    def parse_text(self, text: str) -> list[Sentence]:
        """Tokenize raw ``text`` with the tokenizer the model carries (a model trained with a
        ``tokenizer`` section) and parse (and, with a model that tags, tag) its sentences:
        what ``dparse parse --format raw`` writes, as Sentences (``# text``, ``# sent_id``,
        multiword tokens and spacing marks kept: :meth:`Tokenizer.tokenize`). DparseError for
        a model that carries no tokenizer.

        Example::

            parser = dparse.load("models/en_ewt-o1-cle-raw")   # with a tokenizer section
            for s in parser.parse_text("Don't stop. Go on!"):
                print(s.words, s.heads[1:], s.deprels[1:])
        """
        return self._text(text)

    @property
    def temperature(self) -> float | None:
        """The temperature of :meth:`marginals` fitted on dev when the model was trained
        (its ``calibration.json``); None for a model without one (T = 1 is used)."""
        return getattr(self._loaded, "fitted_temperature", None)

    def marginals(self, words: Words | Sentence, temperature: float | None = None
                  ) -> tuple[Sentence, np.ndarray]:
        """Parse one sentence (as :meth:`parse`) and give its head probabilities: float64
        [n+1, n+1], ``probs[h, m]`` = P(h -> m) (column 0 and the diagonal 0; each word's
        column sums to 1), marginals of p(tree) ∝ exp(score(tree) / ``temperature``) (None:
        :attr:`temperature`, the one fitted at training, else 1) over the parts the decoder
        reads: a first-order model's arcs over its decoder's trees (projective or not,
        single-root as it is); a second-order model's arcs, siblings and grandparents over
        projective trees (exact for eisner2-*, an approximation for dd2:
        :mod:`dparse.graph.distribution`). Graph models only (ConfigError otherwise).

        Example::

            s, probs = parser.marginals(["She", "reads", "."], temperature=2.0)
            confidence = probs[s.heads[1:], range(1, len(s) + 1)]
        """
        parse = self._parse_marginals()
        sentence = as_sentence(words)
        with self._lock:
            return next(parse((sentence,), ParseTimer(), temperature))

    def fit_temperature(self, treebank: PathLike | Iterable[Sentence]) -> TemperatureFit:
        """The temperature for :meth:`marginals` under which the gold trees of ``treebank``
        (a file, or sentences with heads; a dev set) are most likely
        (:func:`dparse.calibration.fit_temperature`). Graph models only.

        Example::

            fit = parser.fit_temperature("../shared/data/en_ewt/dev.conllu")
            s, probs = parser.marginals(["She", "reads", "."], fit.temperature)
        """
        fit = getattr(self._loaded, "fit_temperature", None)
        if fit is None:
            raise ConfigError(f"{self.model_dir}: fitting a temperature needs a graph model "
                              "(parser: graph)")
        sentences = (read_conll(treebank) if isinstance(treebank, str | os.PathLike)
                     else treebank)
        with self._lock:
            return fit(sentences)

    def parse_many(self, sentences: Iterable[Words | Sentence], jobs: int = 1,
                   batch_size: int = DEFAULT_CHUNK, *, constraints: str | None = None,
                   forbid: PathLike | None = None) -> Iterator[Sentence]:
        """Parse a stream of sentences (each as :meth:`parse` takes it), yielding the parsed
        ones in order as they come. ``jobs`` > 1 parses in that many worker processes,
        ``batch_size`` sentences at a time, with the same results. ``constraints`` (``keep``,
        ``misc``) and ``forbid`` (a forbid file) as for :meth:`parse_file` (one job).

        Example::

            for s in parser.parse_many(dparse.read("test.conllu"), jobs=2):
                print(s.to_conllu(), end="")
        """
        from dparse.constraints import ConstraintSource

        source = ConstraintSource.of(constraints, forbid)
        if source is None:
            return self._many(sentences, jobs, batch_size)
        if jobs != 1:
            raise DparseError("constraints: parse with jobs=1")
        pairs = source.pairs(as_sentence(item, k) for k, item in enumerate(sentences, 1))
        return self._locked(self._constrained(pairs, ParseTimer()))

    def parse_file(self, input: PathLike, output: PathLike = "-", jobs: int = 1, *,
                   fmt: str | None = None, encoding: str = "utf-8",
                   batch_size: int = DEFAULT_CHUNK, shard: str | None = None,
                   forest: PathLike | None = None, kbest: int | None = None,
                   constraints: str | None = None, forbid: PathLike | None = None,
                   marginals: MarginalsOutput | None = None) -> ParseStats:
        """Parse the file ``input`` into ``output`` as ``dparse parse`` does, byte for byte:
        every sentence in order with its comments, multiword-token and empty-node lines, the
        output written whole or not at all (``-``: stdin, stdout).

        ``fmt``: the input's format (None detects it; ``text``: words alone, a sentence a
        line; ``raw``: raw text, tokenized by the tokenizer the model carries, without
        ``shard`` or ``kbest``: dparse.tokenizing.carried); ``jobs`` worker processes,
        ``batch_size`` sentences at a time; ``shard``
        ``"I/N"``: only the I-th of N pieces of the input; ``forest``: also write the packed
        forests (models that build them: shift-reduce, rerank; one job); ``kbest`` K: write
        each sentence's K best trees (:meth:`parse_kbest`) as CoNLL-U blocks, best first, each
        with its comments and ``# kbest = i`` and ``# score = S`` after them (one job, no
        forest); ``marginals`` (:class:`dparse.calibration.MarginalsOutput`, graph models, one
        job): also write the head probabilities of :meth:`marginals` (``dparse parse
        --marginals``). kbest, constraints and marginals: one of them at a time.

        Constrained parsing (every family, one job; dparse.constraints): ``constraints="keep"``
        keeps the input's filled HEAD (and DEPREL) columns and predicts the rest, ``"misc"``
        only reads the MISC ``Forbid=H1,H2`` attributes (also read with ``keep``);
        ``forbid``: a file of ``SENTENCE<TAB>DEPENDENT<TAB>HEAD`` arcs ruled out. InputError
        naming the sentence for constraints that no tree satisfies.

        Example::

            stats = parser.parse_file("test.conllu", "test.parsed.conllu", jobs=2)
            parser.parse_file("test.conllu", "test.10best.conllu", kbest=10)
            parser.parse_file("partial.conllu", "full.conllu", constraints="keep")
        """
        from dparse.constraints import ConstraintSource

        source = ConstraintSource.of(constraints, forbid)
        if kbest is not None:
            if source is not None or marginals is not None:
                raise DparseError("kbest= and constraints or marginals: one or the other")
            if fmt == "raw":
                raise DparseError("kbest= reads CoNLL: tokenize raw text first (dparse "
                                  "tokenize)")
            return self._kbest_file(input, output, kbest, jobs, fmt, encoding, shard, forest)
        return self._file(input, output, jobs, fmt, encoding, batch_size, shard, forest,
                          self.decoder, self.tagging, source, marginals)

    def parse_kbest(self, words: Words | Sentence, k: int) -> list[tuple[Sentence, float]]:
        """The ``k`` best trees of one sentence (given as to :meth:`parse`), best first, as
        (parsed Sentence, score) pairs: distinct trees, fewer when fewer exist, each labeled
        as the model labels its 1-best tree (the best label of each arc); the first is
        :meth:`parse`'s (second order: up to ties). Graph models whose decoder has k-best lists
        (dparse/graph/kbest.pyx): cle (k best spanning trees), eisner (k best projective
        trees), eisner2-sib and eisner2-sibgp (k best projective trees under the second-order
        scores); DparseError for other models and decoders.

        Example::

            for tree, score in parser.parse_kbest(["She", "reads", "."], 3):
                print(score, tree.heads[1:])
        """
        sentence = as_sentence(words)
        with self._lock:
            return next(_kbest_parses(self._loaded, (sentence,), k, ParseTimer(),
                                      self.model_dir))

    def _kbest_file(self, input: PathLike, output: PathLike, k: int, jobs: int,
                    fmt: str | None, encoding: str, shard: str | None,
                    forest: PathLike | None) -> ParseStats:
        """``parse_file(..., kbest=k)``: the k-best lists of ``input`` into ``output``."""
        from dparse.outputs import open_output

        if jobs != 1 or forest is not None:
            raise DparseError("kbest= parses in one job and writes no forest")
        name = os.fspath(input)
        sentences: Iterable[Sentence] = read_conll(name, fmt=fmt, encoding=encoding,
                                                   require_heads=False)
        if shard is not None:
            sentences = Shard.parse(shard).select(sentences, count_sentences(name, fmt,
                                                                             encoding))
        timer = ParseTimer()
        with self._lock:
            lists = _kbest_parses(self._loaded, sentences, k, timer, self.model_dir)
            started = time.perf_counter()
            with open_output(output, "w", encoding) as out:
                for trees in lists:
                    out.writelines(_kbest_block(tree, i, score)
                                   for i, (tree, score) in enumerate(trees, 1))
            timer.wall = time.perf_counter() - started
        return ParseStats(timer, self.decoder)


class Tagger(_Model):
    """A loaded tagger (made by :func:`load_tagger`): predicts the LEMMA, UPOS, XPOS and FEATS
    columns of sentences, streams and files, as ``dparse tag`` does; sentences are given as
    to :meth:`Parser.parse`. Safe to share between threads (module doc). Attribute:
    ``model_dir``.

    Example::

        tagger = dparse.load_tagger("models/en_ewt-tagger", tags="predict")
        s = tagger.tag(["Dogs", "bark", "."])
        print(s.upos, s.xpos, s.feats, s.lemma)
    """

    def __repr__(self) -> str:
        return f"<dparse.Tagger {self.model_dir}>"

    def tag(self, words: Words | Sentence) -> Sentence:
        """Tag one sentence: a list of words, of (word, tag) pairs, or a Sentence (its HEAD
        and DEPREL kept).

        Example::

            s = tagger.tag(["She", "reads", "."])
            assert len(s.upos) == 3
        """
        return self._one(words)

    def tag_text(self, text: str) -> list[Sentence]:
        """Tokenize raw ``text`` with the tokenizer the model carries and tag its sentences:
        what ``dparse tag --format raw`` writes, as Sentences (:meth:`Parser.parse_text`).
        DparseError for a model that carries no tokenizer.

        Example::

            tagger = dparse.load_tagger("models/en_ewt-tagger-raw")   # carries a tokenizer
            print([s.upos for s in tagger.tag_text("Don't stop. Go on!")])
        """
        return self._text(text)

    def tag_many(self, sentences: Iterable[Words | Sentence], jobs: int = 1,
                 batch_size: int = DEFAULT_CHUNK) -> Iterator[Sentence]:
        """Tag a stream of sentences (each as :meth:`tag` takes it), yielding the tagged ones
        in order as they come; ``jobs`` and ``batch_size`` as for :meth:`Parser.parse_many`.

        Example::

            dparse.write(tagger.tag_many(dparse.read("test.conllu")), "test.tagged.conllu")
        """
        return self._many(sentences, jobs, batch_size)

    def tag_file(self, input: PathLike, output: PathLike = "-", jobs: int = 1, *,
                 fmt: str | None = None, encoding: str = "utf-8",
                 batch_size: int = DEFAULT_CHUNK, shard: str | None = None) -> ParseStats:
        """Tag the file ``input`` into ``output`` as ``dparse tag`` does, byte for byte (the
        options of :meth:`Parser.parse_file`, but forests).

        Example::

            stats = tagger.tag_file("test.conllu", "test.tagged.conllu")
            print(stats.timer.tokens_per_second)
        """
        return self._file(input, output, jobs, fmt, encoding, batch_size, shard, None, None,
                          True)


class Tokenizer:
    """A loaded tokenizer (made by :func:`load_tokenizer`): splits raw text into sentences,
    tokens and syntactic words as ``dparse tokenize`` does. It keeps no state between calls:
    threads may share it and tokenize at once. Attribute: ``model_dir``.

    Example::

        tokenizer = dparse.load_tokenizer("models/en_ewt-tokenizer")
        sentences = tokenizer.tokenize("It's raining. Take an umbrella!")
        parsed = dparse.load("models/en_ewt-o1-cle").parse_many(sentences)
    """

    def __init__(self, model_dir: Path, model: TokenizerModel) -> None:
        self.model_dir = model_dir
        self._model = model

    def __repr__(self) -> str:
        return f"<dparse.Tokenizer {self.model_dir}>"

    def tokenize(self, text: str) -> list[Sentence]:
        """The sentences of raw ``text``, as ``dparse tokenize`` writes them (their
        ``to_conllu()`` joined is its output, byte for byte): ``# newdoc`` / ``# newpar``
        where a blank line / a line break starts a document / paragraph, ``# sent_id`` (1,
        2, ... in order), ``# text``, the words (a multiword token's words after its range
        line), the spacing marks (``SpaceAfter=No``, ``SpacesAfter``, ``SpacesBefore``) from
        which the text is rebuilt exactly; the other columns empty (heads -1). No sentence
        for a text of white space alone; InputError for what is not a str of Unicode text.

        Example::

            s = tokenizer.tokenize("Don't stop.")[0]
            print(s.words, s.to_conllu())   # ['Do', "n't", 'stop', '.'], a 1-2 range line
        """
        return _text_sentences(self._model, text)

    def tokenize_file(self, input: PathLike, output: PathLike = "-") -> TokenizeStats:
        """Tokenize the UTF-8 text file ``input`` (``-``: stdin) into CoNLL-U at ``output``
        (``-``: stdout) as ``dparse tokenize`` does, byte for byte, written whole or not at
        all; what it did (:class:`dparse.tokenizing.textfiles.TokenizeStats`: characters,
        sentences, tokens, words, seconds). InputError naming the byte offset of invalid
        UTF-8.

        Example::

            stats = tokenizer.tokenize_file("test.txt", "test.tokenized.conllu")
            print(stats.sentences, stats.tokens, stats.summary())
        """
        from dparse.tokenizing.textfiles import tokenize_file

        return tokenize_file(self._model, input, output)


def _text_sentences(tokenizer: TokenizerModel, text: str) -> list[Sentence]:
    """The sentences of raw ``text`` as ``tokenizer`` splits them, named :data:`_TEXT_NAME`;
    InputError for a ``text`` that is not a str."""
    from dparse.errors import InputError
    from dparse.tokenizing.carried import text_sentences

    if not isinstance(text, str):
        raise InputError(_TEXT_NAME, None, f"raw text is a str, not {type(text).__name__} "
                         "(decode bytes first; a list of words goes to parse or tag)")
    return list(text_sentences(tokenizer, text, _TEXT_NAME))


def _kbest_parses(loaded: LoadedParser, sentences: Iterable[Sentence], k: int,
                  timer: ParseTimer, model_dir: Path) -> Iterator[list[tuple[Sentence, float]]]:
    """Each sentence's k best trees as (parsed copy, score) pairs, best first: the graph
    model's part scores (those its decoder takes) through the k-best function of its decoder
    (dparse.graph.kbest.KBEST), labels as the model gives them (its best label of each arc);
    a pipeline model tags first. DparseError for a model or decoder without k-best lists."""
    from dparse.graph.kbest import KBEST
    from dparse.graph.model import GraphModel

    if k < 1:
        raise DparseError(f"kbest must be at least 1, got {k}")
    tagger = getattr(loaded, "tagger", None)  # a pipeline model: its tagger, then its parser
    parser = getattr(loaded, "parser", loaded)
    model = getattr(parser, "model", None)
    if not isinstance(model, GraphModel) or parser.decoder_name not in KBEST:
        raise DparseError(f"{model_dir}: k-best trees need a graph model parsed by a "
                          f"decoder with k-best lists ({', '.join(sorted(KBEST))}), not "
                          f"decoder {loaded.decoder_name!r}")
    if tagger is not None:
        sentences = tagger.tag(sentences, timer, loaded.mode, count=False)
    return _kbest_lists(model, KBEST[parser.decoder_name], parser.decoder.parts,
                        parser.single_root, sentences, k, timer)


def _kbest_lists(model: Any, kbest: Callable[..., list[tuple[Any, float]]],
                 accepted: tuple[str, ...], single_root: bool, sentences: Iterable[Sentence],
                 k: int, timer: ParseTimer) -> Iterator[list[tuple[Sentence, float]]]:
    """:func:`_kbest_parses` once checked: ``kbest`` over the graph ``model``'s arc scores and
    the part arrays named in ``accepted`` (the decoder's parts)."""
    from dparse.graph.model import PartScratch, best_labels

    names = model.vocab.labels
    scratch = PartScratch()  # the part arrays, zeroed for each sentence
    for sent, _, enc in model.encoded(((s, None) for s in sentences), timer):
        t1 = time.perf_counter()
        arc, label, parts = model.score_parts(enc, None, False, scratch)
        t2 = time.perf_counter()
        given = {key: value for key, value in parts.items() if key in accepted}
        trees = kbest(arc, k, single_root=single_root, **given) if len(sent) else \
            [(sent.heads, 0.0)]
        parsed = [(sent.with_parse(heads, [""] + [names[i] for i in
                                                  best_labels(label, heads)[1:].tolist()]),
                   score) for heads, score in trees]
        timer.score += t2 - t1
        timer.decode += time.perf_counter() - t2
        timer.sentences += 1
        timer.tokens += len(sent)
        yield parsed


def _kbest_block(tree: Sentence, rank: int, score: float) -> str:
    """A k-best list's tree as CoNLL-U text: its comments, then ``# kbest = rank`` and
    ``# score = score``, then its lines."""
    lines = tree.to_conllu().splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    end = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    return "".join([*lines[:at], f"# kbest = {rank}{end}", f"# score = {score:.6f}{end}",
                    *lines[at:]])


def _check_jobs(jobs: int, batch_size: int) -> None:
    if jobs < 1 or batch_size < 1:
        raise DparseError(f"jobs ({jobs}) and batch_size ({batch_size}) must be at least 1")


def read(path: PathLike, fmt: str | None = None, encoding: str = "utf-8"
         ) -> Iterator[Sentence]:
    """The sentences of a CoNLL-X, CoNLL-U or Malt-TAB file (``.gz`` too; ``-``: stdin), one by
    one as they are read; ``fmt`` None detects the format, ``text`` reads words alone, one
    sentence a line. HEAD may be ``_`` (head -1). InputError names the file and line of a
    malformed line.

    Example::

        sentences = list(dparse.read("../shared/data/en_ewt/test.conllu"))
        print(sentences[0].words, sentences[0].heads)
    """
    return read_conll(path, fmt=fmt, encoding=encoding, require_heads=False)


def write(sentences: Iterable[Sentence], path: PathLike | None = "-",
          encoding: str = "utf-8") -> None:
    """Write sentences as :func:`read` read them (their parse as set), to ``path`` (``-`` or
    None: stdout; ``.gz`` compresses), the file written whole or not at all.

    Example::

        dparse.write(parser.parse_many(dparse.read("test.conllu")), "test.parsed.conllu")
    """
    write_conll(sentences, path, encoding=encoding)


def evaluate(gold: SentencesOrPath, system: SentencesOrPath, punct: str = "include", *,
             other: SentencesOrPath | None = None, detail: bool = False,
             train: PathLike | None = None, fmt: str | None = None,
             encoding: str = "utf-8") -> Evaluation:
    """Score ``system`` against ``gold`` (files, or sentences) as ``dparse eval`` does: parse
    scores over the tokens the ``punct`` rule keeps (``include``, ``conll``, ``ptb``, ``upos``),
    the CoNLL 2018 content-word scores (CLAS, MLAS, BLEX) and tag scores over every word.
    ``other``: a second system for SARC and gold(x, y); ``detail``: the breakdowns (``train``:
    the training file, for accuracy on unseen words).

    Example::

        ev = dparse.evaluate("test.conllu", parser.parse_many(dparse.read("test.conllu")))
        assert ev.as_dict()["las"] == ev.las
    """
    result = score_system(gold, system, punct, [] if other is None else [other], detail, train,
                          fmt, encoding)
    if other is not None and not result.system_heads:
        raise DparseError("other= is compared as a parse, but the system has no heads")
    return result


@dataclass(frozen=True)
class TrainedModel:
    """What :func:`train` wrote: the model directory, the training seconds and the epoch kept.

    Example::

        trained = dparse.train("configs/en_ewt/o1-cle.yaml", "models/o1-cle")
        parser = dparse.load(trained.path)
    """

    path: Path
    seconds: float
    best_epoch: int


def train(config: PathLike, out: PathLike | None = None,
          overrides: Mapping[str, Any] | Sequence[str] = (), *, data_root: PathLike | None = None,
          jobs: int = 1, work: PathLike | None = None, workers: int = 1,
          cluster: str = "local", mixing: str = "uniform", progress: bool = False,
          on_epoch: Callable[[Any], None] | None = None) -> TrainedModel:
    """Train the model of the YAML ``config`` and save it in ``out`` (default
    ``models/<config name>``), as ``dparse train`` does: the same model, byte for byte.

    ``overrides``: config values, ``{"training.epochs": 2}`` or ``["training.epochs=2"]``;
    ``data_root``: where the config's treebank paths start (default ``$DPARSE_DATA`` or
    ``../shared/data``); ``jobs``: the processes in which a forest reranker's or a tagging
    pipeline's jackknife folds run, ``work`` their work directory; ``workers``: train a parser
    (any family that trains on workers: not the tagger) on that many workers by iterative
    parameter mixing (``cluster`` local, slurm, pbs or inline, ``mixing`` uniform or updates:
    ``dparse train --workers``); ``progress``: progress bars on stderr; ``on_epoch``: called
    with each epoch's :class:`dparse.epochs.EpochReport`.

    Example::

        dparse.train("configs/en_ewt/o1-cle.yaml", "models/small",
                     {"training.epochs": 2, "data.train": "en_ewt/dev.conllu"})
    """
    from dparse.batch.engines import worker_options  # the cluster's modules: only to train

    cfg = load_config(config, _override_strings(overrides),
                      None if data_root is None else os.fspath(data_root))
    out_dir = Path(out) if out is not None else Path("models") / cfg.name
    options = train_options(cfg, out_dir, None if work is None else os.fspath(work), jobs,
                            workers=worker_options(workers, cluster, mixing))
    result = train_model(cfg, out_dir, options, progress, on_epoch)
    return TrainedModel(out_dir, result.seconds, result.best_epoch)


def _override_strings(overrides: Mapping[str, Any] | Sequence[str]) -> tuple[str, ...]:
    """``key.path=value`` strings from a mapping (values as JSON, which YAML reads back) or
    a sequence of such strings."""
    if isinstance(overrides, Mapping):
        return tuple(f"{key}={json.dumps(os.fspath(v) if isinstance(v, os.PathLike) else v)}"
                     for key, v in overrides.items())
    if isinstance(overrides, str):
        raise ConfigError(f"overrides: a mapping or a list of key.path=value, not {overrides!r}")
    return tuple(overrides)
