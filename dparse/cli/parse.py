"""``dparse parse MODEL_DIR [INPUT] [-o OUTPUT]``: parse CoNLL input with a trained model."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dparse.cli.options import PARSE_TIME_KEYS, check_model_overrides, model_set_option
from dparse.config import load_config
from dparse.conll import read_conll, write_conll
from dparse.decoders import available_decoders, get_decoder
from dparse.model import CONFIG_FILE, ParseTimer
from dparse.modeldir import check_model_dir
from dparse.parsers import load_parser


@click.command("parse")
@click.argument("model_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("input", default="-", required=False)
@click.option("--output", "-o", default="-", help="Output file [default: stdout].")
@click.option("--decoder", "decoder_name", default=None,
              help="Decoder to use instead of the model's: for a graph model a registered "
              "decoder that takes its parts (first order: cle, eisner, bgi, bgi-pp, ...); an "
              "easy-first model takes easyfirst-scan or easyfirst-heap.")
@click.option("--format", "fmt", type=click.Choice(["auto", "conllx", "conllu", "malttab"]),
              default="auto", show_default=True, help="Input format.")
@click.option("--encoding", default="utf-8", show_default=True, help="Input and output encoding.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stderr.")
@model_set_option
def parse(model_dir: str, input: str, output: str, decoder_name: str | None, fmt: str,
          encoding: str, as_json: bool, overrides: tuple[str, ...]) -> None:
    """Parse INPUT (a CoNLL-X, CoNLL-U or Malt-TAB file; stdin by default) with MODEL_DIR.

    Writes every sentence back in order with its comments, multiword-token lines and empty
    nodes, replacing only HEAD and DEPREL. Prints a one-line summary (sentences, tokens,
    seconds, tokens/sec; inference only, model loading excluded) to stderr.

    \b
    Examples:
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu -o test.parsed.conllu
      dparse parse models/en_ewt-o1-cle --decoder eisner < ../shared/data/en_ewt/dev.conllu \\
          > dev.parsed.conllu
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu --json > /dev/null
    """
    directory = Path(model_dir)
    check_model_dir(directory)  # before its config is read
    check_model_overrides(directory, overrides, PARSE_TIME_KEYS)
    cfg = load_config(directory / CONFIG_FILE, overrides)
    parser = load_parser(directory, cfg, decoder_name)
    sentences = read_conll(input, fmt=None if fmt == "auto" else fmt, encoding=encoding,
                           require_heads=False)
    timer = ParseTimer()
    # An approximate decoder that certifies optimality (dd2) counts its certified sentences.
    registered = parser.decoder_name in available_decoders()
    decoder = get_decoder(parser.decoder_name) if registered else None
    counting = hasattr(decoder, "certified_share")
    if counting:
        decoder.reset_stats()
    parsed = parser.parse(sentences, timer)
    write_conll(parsed, output, encoding=encoding)
    summary: dict[str, object] = {**timer.summary(), "decoder": parser.decoder_name}
    certified = ""
    if counting:
        summary["certified_percent"] = round(100 * decoder.certified_share, 2)
        certified = f", {summary['certified_percent']:.2f}% certified optimal"
    if as_json:
        click.echo(json.dumps(summary), err=True)
    else:
        click.echo(f"{timer.line()}, decoder {parser.decoder_name}{certified})", err=True)
