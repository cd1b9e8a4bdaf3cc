"""``dparse parse MODEL_DIR [INPUT] [-o OUTPUT]``: parse CoNLL input with a trained model."""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from dparse.api import ParseStats, load
from dparse.batch.parallel_parse import DEFAULT_CHUNK, Shard
from dparse.cli.options import model_set_option, neural_options, neural_overrides
from dparse.conll import INPUT_FORMATS
from dparse.constraints import CONSTRAINT_MODES
from dparse.tagging import TAG_MODES
from dparse.timer import ParseTimer


def stream_options(verb: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options that ``dparse parse`` and ``dparse tag`` (``verb``: Parse, Tag) share:
    output, input format, --tags, encoding, --json, --jobs, --shard and --chunk-size."""
    options = [
        click.option("--output", "-o", default="-", help="Output file [default: stdout]."),
        click.option("--format", "fmt", type=click.Choice(["auto", *INPUT_FORMATS, "raw"]),
                     default="auto", show_default=True,
                     help="Input format; text: words alone, one sentence a line, tokens "
                     "separated by whitespace (written out as CoNLL-U with # text); raw: "
                     "raw text, split into sentences, tokens and words by the tokenizer the "
                     "model carries (a tokenizer section in its config)."),
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
@click.option("--kbest", type=click.IntRange(min=1), default=None, metavar="K",
              help="Write each sentence's K best trees, best first, one CoNLL-U block each "
              "with '# kbest = i' and '# score = S' comments: graph models with decoder cle "
              "(k best spanning trees), eisner, eisner2-sib or eisner2-sibgp (k best "
              "projective trees); one job.")
@click.option("--constraints", "constraint_mode", type=click.Choice(CONSTRAINT_MODES),
              default=None, help="Constrained parsing (every family, --jobs 1): keep fixes the "
              "arcs of the input's filled HEAD column (HEAD _: predicted) and the labels of its "
              "filled DEPREL column, and honours MISC Forbid=H1,H2 (heads the word may not "
              "take); misc honours only the Forbid= attributes. Graph models' exact decoders "
              "and U-MST give the best tree that keeps them; easy-first, shift-reduce and "
              "rerank models (projective) a tree that keeps them. Constraints that no tree of "
              "the model's kind satisfies (crossing fixed arcs for a projective one) are an "
              "error naming the sentence.")
@click.option("--forbid", "forbid_path", default=None, metavar="FILE",
              type=click.Path(exists=True, dir_okay=False),
              help="Rule arcs out: FILE has one SENTENCE<TAB>DEPENDENT<TAB>HEAD line per arc "
              "(SENTENCE: the # sent_id, or the 1-based position of a sentence without one; "
              "HEAD 0: the root; # lines are comments). Implies --constraints misc unless "
              "keep is given.")
@click.option("--marginals", "with_marginals", is_flag=True,
              help="Graph models: add each word's head probability to MISC, HeadProb=0.934 "
              "(3 decimals), and its other heads at or above --marginals-threshold, most "
              "probable first, at most 3, HeadAlt=4:0.052,7:0.011 (exact arc marginals; "
              "CoNLL-U output; other MISC attributes kept).")
@click.option("--marginals-file", "marginals_file", default=None, metavar="FILE",
              help="Graph models: write every arc h -> m whose probability reaches "
              "--marginals-threshold to FILE, a TSV (sentence, dependent, head, probability, "
              "chosen); alone it leaves the parse's bytes as they are.")
@click.option("--marginals-threshold", type=click.FloatRange(0.0, 1.0, min_open=True),
              default=0.01,
              show_default=True, help="Least probability of a HeadAlt head or a "
              "--marginals-file row.")
@click.option("--temperature", type=click.FloatRange(0.0, min_open=True), default=None,
              help="The temperature T of --marginals: p(tree) ∝ exp(score / T). Default: the "
              "T fitted on dev when the model was trained (its calibration.json), else 1.")
@neural_options
@model_set_option
def parse(model_dir: str, input: str, output: str, decoder_name: str | None, fmt: str,
          encoding: str, as_json: bool, jobs: int, shard_text: str | None, chunk_size: int,
          forest_path: str | None, kbest: int | None, constraint_mode: str | None,
          forbid_path: str | None, with_marginals: bool, marginals_file: str | None,
          marginals_threshold: float, temperature: float | None, tags: str,
          threads: int | None, device: str | None, overrides: tuple[str, ...]) -> None:
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
    --constraints keep parses partial.conllu keeping the arcs its HEAD column fills; a
    forbid.tsv line such as "weblog-0001<TAB>3<TAB>7" rules out 7 -> 3 in sentence weblog-0001.

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
      dparse parse models/en_ewt-neural-o1 ../shared/data/en_ewt/test.conllu --threads 1 \\
          -o test.neural.conllu
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu --kbest 10 \\
          -o test.10best.conllu
      dparse parse models/en_ewt-o1-cle partial.conllu --constraints keep -o full.conllu
      dparse parse models/en_ewt-sr-nonsp-b12 partial.conllu --constraints keep \\
          -o full.sr.conllu
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu --forbid forbid.tsv \\
          -o test.forbid.conllu
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu --marginals \\
          --temperature 0.8 --marginals-file test.arcs.tsv -o test.probs.conllu
    """
    if forest_path is not None and jobs > 1:
        raise click.UsageError("--forest writes one forest file: use it with --jobs 1")
    if kbest is not None and (jobs > 1 or forest_path is not None):
        raise click.UsageError("--kbest parses in one job and writes no forest")
    if kbest is not None and (constraint_mode is not None or forbid_path is not None):
        raise click.UsageError("--kbest and --constraints/--forbid: one or the other")
    marginals = None
    if with_marginals or marginals_file is not None:
        if jobs > 1 or forest_path is not None:
            raise click.UsageError("--marginals and --marginals-file: one job, no --forest")
        if kbest is not None or constraint_mode is not None or forbid_path is not None:
            raise click.UsageError("--marginals and --kbest or --constraints/--forbid: one "
                                   "or the other")
        from dparse.calibration import MarginalsOutput

        marginals = MarginalsOutput(with_marginals, marginals_file, marginals_threshold,
                                    temperature)
    check_shard(shard_text)
    if (constraint_mode is not None or forbid_path is not None) and jobs > 1:
        raise click.UsageError("--constraints and --forbid parse with --jobs 1")
    if (constraint_mode is not None or forbid_path is not None) and forest_path is not None:
        raise click.UsageError("--forest and --constraints/--forbid: one or the other")
    if forbid_path is not None and shard_text is not None:
        raise click.UsageError("--forbid counts the whole input's sentences: not with --shard")
    parser = load(model_dir, decoder=decoder_name, tags=tags,
                  overrides=overrides + neural_overrides(threads, device, model_dir))
    stats = parser.parse_file(input, output, jobs, fmt=None if fmt == "auto" else fmt,
                              encoding=encoding, batch_size=chunk_size, shard=shard_text,
                              forest=forest_path, kbest=kbest, constraints=constraint_mode,
                              forbid=forbid_path, marginals=marginals)
    if marginals is not None and temperature is None:
        fitted = parser.temperature
        click.echo("head probabilities at " + (
            f"T = {fitted:.4f}, fitted on dev at training" if fitted is not None else
            "T = 1: the model has no fitted temperature (calibration.json)"), err=True)
    report(stats, jobs, as_json, "parsed")


def check_shard(shard_text: str | None) -> None:
    """A bad ``--shard`` is an error before the model loads."""
    if shard_text is not None:
        Shard.parse(shard_text)


def report(stats: ParseStats, jobs: int, as_json: bool, verb: str) -> None:
    """What ``dparse parse`` (``verb`` parsed) and ``dparse tag`` (tagged) print on stderr
    after the output: the warnings about the input's columns, then the summary line."""
    for warning in stats.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(_summary(stats.timer, stats.decoder, stats.certified_percent, jobs, as_json,
                        verb), err=True)


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
