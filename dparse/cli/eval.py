"""``dparse eval``: score a system's CoNLL output against the gold file."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dparse.alignedscores import format_aligned, score_aligned
from dparse.cli.options import skip_invalid_trees_option
from dparse.conll import FORMATS, Sentence, read_conll
from dparse.contentscores import format_content
from dparse.errors import InputError
from dparse.evaluation import score_system
from dparse.metrics import format_table
from dparse.punct import PUNCT_RULES
from dparse.tagscores import format_tags
from dparse.wordalign import same_words

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
@click.option(
    "--calibration",
    is_flag=True,
    help="Also score how well SYSTEM's head probabilities (HeadProb in MISC, from dparse parse "
    "--marginals) are calibrated, over the words the punctuation rule keeps: the expected "
    "calibration error over 10 equal-width bins and the reliability table (JSON: "
    "\"calibration\").",
)
@click.option(
    "--calibration-plot",
    "calibration_plot",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.svg",
    help="With --calibration: also draw the reliability diagram (accuracy against HeadProb per "
    "bin, the diagonal, the share of words per bin, the ECE) into FILE.svg (plain SVG).",
)
@click.option(
    "--aligned",
    is_flag=True,
    help="Score by the CoNLL 2018 alignment of the system's words with gold's through their "
    "characters (Tokens, Sentences, Words, tags, UAS, LAS, CLAS, MLAS, BLEX as P/R/F1) even "
    "when SYSTEM has gold's words; without it, that is done only when its words differ.",
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
    calibration: bool,
    calibration_plot: str | None,
    aligned: bool,
    encoding: str,
    fmt: str,
    skip_invalid_trees: bool,
) -> None:
    """Score SYSTEM against GOLD: UAS, LAS (full and universal labels), U-UAS, root accuracy
    and complete match, in percent over the tokens the punctuation rule keeps; and, as the
    CoNLL 2018 UD scorer counts them over every word (punctuation included, whatever --punct
    says), its content-word scores CLAS, MLAS and BLEX (F1, precision, recall) and UPOS, XPOS,
    UFeats, AllTags and Lemmas, for the columns SYSTEM fills (n/a for the others).

    GOLD and SYSTEM are CoNLL-X, CoNLL-U or Malt-TAB files (.gz allowed, - for stdin) holding
    the same sentences and words in the same order. A SYSTEM whose HEADs are all _ (a tagger's
    output) gets the tag scores only.

    A SYSTEM with its own tokenization and sentence breaks (other words or sentences than
    GOLD's: a tokenizer's output) is scored as the CoNLL 2018 shared task scores it (also with
    --aligned): its tokens, multiword tokens, words and sentences aligned with GOLD's through
    their characters (the two texts, FORMs without spaces, must be the same), then Tokens,
    Sentences, Words, UPOS, XPOS, UFeats, AllTags, Lemmas, UAS, LAS, CLAS, MLAS and BLEX as
    precision, recall and F1 with their counts. --other, --detail, --plot, --calibration,
    --skip-invalid-trees and --punct other than include need GOLD's words.

    \b
    Examples:
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --punct upos --detail
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --other test.eisner.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --json
      dparse eval ../shared/data/en_ewt/test.conllu test.tagged.conllu --detail \\
          --train ../shared/data/en_ewt/train.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --other test.eisner.conllu \\
          --other dd.conllu --punct upos --detail
      dparse eval ../shared/data/en_ewt/test.conllu test.probs.conllu --calibration
      dparse eval ../shared/data/en_ewt/test.conllu test.probs.conllu --calibration \\
          --calibration-plot test.reliability.svg
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu --aligned --json
    """
    if train is not None and not detail:
        raise click.UsageError("--train is for --detail (accuracy on unseen words)")
    if calibration_plot is not None and not calibration:
        raise click.UsageError("--calibration-plot draws what --calibration scores: give both")
    kw = {"fmt": None if fmt == "auto" else fmt, "encoding": encoding}
    gold_sentences = list(read_conll(gold, **kw))
    system_sentences = list(read_conll(system, **kw, require_heads=False))
    # an empty file is refused as such (score_system's error) rather than aligned
    if gold_sentences and system_sentences and (
            aligned or not same_words(gold_sentences, system_sentences)):
        _refuse_word_options(gold_sentences, system_sentences, aligned, {
            "--other": bool(others), "--detail": detail, "--plot": plot_dir is not None,
            "--calibration": calibration, "--skip-invalid-trees": skip_invalid_trees,
            f"--punct {punct}": punct != "include"})
        report = score_aligned(gold_sentences, system_sentences)
        click.echo(json.dumps(report.as_dict(), indent=2) if as_json else format_aligned(report))
        return
    result = score_system(gold_sentences, system_sentences, punct, others, detail, train,
                          kw["fmt"], encoding, skip_invalid_trees, compare=plot_dir is not None,
                          system_name=system)
    if not result.system_heads:
        if others or plot_dir or calibration:
            option = "--other" if others else "--plot" if plot_dir else "--calibration"
            raise click.UsageError(f"{option} compares parses, but {system} has no heads")
        if as_json:
            click.echo(json.dumps(result.as_dict(), indent=2))
        else:
            click.echo("Parse scores: n/a, left out: the system file has no heads (every HEAD "
                       f"is _)\n\n{format_tags(result.tag_report)}")
        return
    if plot_dir:
        from dparse.reports.plots import plot_comparison  # matplotlib only with --plot

        written = plot_comparison(result.breakdowns, plot_dir)
        click.echo(f"dparse eval: wrote {len(written)} plot files to {plot_dir}", err=True)
    calibrated = None
    if calibration:
        from dparse.calibration import calibration_of_files

        calibrated = calibration_of_files(gold, system, punct, None if fmt == "auto" else fmt,
                                          encoding)
        if calibration_plot is not None:
            from dparse.outputs import write_text
            from dparse.reports.reliability import reliability_svg

            write_text(calibration_plot, reliability_svg([(Path(system).name, calibrated)],
                                                         f"Reliability of {Path(system).name}"))
            click.echo(f"dparse eval: wrote the reliability diagram to {calibration_plot}",
                       err=True)
    if as_json:
        report = result.as_dict()
        if calibrated is not None:
            report["calibration"] = calibrated.as_dict()
        click.echo(json.dumps(report, indent=2))
    else:
        text = "\n\n".join((format_table(result.report), format_content(result.content_report),
                            format_tags(result.tag_report)))
        if detail:
            from dparse.reports.breakdowns import format_comparison

            text += "\n\n" + format_comparison(result.breakdowns)
        if calibrated is not None:
            text += "\n\n" + calibrated.format()
        click.echo(text)


def _refuse_word_options(gold: list[Sentence], system: list[Sentence], aligned: bool,
                         given: dict[str, bool]) -> None:
    """Raise for the first option of ``given`` (name: given) that needs gold's words: a
    usage error with --aligned, else the error naming where SYSTEM's words leave gold's."""
    option = next((name for name, on in given.items() if on), None)
    if option is None:
        return
    if aligned:
        raise click.UsageError(f"{option} does not go with --aligned: it needs the report on "
                               "GOLD's words, not the CoNLL 2018 alignment's")
    from dparse.metrics import _check_aligned

    try:
        _check_aligned(gold, system, "system")
    except InputError as error:
        raise InputError(error.path, error.line, f"{error.problem}; {option} needs gold's "
                         "sentences and words (without it, dparse eval scores a system with "
                         "its own tokenization by the CoNLL 2018 alignment)") from None
