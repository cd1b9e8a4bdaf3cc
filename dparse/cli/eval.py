"""``dparse eval``: score a system's CoNLL output against the gold file."""

from __future__ import annotations

import json

import click

from dparse.cli.options import skip_invalid_trees_option
from dparse.conll import FORMATS, Sentence, read_conll, read_treebank
from dparse.errors import InputError
from dparse.gold import keep_gold_trees
from dparse.metrics import evaluate, format_table
from dparse.punct import PUNCT_RULES
from dparse.tagscores import TagReport, format_tags, score_tags

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=True)
# the parse scores of the JSON report, null when the system file has no heads
_PARSE_SCORES = ("uas", "las", "las_universal", "u_uas", "root_accuracy", "complete_match",
                 "labeled_complete_match")


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
    "a sign test and a paired bootstrap (seed 0) between systems; for each tag score, the 10 "
    "most confused (gold, predicted) pairs and, with --train, the accuracy on unseen words.",
)
@click.option(
    "--train",
    "train",
    type=_FILE,
    default=None,
    help="The training treebank, for --detail: words whose FORM it lacks are unseen.",
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
    train: str | None,
    plot_dir: str | None,
    encoding: str,
    fmt: str,
    skip_invalid_trees: bool,
) -> None:
    """Score SYSTEM against GOLD: UAS, LAS (full and universal labels), U-UAS, root accuracy
    and complete match, in percent over the tokens the punctuation rule keeps; and UPOS, XPOS,
    UFeats, AllTags and Lemmas over every word (punctuation included), as the CoNLL 2018 UD
    scorer counts them, for the columns SYSTEM fills (n/a for the others).

    GOLD and SYSTEM are CoNLL-X, CoNLL-U or Malt-TAB files (.gz allowed, - for stdin) holding
    the same sentences and words in the same order. A SYSTEM whose HEADs are all _ (a tagger's
    output) gets the tag scores only.

    \b
    Examples:
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --punct upos --detail
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --other test.eisner.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --json
      dparse eval ../shared/data/en_ewt/test.conllu test.tagged.conllu --detail \\
          --train ../shared/data/en_ewt/train.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --other test.eisner.conllu \\
          --other dd.conllu --punct upos --detail
    """
    if train is not None and not detail:
        raise click.UsageError("--train is for --detail (accuracy on unseen words)")
    kw = {"fmt": None if fmt == "auto" else fmt, "encoding": encoding}
    gold_sentences = read_treebank(gold, **kw)
    names = [system, *others]
    parses = [read_treebank(system, **kw, require_heads=False),
              *(read_treebank(path, **kw) for path in others)]
    gold_trees, parses = keep_gold_trees(gold_sentences, parses, skip_invalid_trees)
    seen = None
    if detail and train is not None:
        seen = {form for sent in read_conll(train, **kw, require_heads=False)
                for form in sent.form}
    tags = score_tags(gold_trees, parses[0], detail=detail, seen_forms=seen)
    if not _has_heads(parses[0]):
        if others or plot_dir:
            option = "--other" if others else "--plot"
            raise click.UsageError(f"{option} compares parses, but {system} has no heads")
        _echo_tags_only(tags, gold_trees, as_json)
        return
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
        data = {**report.as_dict(), "system_heads": True, **tags.as_dict()}
        if detail:
            data["breakdowns"] = comparison.as_dict()
        click.echo(json.dumps(data, indent=2))
    else:
        text = format_table(report) + "\n\n" + format_tags(tags)
        if detail:
            text += "\n\n" + format_comparison(comparison)
        click.echo(text)


def _has_heads(system: list[Sentence]) -> bool:
    """Whether ``system`` is a parse: True when every word has a HEAD, False when none has (all
    ``_``); InputError naming the first word without one when only some have."""
    blank = sum(int((s.heads[1:] < 0).sum()) for s in system)
    if blank in (0, sum(map(len, system))):
        return blank == 0
    s, m = next((s, m) for s in system for m in range(1, len(s) + 1) if s.heads[m] < 0)
    raise InputError(s.source, s.line_of(m), "HEAD is _ but other words of this system file have "
                     "heads: give every word a HEAD (a parse) or none (tags alone)")


def _echo_tags_only(tags: TagReport, gold: list[Sentence], as_json: bool) -> None:
    """The report of a system without heads: its tag scores, the parse scores n/a."""
    if as_json:
        data = {"sentences": len(gold), "tokens": sum(map(len, gold)), "system_heads": False,
                **dict.fromkeys(_PARSE_SCORES), **tags.as_dict()}
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo("Parse scores: n/a, left out: the system file has no heads (every HEAD is _)"
                   f"\n\n{format_tags(tags)}")
