"""``dparse train CONFIG.yaml``: train a parser and write its model directory."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from dparse.cli.options import (
    data_root_option,
    progress_option,
    quiet_option,
    set_option,
    show_progress,
)
from dparse.config import load_config
from dparse.parsers import train_parser
from dparse.training import EpochReport, save_model


@click.command("train")
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out", "-o", "out", type=click.Path(file_okay=False), default=None,
    help="Model directory to write [default: models/<config name>].",
)
@set_option
@data_root_option
@quiet_option
@progress_option
def train(config: str, out: str | None, overrides: tuple[str, ...], data_root: str | None,
          quiet: bool, progress: bool) -> None:
    """Train a parser from the YAML experiment CONFIG.

    Reads the training and dev treebanks named in the config, trains for the configured
    number of epochs (evaluating on dev after each and keeping the best), and writes a model
    directory with the weights, vocabularies and the resolved config.

    \b
    Examples:
      dparse train configs/en_ewt/o1-cle.yaml --out models/en_ewt-o1-cle
      dparse train configs/en_ewt/o1-cle.yaml --out models/o1-cle-small \\
          --set training.epochs=2 --set data.train=en_ewt/dev.conllu --set data.dev=null
      dparse train configs/en_ewt/easyfirst.yaml --data-root ../shared/data -q
    """
    cfg = load_config(config, overrides, data_root)
    if not quiet:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    out_dir = Path(out) if out else Path("models") / cfg.name

    def report(ep: EpochReport) -> None:
        if not quiet:
            click.echo(ep.summary(cfg.data.dev, cfg.training.punct), err=True)

    result = train_parser(cfg, progress=show_progress(quiet, progress), on_epoch=report)
    save_model(result, cfg, out_dir)
    click.echo(f"trained {cfg.name} in {result.seconds:.1f}s; best epoch {result.best_epoch}; "
               f"model written to {out_dir}", err=True)
