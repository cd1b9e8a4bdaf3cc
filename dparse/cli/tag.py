"""``dparse tag MODEL_DIR [INPUT] [-o OUTPUT]``: predict UPOS, XPOS, FEATS and lemmas."""

from __future__ import annotations

import click

from dparse.batch.parallel_parse import DEFAULT_CHUNK
from dparse.cli.options import model_set_option
from dparse.cli.parse import input_format_option, run, tags_option


@click.command("tag")
@click.argument("model_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("input", default="-", required=False)
@click.option("--output", "-o", default="-", help="Output file [default: stdout].")
@input_format_option
@tags_option
@click.option("--encoding", default="utf-8", show_default=True, help="Input and output encoding.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stderr.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (forked with the model loaded once, on Linux); output "
              "identical to one job's, in input order.")
@click.option("--shard", "shard_text", metavar="I/N", default=None,
              help="Tag only the I-th of N contiguous pieces of INPUT (a file): the outputs "
              "of shards 1..N concatenated in order are the whole output (a job array).")
@click.option("--chunk-size", type=click.IntRange(min=1), default=DEFAULT_CHUNK,
              show_default=True, help="Sentences sent to a worker at a time (with --jobs).")
@model_set_option
def tag(model_dir: str, input: str, output: str, fmt: str, tags: str, encoding: str,
        as_json: bool, jobs: int, shard_text: str | None, chunk_size: int,
        overrides: tuple[str, ...]) -> None:
    """Tag INPUT (CoNLL-X, CoNLL-U, Malt-TAB, or words alone with --format text; stdin by
    default) with MODEL_DIR: a tagger (trained from a parser: tagger config) or a pipeline
    parser model, whose tagger is used.

    Writes every sentence back in order with its comments, multiword-token lines and empty
    nodes, replacing only the LEMMA, UPOS, XPOS and FEATS columns it predicts (FEATS in UD's
    canonical order); --tags says which (auto: those the input leaves empty). Prints a
    one-line summary to stderr: sentences, tokens, tagging seconds and tokens/sec.

    \b
    Examples:
      dparse train configs/en_ewt/tagger.yaml --out models/en_ewt-tagger
      dparse tag models/en_ewt-tagger ../shared/data/en_ewt/test.conllu --tags predict \\
          -o test.tagged.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.tagged.conllu
      echo "Words in , trees out ." | dparse tag models/en_ewt-tagger --format text
    """
    run(model_dir, input, output, None, fmt, encoding, as_json, jobs, shard_text, chunk_size,
        None, tags, overrides, tag_only=True)
