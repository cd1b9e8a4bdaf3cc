"""``dparse forest FILE [--gold GOLD] [--kbest K] [--json]``: statistics and oracles of a file of
packed forests (written by ``dparse parse MODEL INPUT --forest FILE``)."""

from __future__ import annotations

import json

import click

from dparse.cli.options import progress_option, quiet_option, show_progress
from dparse.conll import FORMATS
from dparse.hypergraph.stats import forest_report, format_forest_report
from dparse.punct import PUNCT_RULES

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=True)


@click.command("forest", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("forest_file", metavar="FILE", type=_FILE)
@click.option("--gold", type=_FILE, default=None,
              help="Gold CoNLL file with the forests' sentences in order: adds the 1-best, "
              "k-best oracle and forest oracle UAS.")
@click.option("--kbest", "k", type=click.IntRange(min=1), default=100, show_default=True,
              help="k of the k-best lists (lazy k-best, Huang and Chiang 2005).")
@click.option("--punct", type=click.Choice(list(PUNCT_RULES)), default="include",
              show_default=True, help="Punctuation rule for the UAS (as in dparse eval), decided "
              "on gold; include is the paper's UAS with punctuation.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of GOLD.")
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto",
              show_default=True, help="Format of GOLD.")
@quiet_option
@progress_option
def forest_command(forest_file: str, gold: str | None, k: int, punct: str, as_json: bool,
                   encoding: str, fmt: str, quiet: bool, progress: bool) -> None:
    """Statistics of the packed forests in FILE: sentences, average vertices and hyperedges,
    derivations, and the share of distinct trees among the K best derivations (several
    derivations of one tree exist in spurious forests). With --gold, the UAS of the 1-best
    (Viterbi) trees, of the best tree among the K best (K-best oracle) and of the best tree in
    the forest (forest oracle; Huang 2008), as in Figure 4 of Hayashi et al. (2013).

    FILE is a forest file (.gz allowed; format: dparse/hypergraph/forest_io.py).

    \b
    Examples:
      dparse parse models/en_ewt-sr-nonsp-b12 ../shared/data/en_ewt/dev.conllu \\
          -o dev.sr.conllu --forest dev.forest.gz
      dparse forest dev.forest.gz
      dparse forest dev.forest.gz --gold ../shared/data/en_ewt/dev.conllu --kbest 100
      dparse forest dev.forest.gz --gold ../shared/data/en_ewt/dev.conllu --json
    """
    report = forest_report(forest_file, gold, k, punct,
                           gold_format=None if fmt == "auto" else fmt, gold_encoding=encoding,
                           progress=show_progress(quiet, progress))
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(format_forest_report(report))
