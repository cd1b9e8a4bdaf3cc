"""``dparse tag MODEL_DIR [INPUT] [-o OUTPUT]``: predict UPOS, XPOS, FEATS and lemmas."""

from __future__ import annotations

import click

from dparse.api import load_tagger
from dparse.cli.options import model_set_option
from dparse.cli.parse import check_shard, report, stream_options


@click.command("tag")
@click.argument("model_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("input", default="-", required=False)
@stream_options("Tag")
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
    check_shard(shard_text)
    tagger = load_tagger(model_dir, tags=tags, overrides=overrides)
    stats = tagger.tag_file(input, output, jobs, fmt=None if fmt == "auto" else fmt,
                            encoding=encoding, batch_size=chunk_size, shard=shard_text)
    report(stats, jobs, as_json, "tagged")
