"""``dparse prune``: learn arc pruners and measure what they remove and keep."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dparse.cli.options import skip_invalid_trees_option
from dparse.conll import read_treebank
from dparse.gold import read_gold
from dparse.graph.model import ArcFactoredModel
from dparse.graph.pruner import model_pruner
from dparse.metrics import format_score
from dparse.prune import LengthDictionary, Pruner, TopKHeads, prune_stats

_FILE = click.Path(exists=True, dir_okay=False, allow_dash=True)


@click.group("prune", context_settings={"help_option_names": ["-h", "--help"]})
def prune() -> None:
    """Learn arc pruners (length dictionary) and measure pruners on a treebank.

    \b
    Examples:
      dparse prune learn ../shared/data/en_ewt/train.conllu -o en_ewt.lendict.json
      dparse prune eval ../shared/data/en_ewt/test.conllu --dictionary en_ewt.lendict.json
      dparse prune eval ../shared/data/en_ewt/test.conllu --model models/en_ewt-o1-cle --top-k 5
    """


@prune.command("learn")
@click.argument("train", type=_FILE)
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="The length-dictionary file to write (JSON).")
@click.option("--column", type=click.Choice(["auto", "xpos", "upos"]), default="auto",
              show_default=True,
              help="POS column; auto: XPOS if present with at most 64 tags, else UPOS.")
@click.option("--quantile", type=click.FloatRange(0.0, 1.0, min_open=True), default=1.0,
              show_default=True,
              help="Limit per POS pair: this quantile of its arc lengths (1: the longest).")
@click.option("--min-count", type=click.IntRange(1), default=1, show_default=True,
              help="Pairs seen fewer times back off to their UPOS pair.")
@click.option("--encoding", default="utf-8", show_default=True)
@skip_invalid_trees_option
def learn(train: str, output: str, column: str, quantile: float, min_count: int,
          encoding: str, skip_invalid_trees: bool) -> None:
    """Learn a length dictionary from the gold trees of TRAIN: for each (head POS, modifier
    POS, direction), the longest arc seen (Levi, Reichart and Rappoport 2016).

    \b
    Examples:
      dparse prune learn ../shared/data/en_ewt/train.conllu -o en_ewt.lendict.json
      dparse prune learn ../shared/data/en_ewt/train.conllu -o q99.json --quantile 0.99
    """
    sentences = read_gold(train, "learning a length dictionary", encoding=encoding,
                          skip_invalid=skip_invalid_trees)
    dictionary = LengthDictionary.learn(sentences, column, min_count, quantile)
    dictionary.save(Path(output))
    click.echo(f"length dictionary over {dictionary.column}: {len(dictionary.lengths)} pairs, "
               f"{len(dictionary.upos_lengths)} UPOS back-off pairs -> {output}", err=True)


@prune.command("eval")
@click.argument("treebank", type=_FILE)
@click.option("--dictionary", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A length dictionary written by `dparse prune learn`.")
@click.option("--model", type=click.Path(exists=True, file_okay=False), default=None,
              help="A first-order model directory: keep each word's --top-k best heads.")
@click.option("--top-k", type=click.IntRange(1), default=10, show_default=True)
@click.option("--pruner", "pruner_dir", type=click.Path(exists=True, file_okay=False),
              default=None,
              help="A second- or third-order model directory: apply its first-order pruner.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--encoding", default="utf-8", show_default=True)
def evaluate(treebank: str, dictionary: str | None, model: str | None, top_k: int,
             pruner_dir: str | None, as_json: bool, encoding: str) -> None:
    """Apply a pruner to the complete graphs of TREEBANK: the share of undirected edges (and
    directed arcs) removed, the share of gold arcs kept (an undirected edge stays when
    either of its arcs does) and the candidate heads kept per word.

    \b
    Examples:
      dparse prune eval ../shared/data/en_ewt/dev.conllu --dictionary en_ewt.lendict.json
      dparse prune eval ../shared/data/en_ewt/dev.conllu --model models/en_ewt-o1-cle --json
      dparse prune eval ../shared/data/en_ewt/dev.conllu --pruner models/en_ewt-o2-eisner
    """
    if sum(x is not None for x in (dictionary, model, pruner_dir)) != 1:
        raise click.UsageError("give exactly one of --dictionary, --model and --pruner")
    pruner: Pruner
    if dictionary is not None:
        pruner = LengthDictionary.load(Path(dictionary))
    elif model is not None:
        pruner = TopKHeads(ArcFactoredModel.load(Path(model)), top_k)
    else:
        pruner = model_pruner(Path(pruner_dir))
    stats = prune_stats(pruner, read_treebank(treebank, encoding=encoding))
    if as_json:
        click.echo(json.dumps(stats.as_dict(), indent=2))
        return
    def pct(value: float | None) -> str:
        return format_score(value, 0, unit="%")

    click.echo(f"{stats.sentences} sentences: {pct(stats.edges_removed_pct)} of "
               f"{stats.edges} undirected edges removed ({pct(stats.arcs_removed_pct)} of "
               f"directed arcs); gold arcs kept: {pct(stats.gold_kept_pct)} as edges, "
               f"{pct(stats.gold_kept_directed_pct)} as arcs; "
               f"{format_score(stats.heads_per_word, 0)} heads per word")
