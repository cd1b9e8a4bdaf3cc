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
@click.option(
    "--other",
    "others",
    type=_FILE,
    multiple=True,
    help="Another system's output (repeatable): adds SARC and gold(x, y) against the first "
    "--other; with --detail or --plot, every system's breakdowns side by side and significance "
    "tests of SYSTEM against each other one.",
)
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
@click.option(
    "--detail",
    is_flag=True,
    help="Add breakdowns: per DEPREL and arc length; by sentence length, arc length and "
    "direction (precision and recall), gold label, head and dependent UPOS, root, projectivity; "
    "a sign test and a paired bootstrap (seed 0) between systems.",
)
@click.option(
    "--plot",
    "plot_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write figures (PNG and SVG) of the breakdowns into this directory: accuracy by "
    "sentence length, arc precision/recall by length, LAS per label, an overview (needs "
    "matplotlib: pip install 'dparse[plot]').",
)
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
    others: tuple[str, ...],
    punct: str,
    as_json: bool,
    detail: bool,
    plot_dir: str | None,
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
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --other test.eisner.conllu \\
          --other dd.conllu --punct upos --detail
    """
    kw = {"fmt": None if fmt == "auto" else fmt, "encoding": encoding}
    gold_sentences = read_treebank(gold, **kw)
    names = [system, *others]
    parses = [read_treebank(path, **kw) for path in names]
    gold_trees, parses = keep_gold_trees(gold_sentences, parses, skip_invalid_trees)
    report = evaluate(
        gold_trees,
        parses[0],
        punct=punct,
        other=parses[1] if others else None,
        detail=detail,
    )
    comparison = None
    if detail or plot_dir:
        # imported here: plain eval needs none of the reports
        from dparse.reports.breakdowns import compare_systems, format_comparison

        comparison = compare_systems(gold_trees, list(zip(names, parses, strict=True)), punct)
    if plot_dir:
        from dparse.reports.plots import plot_comparison  # matplotlib only with --plot

        written = plot_comparison(comparison, plot_dir)
        click.echo(f"dparse eval: wrote {len(written)} plot files to {plot_dir}", err=True)
    if as_json:
        data = report.as_dict()
        if detail:
            data["breakdowns"] = comparison.as_dict()
        click.echo(json.dumps(data, indent=2))
    else:
        text = format_table(report)
        if detail:
            text += "\n\n" + format_comparison(comparison)
        click.echo(text)
