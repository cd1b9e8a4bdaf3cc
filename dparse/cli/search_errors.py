"""``dparse search-errors MODEL_DIR GOLD``: sentences whose gold tree outscores the decoder's."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dparse.cli.options import model_set_option
from dparse.conll import FORMATS
from dparse.errors import DparseError
from dparse.parsers import check_model_overrides
from dparse.search_errors import DEFAULT_BINS, bin_labels, format_report, search_errors


def _bin_edges(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    """``--bins 10,20,30`` as a tuple of positive increasing ints."""
    try:
        edges = tuple(int(part) for part in value.split(","))
        bin_labels(edges)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers",
                                 ctx, param) from None
    except DparseError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    return edges


@click.command("search-errors", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("gold", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--decoder", "decoder_name", default=None,
              help="Registered decoder to measure instead of the model's (e.g. dd2, bgi-pp, "
                   "eisner2-sibgp, cube); its options come from --set decoder.options.KEY=VALUE.")
@click.option("--bins", default=",".join(map(str, DEFAULT_BINS)), show_default=True,
              callback=_bin_edges, help="Upper edges of the sentence-length bins.")
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto",
              show_default=True, help="Format of GOLD.")
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of GOLD.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@model_set_option
def search_errors_command(model_dir: str, gold: str, decoder_name: str | None,
                          bins: tuple[int, ...], fmt: str, encoding: str, as_json: bool,
                          overrides: tuple[str, ...]) -> None:
    """Count the search errors of a decoder on GOLD under the graph model MODEL_DIR.

    A search error (Zhang and McDonald 2012, Section 5.4) is a sentence whose gold tree scores
    higher under the model than the tree the decoder predicted. Every sentence is counted once
    as correct (prediction = gold), search error, tie, model error (the prediction scores
    higher), or gold unreachable: the decoder cannot output the gold tree (non-projective gold
    for a projective decoder, several root children under single-root decoding, or a gold arc
    the model's pruner removed), which is never a search error. Scores are those of the part
    arrays the decoder accepts; trees are compared unlabeled, each arc under its best label
    (labeled, gold with its own labels, for a third-order model decoded by cube).
    Counts are also split by sentence length.

    --decoder other than the model's starts from no decoder options; --set applies to the
    model's saved config (decoder.options.*, decoder.single_root).

    \b
    Examples:
      dparse search-errors models/en_ewt-o2-dd ../shared/data/en_ewt/test.conllu
      dparse search-errors models/en_ewt-o2-dd ../shared/data/en_ewt/dev.conllu \\
          --decoder bgi-pp --json
      dparse search-errors models/en_ewt-o2-dd ../shared/data/en_ewt/dev.conllu \\
          --set decoder.options.max_iter=5
    """
    check_model_overrides(Path(model_dir), overrides)
    report = search_errors(model_dir, gold, decoder_name, overrides=overrides, bins=bins,
                           fmt=None if fmt == "auto" else fmt, encoding=encoding)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(format_report(report))
