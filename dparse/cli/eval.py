"""``dparse eval``: score a system's CoNLL output against the gold file."""

from __future__ import annotations

import json

import click

from dparse.cli.options import skip_invalid_trees_option
from dparse.conll import FORMATS, read_treebank
from dparse.gold import keep_gold_trees
from dparse.metrics import evaluate, format_table
from dparse.punct import PUNCT_RULES

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=True)


@click.command("eval", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("gold", type=_FILE)
@click.argument("system", type=_FILE)
@click.option("--other", type=_FILE, help="A second system's output: adds SARC and gold(x, y).")
@click.option(
    "--punct",
    type=click.Choice(list(PUNCT_RULES)),
    default="include",
    show_default=True,
    help="Punctuation rule: include = score every token; conll = leave out FORMs made only of "
    "Unicode punctuation (CoNLL-X eval.pl); ptb = leave out gold XPOS `` '' : , . ; "
    "upos = leave out gold UPOS PUNCT. Always decided on the gold file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--detail", is_flag=True, help="Add per-DEPREL and per-arc-length breakdowns.")
@click.option("--encoding", default="utf-8", show_default=True, help="Encoding of all input files.")
@skip_invalid_trees_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", *FORMATS]),
    default="auto",
    show_default=True,
    help="Format of all input files; auto detects it from the extension or the first line.",
)
def eval_command(
    gold: str,
    system: str,
    other: str | None,
    punct: str,
    as_json: bool,
    detail: bool,
    encoding: str,
    fmt: str,
    skip_invalid_trees: bool,
) -> None:
    """Score SYSTEM against GOLD: UAS, LAS (full and universal labels), U-UAS, root accuracy
    and complete match, in percent over the tokens the punctuation rule keeps.

    GOLD and SYSTEM are CoNLL-X, CoNLL-U or Malt-TAB files (.gz allowed, - for stdin) holding
    the same sentences and words in the same order.

    \b
    Examples:
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --punct upos --detail
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --other test.eisner.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --json
    """
    kw = {"fmt": None if fmt == "auto" else fmt, "encoding": encoding}
    gold_sentences = read_treebank(gold, **kw)
    parses = [read_treebank(path, **kw) for path in (system, other) if path]
    gold_trees, parses = keep_gold_trees(gold_sentences, parses, skip_invalid_trees)
    report = evaluate(
        gold_trees,
        parses[0],
        punct=punct,
        other=parses[1] if other else None,
        detail=detail,
    )
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(format_table(report))
