"""``dparse oracle GOLD SYSTEM1 SYSTEM2 [...]``: the per-sentence oracle of several parsers;
``dparse oracle GOLD KBEST --kbest``: the k-best oracle of one parser's k-best lists."""

from __future__ import annotations

import json

import click

from dparse.cli.options import skip_invalid_trees_option
from dparse.conll import FORMATS, read_treebank
from dparse.gold import keep_gold_trees
from dparse.oracle import (
    format_kbest_oracle,
    format_oracle,
    kbest_lists,
    kbest_oracle,
    oracle,
)
from dparse.punct import PUNCT_RULES

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=True)


@click.command("oracle", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("gold", type=_FILE)
@click.argument("systems", type=_FILE, nargs=-1, required=True)
@click.option("--names", default=None,
              help="Comma-separated system names for the report [default: the file names].")
@click.option("--punct", type=click.Choice(list(PUNCT_RULES)), default="include",
              show_default=True, help="Punctuation rule (as in dparse eval), decided on gold.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of all inputs.")
@click.option("--format", "fmt", type=click.Choice(["auto", *FORMATS]), default="auto",
              show_default=True, help="Format of all input files.")
@click.option("--kbest", is_flag=True,
              help="SYSTEMS is one file of k-best lists (dparse parse --kbest K): report the "
              "oracle UAS of each sentence's first K trees for K = 1, 2, ...")
@skip_invalid_trees_option
def oracle_command(gold: str, systems: tuple[str, ...], names: str | None, punct: str,
                   as_json: bool, encoding: str, fmt: str, kbest: bool,
                   skip_invalid_trees: bool) -> None:
    """Per-sentence oracle of SYSTEMS (two or more parser outputs) against GOLD.

    For each sentence the oracle keeps the output with the most correct heads (ties: the
    first system). Reports each system's UAS, the oracle UAS, the share of sentences each
    system parses strictly better than all others, and ties; with two systems, in the layout
    of Table 2 of Levi, Reichart and Rappoport (2016). With --kbest, SYSTEMS is one k-best
    file and the report is the k-best oracle UAS for K = 1 up to its longest list (the
    shift-reduce forests' k-best oracle: dparse forest).

    \b
    Examples:
      dparse oracle ../shared/data/en_ewt/test.conllu test.parsed.conllu test.eisner.conllu \\
          --names CLE,Eisner
      dparse oracle ../shared/data/en_ewt/test.conllu cle.conllu umst.conllu easyfirst.conllu \\
          --punct upos --json
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu --kbest 10 \\
          -o test.10best.conllu
      dparse oracle ../shared/data/en_ewt/test.conllu test.10best.conllu --kbest
    """
    kw = {"fmt": None if fmt == "auto" else fmt, "encoding": encoding}
    if kbest:
        if len(systems) != 1:
            raise click.UsageError("--kbest takes one SYSTEM file (of k-best lists)")
        gold_trees, (lists,) = keep_gold_trees(read_treebank(gold, **kw),
                                               [kbest_lists(read_treebank(systems[0], **kw))],
                                               skip_invalid_trees)
        report = kbest_oracle(gold_trees, lists, punct, systems[0])
        click.echo(json.dumps(report.as_dict(), indent=2) if as_json
                   else format_kbest_oracle(report))
        return
    if len(systems) < 2:
        raise click.UsageError("give at least two SYSTEM files")
    labels = names.split(",") if names else list(systems)
    if len(labels) != len(systems):
        raise click.UsageError(f"--names has {len(labels)} names for {len(systems)} systems")
    gold_trees, parses = keep_gold_trees(read_treebank(gold, **kw),
                                         [read_treebank(s, **kw) for s in systems],
                                         skip_invalid_trees)
    report = oracle(gold_trees, parses, labels, punct)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(format_oracle(report))
