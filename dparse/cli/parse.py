"""``dparse parse MODEL_DIR [INPUT] [-o OUTPUT]``: parse CoNLL input with a trained model."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path

import click

from dparse.batch.parallel_parse import (
    DEFAULT_CHUNK,
    ParserSpec,
    Shard,
    count_sentences,
    parse_with_workers,
)
from dparse.cli.options import PARSE_TIME_KEYS, check_model_overrides, model_set_option
from dparse.columns import INPUT_SAMPLE, ColumnCounter, input_gaps
from dparse.config import load_config
from dparse.conll import INPUT_FORMATS, TEXT_FORMAT, read_conll, write_conll
from dparse.decoders import find_decoder
from dparse.errors import ConfigError
from dparse.modeldir import CONFIG_FILE, VOCAB_FILE, check_model_dir
from dparse.parsers import load_parser
from dparse.tagging.model import TAG_MODES
from dparse.tagging.pipeline import TAGGER_DIR
from dparse.timer import ParseTimer
from dparse.vocab import Vocabulary


def stream_options(verb: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options that ``dparse parse`` and ``dparse tag`` (``verb``: Parse, Tag) share:
    output, input format, --tags, encoding, --json, --jobs, --shard and --chunk-size."""
    options = [
        click.option("--output", "-o", default="-", help="Output file [default: stdout]."),
        click.option("--format", "fmt", type=click.Choice(["auto", *INPUT_FORMATS]),
                     default="auto", show_default=True,
                     help="Input format; text: words alone, one sentence a line, tokens "
                     "separated by whitespace (written out as CoNLL-U with # text)."),
        click.option("--tags", type=click.Choice(TAG_MODES), default="auto", show_default=True,
                     help="With a model that tags: auto predicts the columns (LEMMA, UPOS, "
                     "XPOS, FEATS) the input leaves empty and keeps the others; predict "
                     "replaces them all; keep uses the input's (gold-tag experiments)."),
        click.option("--encoding", default="utf-8", show_default=True,
                     help="Input and output encoding."),
        click.option("--json", "as_json", is_flag=True,
                     help="Print the summary as JSON on stderr."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Worker processes (forked with the model loaded once, on Linux); "
                     "output identical to one job's, in input order."),
        click.option("--shard", "shard_text", metavar="I/N", default=None,
                     help=f"{verb} only the I-th of N contiguous pieces of INPUT (a file): the "
                     "outputs of shards 1..N concatenated in order are the whole output (a "
                     "job array)."),
        click.option("--chunk-size", type=click.IntRange(min=1), default=DEFAULT_CHUNK,
                     show_default=True, help="Sentences sent to a worker at a time (with "
                     "--jobs)."),
    ]

    def add(command: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(options):
            command = option(command)
        return command

    return add


@click.command("parse")
@click.argument("model_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("input", default="-", required=False)
@stream_options("Parse")
@click.option("--decoder", "decoder_name", default=None,
              help="Decoder to use instead of the model's: for a graph model a registered "
              "decoder that takes its parts (first order: cle, eisner, bgi, bgi-pp, ...); an "
              "easy-first model takes easyfirst-scan or easyfirst-heap.")
@click.option("--forest", "forest_path", default=None, metavar="FILE",
              help="Also write each sentence's packed forest to FILE (dparse.hypergraph "
              "forest format, gzip if it ends in .gz); shift-reduce models only.")
@model_set_option
def parse(model_dir: str, input: str, output: str, decoder_name: str | None, fmt: str,
          encoding: str, as_json: bool, jobs: int, shard_text: str | None, chunk_size: int,
          forest_path: str | None, tags: str, overrides: tuple[str, ...]) -> None:
    """Parse INPUT (a CoNLL-X, CoNLL-U or Malt-TAB file; stdin by default) with MODEL_DIR.

    Writes every sentence back in order with its comments, multiword-token lines and empty
    nodes, replacing only HEAD and DEPREL. Prints a one-line summary to stderr: sentences,
    tokens, inference seconds and tokens/sec (summed over the workers), and the wall time of
    reading, parsing and writing with the tokens/sec over it (model loading excluded).
    A pipeline model (trained with a tagger section) tags first: --tags auto predicts the
    columns (LEMMA, UPOS, XPOS, FEATS) the input leaves empty and keeps the others, predict
    replaces them all, keep uses the input's. Otherwise warns when the input leaves empty a
    column that the model reads and that its training file filled (with --jobs N: judged on
    the file's first sentences). --format text reads words alone, one sentence a line.

    \b
    Examples:
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu -o test.parsed.conllu
      dparse parse models/en_ewt-o1-cle --decoder eisner < ../shared/data/en_ewt/dev.conllu \\
          > dev.parsed.conllu
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu --json > /dev/null
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/dev.conllu --jobs 2 \\
          -o dev.parsed.conllu
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/dev.conllu --shard 3/8 \\
          -o dev.parsed.3-of-8.conllu
      dparse parse models/en_ewt-sr-nonsp-b12 ../shared/data/en_ewt/dev.conllu -o dev.sr.conllu \\
          --forest dev.forests.gz
      dparse parse models/en_ewt-o1-cle-tagged words.txt --format text -o words.conllu
    """
    run(model_dir, input, output, decoder_name, fmt, encoding, as_json, jobs, shard_text,
        chunk_size, forest_path, tags, overrides, tag_only=False)


def run(model_dir: str, input: str, output: str, decoder_name: str | None, fmt: str,
        encoding: str, as_json: bool, jobs: int, shard_text: str | None, chunk_size: int,
        forest_path: str | None, tags: str, overrides: tuple[str, ...], tag_only: bool) -> None:
    """What ``dparse parse`` (and, with ``tag_only``, ``dparse tag``) does: read INPUT, parse
    or tag it with the model in ``model_dir``, write OUTPUT and the summary line."""
    directory = Path(model_dir)
    check_model_dir(directory)  # before its config is read
    check_model_overrides(directory, overrides, PARSE_TIME_KEYS)
    cfg = load_config(directory / CONFIG_FILE, overrides)
    shard = Shard.parse(shard_text) if shard_text is not None else None
    in_fmt = None if fmt == "auto" else fmt
    sentences = read_conll(input, fmt=in_fmt, encoding=encoding, require_heads=False)
    if tag_only and (decoder_name is not None or forest_path is not None):
        raise click.UsageError("dparse tag takes neither --decoder nor --forest")
    if shard is not None:
        sentences = shard.select(sentences, count_sentences(input, in_fmt, encoding))
    if forest_path is not None and jobs > 1:
        raise click.UsageError("--forest writes one forest file: use it with --jobs 1")
    if cfg.parser == "tagger" and not tag_only:
        load_parser(directory, cfg, decoder_name)  # the error that says what to do instead
    tagged = tag_only or (directory / TAGGER_DIR).is_dir()
    verb = "tagged" if tag_only else "parsed"
    unread, trained = ((), None) if tagged else Vocabulary.read_columns(directory / VOCAB_FILE)
    if jobs > 1:
        spec = ParserSpec(model_dir, tuple(overrides), decoder_name, tags, tag_only)
        if input != "-" and not tagged:  # judged on the file's start (workers read the rest)
            _warn_about_columns(trained, unread, ColumnCounter.of(islice(read_conll(
                input, fmt=in_fmt, encoding=encoding, require_heads=False), INPUT_SAMPLE)), input)
        # a file: read by the workers, in blocks of sentences (words alone: read here)
        source = sentences if shard is not None or in_fmt == TEXT_FORMAT else input
        stats = parse_with_workers(spec, source, output, encoding, jobs, chunk_size, in_fmt)
        certified = 100 * stats.certified / stats.calls if stats.calls else None
        click.echo(_summary(stats.timer, stats.decoder_name, certified, jobs, as_json, verb),
                   err=True)
        return
    parser = load_parser(directory, cfg, decoder_name, tags, tag_only)
    timer = ParseTimer()
    # An approximate decoder that certifies optimality (dd2) counts its certified sentences.
    decoder = None if tag_only else find_decoder(parser.decoder_name)
    counting = hasattr(decoder, "certified_share")
    if counting:
        decoder.reset_stats()
    started = time.perf_counter()
    counter = ColumnCounter()
    sentences = counter.through(sentences)
    if forest_path is None:
        write_conll(parser.parse(sentences, timer), output, encoding=encoding)
    elif parser.forest_fn is None:
        raise ConfigError(f"{directory}: --forest needs a model that builds packed forests "
                          "(parser: shiftreduce)")
    else:
        from dparse.hypergraph.forest_io import forest_writer  # only for forests

        with forest_writer(forest_path) as forests:
            write_conll(parser.forest_fn(sentences, timer, lambda i, f: forests.write(f, i)),
                        output, encoding=encoding)
    timer.wall = time.perf_counter() - started
    if not tagged:
        _warn_about_columns(trained, unread, counter, input)
    certified = 100 * decoder.certified_share if counting else None
    click.echo(_summary(timer, parser.decoder_name, certified, jobs, as_json, verb), err=True)


def _warn_about_columns(trained: dict[str, float] | None, unread: tuple[str, ...],
                        counter: ColumnCounter, input: str) -> None:
    """Warn on stderr about each column the model reads that the counted input leaves empty
    (:func:`dparse.columns.input_gaps`); before the summary, which stays the last line."""
    source = "<stdin>" if input == "-" else input
    for gap in input_gaps(trained, unread, counter, source):
        click.echo(f"warning: {gap}", err=True)


ACTIVITY = {"parsed": "parsing", "tagged": "tagging"}


def _summary(timer: ParseTimer, decoder_name: str | None, certified_percent: float | None,
             jobs: int, as_json: bool, verb: str = "parsed") -> str:
    """The summary line of a parse (JSON with ``as_json``): inference time and speed (summed
    over the workers), and the wall time of reading, parsing and writing (model loading
    excluded) with the speed over it, which is what more jobs make faster."""
    summary: dict[str, object] = {**timer.summary(), "jobs": jobs}
    if verb == "parsed":
        summary["decoder"] = decoder_name
    certified = ""
    if certified_percent is not None:
        summary["certified_percent"] = round(certified_percent, 2)
        certified = f", {summary['certified_percent']:.2f}% certified optimal"
    if as_json:
        return json.dumps(summary)
    decoder = f", decoder {decoder_name}{certified}" if verb == "parsed" else ""
    return (f"{timer.line(verb)}{decoder}; {jobs} "
            f"job{'s' if jobs > 1 else ''}: {timer.wall:.2f}s wall reading, {ACTIVITY[verb]} and "
            f"writing, {timer.wall_tokens_per_second:,.0f} tokens/sec)")
