"""dparse's public Python API, exported from :mod:`dparse` (README, "From Python").

:func:`load` gives a :class:`Parser`: ``parse`` one sentence, ``parse_many`` a stream,
``parse_file`` a file as ``dparse parse`` does (the command is a thin layer over it: the same
bytes). :func:`read` and :func:`write` read and write CoNLL-X, CoNLL-U and Malt-TAB files,
:func:`evaluate` scores a parse as ``dparse eval --json`` does, :func:`train` trains a model
as ``dparse train`` does. Sentences are :class:`dparse.conll.Sentence` objects.

Errors are :class:`dparse.DparseError` subclasses (:class:`dparse.InputError` for bad input,
:class:`dparse.ConfigError` for a bad config or model); nothing here exits the process or prints
(progress bars only with ``train(..., progress=True)``).

Threads and processes: the module functions keep no state and may run in several threads at
once. A :class:`Parser` may be shared by threads: each step of the model (one sentence, or one
tagging batch of a model that tags) runs under the Parser's lock, so threads take turns rather
than parse in parallel (``jobs`` > 1 forks its workers under the lock too). For parallel
parsing use processes: ``jobs=N`` (workers forked with the model loaded once, on Linux), or
several processes that each :func:`load` the same model directory (only read).
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
from typing import Any

from dparse.batch.parallel_parse import (
    DEFAULT_CHUNK,
    ParallelParser,
    ParserSpec,
    Shard,
    count_sentences,
    parse_with_workers,
)
from dparse.conll import TEXT_FORMAT, Sentence, read_conll, write_conll
from dparse.errors import ConfigError, DparseError, InputError
from dparse.metrics import Report
from dparse.parsers import LoadedParser
from dparse.tagscores import TagReport
from dparse.timer import ParseTimer

# What Parser.parse takes for one sentence: its words, or (word, tag) pairs.
Words = Sequence[str] | Sequence[tuple[str, str]]
PathLike = str | os.PathLike[str]


def load(model_dir: PathLike, *, decoder: str | None = None, tags: str = "auto",
         overrides: Sequence[str] = (), tag_only: bool = False) -> Parser:
    """Load the trained model in ``model_dir`` as a :class:`Parser`.

    ``decoder``: another decoder than the model's (``dparse parse --decoder``); ``tags``: how a
    model that tags treats the input's tags (``auto`` predicts the columns the input leaves
    empty, ``predict`` all, ``keep`` none); ``overrides``: ``key.path=value`` settings of the
    config that parsing reads (``--set``); ``tag_only``: only tag (a tagger model, or a
    pipeline model's tagger). ConfigError or DparseError for a model that cannot be loaded.

    Example::

        parser = dparse.load("models/en_ewt-o1-cle-tagged")
        sentence = parser.parse(["I", "saw", "her", "."])
    """
    return Parser(ParserSpec(os.fspath(model_dir), tuple(overrides), decoder, tags, tag_only))


@dataclass
class ParseStats:
    """What :meth:`Parser.parse_file` did: its ``timer`` (sentences, tokens, inference seconds
    and ``wall``, the seconds of reading, parsing and writing), the decoder, the share of
    sentences a certifying decoder proved optimal (else None), the worker processes, and
    ``warnings``: one line per column the model reads that the input leaves empty.

    Example::

        stats = parser.parse_file("test.conllu", "test.parsed.conllu")
        print(stats.timer.tokens_per_second, stats.warnings)
    """

    timer: ParseTimer
    decoder: str | None
    certified_percent: float | None = None
    jobs: int = 1
    warnings: list[str] = field(default_factory=list)


class Parser:
    """A loaded model (made by :func:`load`): parses sentences, streams and files.

    A sentence given as words is a list of strings, or of (word, tag) pairs whose tag fills
    both UPOS and XPOS (as Malt-TAB's one POS column does); a :class:`dparse.Sentence` (from
    :func:`read`) is parsed with its columns. Results are Sentences whose ``heads[m]`` is the
    head of word m (0: the root; ``heads[0]`` is -1) and ``deprels[m]`` its label. Safe to share
    between threads (module doc: they take turns). Attributes: ``model_dir``, ``decoder``
    (its name), ``tagging`` (whether it tags: a pipeline model, or ``tag_only``).

    Example::

        parser = dparse.load("models/en_ewt-o1-cle-tagged")
        s = parser.parse(["Dogs", "bark", "."])
        print(s.heads[1:], s.deprels[1:], s.upos)
    """

    def __init__(self, spec: ParserSpec) -> None:
        from dparse.modeldir import TAGGER_DIR

        self._spec = spec
        self._loaded: LoadedParser = spec.load()
        self._lock = threading.Lock()
        self.model_dir = Path(spec.model_dir)
        self.tagging = spec.tag_only or (self.model_dir / TAGGER_DIR).is_dir()
        self.tag_only = spec.tag_only

    @property
    def decoder(self) -> str:
        """The decoder's name (``tagger`` for a Parser that only tags)."""
        return self._loaded.decoder_name

    def __repr__(self) -> str:
        return f"<dparse.Parser {self.model_dir} decoder={self.decoder}>"

    def parse(self, words: Words | Sentence) -> Sentence:
        """Parse (and, with a model that tags, tag) one sentence: a list of words, of (word,
        tag) pairs, or a Sentence.

        Example::

            s = parser.parse(["She", "reads", "."])
            assert s.words == ["She", "reads", "."] and s.heads[0] == -1
        """
        sentence = as_sentence(words)
        with self._lock:
            return next(self._loaded.parse((sentence,), ParseTimer()))

    def parse_many(self, sentences: Iterable[Words | Sentence], jobs: int = 1,
                   batch_size: int = DEFAULT_CHUNK) -> Iterator[Sentence]:
        """Parse a stream of sentences (each as :meth:`parse` takes it), yielding the parsed
        ones in order as they come. ``jobs`` > 1 parses in that many worker processes,
        ``batch_size`` sentences at a time, with the same results.

        Example::

            for s in parser.parse_many(dparse.read("test.conllu"), jobs=2):
                print(s.to_conllu(), end="")
        """
        _check_jobs(jobs, batch_size)
        source = (as_sentence(item, k) for k, item in enumerate(sentences, 1))
        if jobs == 1:
            return self._locked(self._loaded.parse(source, ParseTimer()))
        return self._in_workers(source, jobs, batch_size)

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

    def parse_file(self, input: PathLike, output: PathLike = "-", jobs: int = 1, *,
                   fmt: str | None = None, encoding: str = "utf-8",
                   batch_size: int = DEFAULT_CHUNK, shard: str | None = None,
                   forest: PathLike | None = None) -> ParseStats:
        """Parse the file ``input`` into ``output`` as ``dparse parse`` does, byte for byte:
        every sentence in order with its comments, multiword-token and empty-node lines, the
        output written whole or not at all (``-``: stdin, stdout).

        ``fmt``: the input's format (None detects it; ``text``: words alone, a sentence a
        line); ``jobs`` worker processes, ``batch_size`` sentences at a time; ``shard``
        ``"I/N"``: only the I-th of N pieces of the input; ``forest``: also write the packed
        forests (shift-reduce models, one job).

        Example::

            stats = parser.parse_file("test.conllu", "test.parsed.conllu", jobs=2)
        """
        from dparse.columns import INPUT_SAMPLE, ColumnCounter, input_gaps
        from dparse.decoders import find_decoder
        from dparse.modeldir import VOCAB_FILE
        from dparse.vocab import Vocabulary

        _check_jobs(jobs, batch_size)
        if self.tag_only and forest is not None:
            raise DparseError("tagging writes no forests: forest= needs a parser")
        if forest is not None and jobs > 1:
            raise DparseError("forest= writes one forest file: parse with jobs=1")
        name = os.fspath(input)
        selected = Shard.parse(shard) if shard is not None else None
        sentences: Iterable[Sentence] = read_conll(name, fmt=fmt, encoding=encoding,
                                                   require_heads=False)
        if selected is not None:
            sentences = selected.select(sentences, count_sentences(name, fmt, encoding))
        unread, trained = ((), None) if self.tagging else Vocabulary.read_columns(
            self.model_dir / VOCAB_FILE)
        source_name = "<stdin>" if name == "-" else name
        if jobs > 1:
            warnings = []
            if name != "-" and not self.tagging:  # judged on the file's start
                sample = islice(read_conll(name, fmt=fmt, encoding=encoding,
                                           require_heads=False), INPUT_SAMPLE)
                warnings = input_gaps(trained, unread, ColumnCounter.of(sample), source_name)
            # a file: read by the workers, in blocks of sentences (words alone: read here)
            source = sentences if selected is not None or fmt == TEXT_FORMAT else name
            with self._lock:  # the workers fork while no other thread is inside the model
                done = parse_with_workers(self._spec, source, os.fspath(output), encoding,
                                          jobs, batch_size, fmt, self._loaded)
            certified = 100 * done.certified / done.calls if done.calls else None
            return ParseStats(done.timer, done.decoder_name, certified, jobs, warnings)
        timer = ParseTimer()
        # An approximate decoder that certifies optimality (dd2) counts its certified sentences.
        decoder = None if self.tag_only else find_decoder(self.decoder)
        counting = hasattr(decoder, "certified_share")
        counter = ColumnCounter()
        with self._lock:
            if counting:
                decoder.reset_stats()
            started = time.perf_counter()
            self._write(counter.through(sentences), output, encoding, forest, timer)
            timer.wall = time.perf_counter() - started
            certified = 100 * decoder.certified_share if counting else None
        warnings = [] if self.tagging else input_gaps(trained, unread, counter, source_name)
        return ParseStats(timer, self.decoder, certified, 1, warnings)

    def _write(self, sentences: Iterable[Sentence], output: PathLike, encoding: str,
               forest: PathLike | None, timer: ParseTimer) -> None:
        """Parse ``sentences`` into ``output`` (and their forests into ``forest``)."""
        if forest is None:
            write_conll(self._loaded.parse(sentences, timer), output, encoding=encoding)
            return
        if self._loaded.forest_fn is None:
            raise ConfigError(f"{self.model_dir}: --forest needs a model that builds packed "
                              "forests (parser: shiftreduce)")
        from dparse.hypergraph.forest_io import forest_writer  # only for forests

        with forest_writer(os.fspath(forest)) as forests:
            write_conll(self._loaded.forest_fn(sentences, timer,
                                               lambda i, f: forests.write(f, i)),
                        output, encoding=encoding)


def _check_jobs(jobs: int, batch_size: int) -> None:
    if jobs < 1 or batch_size < 1:
        raise DparseError(f"jobs ({jobs}) and batch_size ({batch_size}) must be at least 1")


def as_sentence(item: Words | Sentence, position: int = 1) -> Sentence:
    """``item`` as a Sentence: itself, or a new one from its words or (word, tag) pairs (the
    tag in UPOS and XPOS); InputError for a string, a pair that is not two strings, or a word
    that is empty or holds a tab or a line break (``position``: the item's, for the message).

    Example::

        dparse.api.as_sentence([("Hi", "INTJ")]).upos == ["INTJ"]
    """
    if isinstance(item, Sentence):
        return item
    where = f"<sentence {position}>"
    if isinstance(item, str):
        raise InputError(where, None, "a sentence is a list of words, not a string (split it "
                         "into words first)")
    words = list(item)
    if not words:
        raise InputError(where, None, "a sentence needs at least one word")
    tags = None
    if words and not isinstance(words[0], str):
        if not all(isinstance(p, tuple | list) and len(p) == 2 for p in words):
            raise InputError(where, None, "give words, or (word, tag) pairs, not a mixture")
        tags = [str(tag) for _, tag in words]
        words = [word for word, _ in words]
    for word in words:
        if not isinstance(word, str) or not word or "\t" in word or "\n" in word \
                or "\r" in word:
            raise InputError(where, None, f"word {word!r}: a word is a non-empty string "
                             "without tabs or line breaks")
    return Sentence.build(words, upos=tags)


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


# The parse scores of eval's JSON report, null when the system has no heads.
PARSE_SCORES = ("uas", "las", "las_universal", "u_uas", "root_accuracy", "complete_match",
                "labeled_complete_match")


@dataclass(frozen=True)
class Evaluation:
    """The scores of :func:`evaluate`, in percent (None where not applicable), as
    ``dparse eval --json`` reports them: :meth:`as_dict` is its JSON object.

    Parse scores are None when the system has no heads (``system_heads`` False, a tagger's
    output); tag scores (``upos``, ``xpos``, ``ufeats``, ``alltags``, ``lemmas``) are None for
    the columns the system leaves empty. ``report`` and ``tag_report`` hold the details
    (punctuation rule, SARC, per-label scores with ``detail``).

    Example::

        ev = dparse.evaluate("test.conllu", "test.parsed.conllu", punct="upos")
        print(ev.las, ev.uas, ev.as_dict()["punct_rule"])
    """

    sentences: int
    tokens: int
    system_heads: bool
    uas: float | None
    las: float | None
    las_universal: float | None
    u_uas: float | None
    root_accuracy: float | None
    complete_match: float | None
    labeled_complete_match: float | None
    upos: float | None
    xpos: float | None
    ufeats: float | None
    alltags: float | None
    lemmas: float | None
    report: Report | None
    tag_report: TagReport
    breakdowns: Any = None  # with detail: dparse.reports.breakdowns.Comparison

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``dparse eval --json`` (with ``--detail`` if asked for).

        Example::

            json.dumps(dparse.evaluate("gold.conllu", "system.conllu").as_dict())
        """
        if self.report is None:
            return {"sentences": self.sentences, "tokens": self.tokens, "system_heads": False,
                    **dict.fromkeys(PARSE_SCORES), **self.tag_report.as_dict()}
        data = {**self.report.as_dict(), "system_heads": True, **self.tag_report.as_dict()}
        if self.tag_report.detail:
            data["breakdowns"] = self.breakdowns.as_dict()
        return data


SentencesOrPath = PathLike | Iterable[Sentence]


def evaluate(gold: SentencesOrPath, system: SentencesOrPath, punct: str = "include", *,
             other: SentencesOrPath | None = None, detail: bool = False,
             train: PathLike | None = None, fmt: str | None = None,
             encoding: str = "utf-8") -> Evaluation:
    """Score ``system`` against ``gold`` (files, or sentences) as ``dparse eval`` does: parse
    scores over the tokens the ``punct`` rule keeps (``include``, ``conll``, ``ptb``, ``upos``),
    tag scores over every word. ``other``: a second system for SARC and gold(x, y);
    ``detail``: the breakdowns (``train``: the training file, for accuracy on unseen words).

    Example::

        ev = dparse.evaluate("test.conllu", parser.parse_many(dparse.read("test.conllu")))
        assert ev.as_dict()["las"] == ev.las
    """
    result = evaluation(gold, system, punct, [] if other is None else [other], detail, train,
                        fmt, encoding)
    if other is not None and not result.system_heads:
        raise DparseError("other= is compared as a parse, but the system has no heads")
    return result


def evaluation(gold: SentencesOrPath, system: SentencesOrPath, punct: str,
               others: Sequence[SentencesOrPath], detail: bool, train: PathLike | None,
               fmt: str | None, encoding: str, skip_invalid_trees: bool = False,
               compare: bool = False) -> Evaluation:
    """:func:`evaluate` with ``dparse eval``'s other options: several ``others`` (the first
    for SARC), ``skip_invalid_trees`` (counted on stderr), and ``compare``: the breakdowns
    even without ``detail`` (for ``--plot``)."""
    from dparse.gold import keep_gold_trees
    from dparse.metrics import evaluate as score_parses
    from dparse.tagscores import score_tags

    if train is not None and not detail:
        raise DparseError("train= is for detail=True (accuracy on unseen words)")
    kw = {"fmt": fmt, "encoding": encoding}
    gold_sentences = _sentences(gold, kw, require_heads=True)
    parses = [_sentences(system, kw, require_heads=False),
              *(_sentences(path, kw, require_heads=True) for path in others)]
    gold_trees, parses = keep_gold_trees(gold_sentences, parses, skip_invalid_trees)
    seen = None
    if detail and train is not None:
        seen = {form for sent in read(train, **kw) for form in sent.form}
    tags = score_tags(gold_trees, parses[0], detail=detail, seen_forms=seen)
    tag_scores = {key: None if s is None else s.accuracy for key, s in tags.scores.items()}
    counts = {"sentences": len(gold_trees), "tokens": sum(map(len, gold_trees))}
    if not has_heads(parses[0]):
        return Evaluation(**counts, system_heads=False, **dict.fromkeys(PARSE_SCORES),
                          **tag_scores, report=None, tag_report=tags)
    report = score_parses(gold_trees, parses[0], punct=punct,
                          other=parses[1] if others else None, detail=detail)
    comparison = None
    if detail or compare:
        from dparse.reports.breakdowns import compare_systems  # plain eval needs none

        names = [_name(system), *map(_name, others)]
        comparison = compare_systems(gold_trees, list(zip(names, parses, strict=True)), punct)
    return Evaluation(**counts, system_heads=True,
                      **{key: getattr(report, key) for key in PARSE_SCORES}, **tag_scores,
                      report=report, tag_report=tags, breakdowns=comparison)


def _sentences(source: SentencesOrPath, kw: dict[str, Any], require_heads: bool
               ) -> list[Sentence]:
    if isinstance(source, str | os.PathLike):
        return list(read_conll(source, **kw, require_heads=require_heads))
    return list(source)


def _name(source: SentencesOrPath) -> str:
    return os.fspath(source) if isinstance(source, str | os.PathLike) else "<sentences>"


def has_heads(system: Sequence[Sentence]) -> bool:
    """Whether ``system`` is a parse: True when every word has a HEAD, False when none has (all
    ``_``); InputError naming the first word without one when only some have."""
    blank = sum(int((s.heads[1:] < 0).sum()) for s in system)
    if blank in (0, sum(map(len, system))):
        return blank == 0
    s, m = next((s, m) for s in system for m in range(1, len(s) + 1) if s.heads[m] < 0)
    raise InputError(s.source, s.line_of(m), "HEAD is _ but other words of this system file have "
                     "heads: give every word a HEAD (a parse) or none (tags alone)")


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
    ``../shared/data``); ``jobs`` and ``work``: a forest reranker's or a tagging pipeline's
    jackknife folds at a time and work directory; ``workers``: train a parser (any type but
    the tagger) on that many workers by iterative parameter mixing (``cluster`` local, slurm,
    pbs or inline, ``mixing`` uniform or updates: ``dparse train --workers``); ``progress``:
    progress bars on stderr;
    ``on_epoch``: called with each epoch's :class:`dparse.epochs.EpochReport`.

    Example::

        dparse.train("configs/en_ewt/o1-cle.yaml", "models/small",
                     {"training.epochs": 2, "data.train": "en_ewt/dev.conllu"})
    """
    from dparse.config import load_config

    cfg = load_config(config, override_strings(overrides),
                      None if data_root is None else os.fspath(data_root))
    out_dir = Path(out) if out is not None else Path("models") / cfg.name
    options = train_options(cfg, out_dir, None if work is None else os.fspath(work), jobs,
                            workers=worker_options(workers, cluster, mixing))
    return train_model(cfg, out_dir, options, progress, on_epoch)


def worker_options(workers: int, cluster: str, mixing: str, **batch: Any) -> Any:
    """The :class:`dparse.batch.engines.WorkerOptions` of ``workers`` on ``cluster`` (None for
    one worker); ``batch``: :class:`dparse.batch.cluster.ClusterOptions` values and
    ``scheduler``."""
    if workers == 1:
        return None
    from dparse.batch.cluster import ClusterOptions
    from dparse.batch.engines import WorkerOptions

    scheduler = batch.pop("scheduler", None)
    return WorkerOptions(workers, cluster, mixing,
                         ClusterOptions().merged(batch, "worker options"), scheduler)


def train_model(cfg: Any, out_dir: Path, options: dict[str, Any], progress: bool,
                on_epoch: Callable[[Any], None] | None) -> TrainedModel:
    """Train the parser of the loaded config ``cfg`` (``options``: :func:`train_options`) and
    save it in ``out_dir``."""
    from dparse.epochs import save_model
    from dparse.parsers import train_parser

    result = train_parser(cfg, progress=progress, on_epoch=on_epoch, **options)
    save_model(result, cfg, out_dir)
    return TrainedModel(out_dir, result.seconds, result.best_epoch)


def override_strings(overrides: Mapping[str, Any] | Sequence[str]) -> list[str]:
    """``key.path=value`` strings from a mapping (values as JSON, which YAML reads back) or
    a sequence of such strings."""
    if isinstance(overrides, Mapping):
        return [f"{key}={json.dumps(os.fspath(v) if isinstance(v, os.PathLike) else v)}"
                for key, v in overrides.items()]
    if isinstance(overrides, str):
        raise ConfigError(f"overrides: a mapping or a list of key.path=value, not {overrides!r}")
    return list(overrides)


# the parser types that train on several workers (all but the tagger)
MIXED_PARSERS = ("graph", "umst", "easyfirst", "shiftreduce", "rerank")


def train_options(cfg: Any, out_dir: Path, work: str | None, jobs: int,
                  fold: int | None = None, workers: Any = None) -> dict[str, Any]:
    """The options of :func:`dparse.parsers.train_parser` for ``cfg``: ``jobs`` and ``work``
    for a forest reranker (its work directory set in ``cfg``) and a tagging pipeline (default
    ``<out_dir>.work``), ``workers`` (WorkerOptions, or None for one) for the types of
    :data:`MIXED_PARSERS`; ConfigError where they (or a reranker's ``fold``) do not apply."""
    from dparse.tagging.pipeline import has_tagger

    options: dict[str, Any] = {}
    if workers is not None:
        if cfg.parser not in MIXED_PARSERS:
            raise ConfigError(f"--workers trains parsers ({', '.join(MIXED_PARSERS)}); a "
                              f"{cfg.parser} config trains on one core")
        options["workers"] = workers
    if cfg.parser == "rerank":
        if work is not None or cfg.rerank.work is None:
            cfg.rerank.work = work or f"{out_dir}.work"
        options["jobs"] = jobs
    elif has_tagger(cfg):
        if fold is not None:
            raise ConfigError("--fold applies to forest rerankers (parser: rerank)")
        options["jobs"] = jobs
        options["work"] = work or f"{out_dir}.work"
    elif work is not None or jobs != 1 or fold is not None:
        raise ConfigError("work and jobs apply to forest rerankers (parser: rerank) and to "
                          "parsers trained on predicted tags (a tagger section), fold to "
                          f"rerankers; this is a {cfg.parser} config without a tagger")
    return options
