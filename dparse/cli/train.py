"""``dparse train CONFIG.yaml``: train a parser and write its model directory."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from dparse.batch.engines import CLUSTERS, worker_options
from dparse.cli.options import (
    batch_job_options,
    data_root_option,
    neural_options,
    neural_overrides,
    progress_option,
    quiet_option,
    set_option,
    show_progress,
)
from dparse.config import load_config
from dparse.epochs import EpochReport
from dparse.errors import ConfigError
from dparse.families import family
from dparse.parsers import train_model, train_options


@click.command("train")
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out", "-o", "out", type=click.Path(file_okay=False), default=None,
    help="Model directory to write [default: models/<config name>].",
)
@click.option(
    "--work", type=click.Path(file_okay=False), default=None,
    help="Forest reranker (parser: rerank): the directory of its first-stage model and "
         "jackknifed forests; a parser with a tagger section: its jackknife-tagged training "
         "and dev files. Reused by later runs [default: rerank.work, else <out>.work].",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
    help="Jackknife folds trained at a time, each in its own process: a forest reranker's "
         "first stages, or the taggers of a parser with a tagger section.",
)
@click.option(
    "--fold", type=click.IntRange(min=1), default=None,
    help="Forest reranker: make only this fold's jackknifed forests and stop (one fold per "
         "job of a cluster array); a later run without --fold trains the reranker.",
)
@click.option(
    "--workers", type=click.IntRange(min=1), default=1, show_default=True,
    envvar="DPARSE_TRAIN_WORKERS",
    help="Every parser type (graph, umst, easyfirst, shiftreduce, rerank; not the tagger): "
         "train one model on this many workers by iterative parameter mixing (the training "
         "file cut into as many shards; a pruner's folds, a reranker's jackknife and a tagger "
         "section's jackknife run on them too) [env DPARSE_TRAIN_WORKERS, which tagger "
         "configs ignore].",
)
@click.option(
    "--cluster", type=click.Choice(CLUSTERS), default="local",
    show_default=True,
    help="Where --workers run: local processes, slurm or pbs batch jobs (pip install "
         "'dparse[cluster]'), or inline: the shards one after another in this process (a "
         "simulation of N workers on one core).",
)
@click.option(
    "--mixing", type=click.Choice(["uniform", "updates"]), default="uniform",
    show_default=True,
    help="How the shards' weights are mixed after each epoch: uniformly, or each by its "
         "share of the epoch's updates.",
)
@batch_job_options
@neural_options
@set_option
@data_root_option
@quiet_option
@progress_option
def train(config: str, out: str | None, work: str | None, jobs: int, fold: int | None,
          workers: int, cluster: str, mixing: str, scheduler: str | None, queue: str | None,
          account: str | None, walltime: str | None, memory: str | None,
          scheduler_host: str | None, threads: int | None, device: str | None,
          overrides: tuple[str, ...], data_root: str | None,
          quiet: bool, progress: bool) -> None:
    """Train a parser or a tagger from the YAML experiment CONFIG.

    Reads the training and dev treebanks named in the config, trains for the configured
    number of epochs (evaluating on dev after each and keeping the best), and writes a model
    directory with the weights, vocabularies and the resolved config. A tagger config
    (parser: tagger) trains a tagger of UPOS, XPOS, FEATS and lemmas; a parser config with a
    tagger section trains that tagger, tags the training file by a jackknife (tagger.folds)
    and dev by the whole tagger, trains the parser on them and writes a pipeline model that
    carries the tagger (dparse parse then tags first).

    \b
    Examples:
      dparse train configs/en_ewt/o1-cle.yaml --out models/en_ewt-o1-cle
      dparse train configs/en_ewt/o1-cle.yaml --out models/o1-cle-small \\
          --set training.epochs=2 --set data.train=en_ewt/dev.conllu --set data.dev=null
      dparse train configs/en_ewt/easyfirst.yaml --data-root ../shared/data -q
      dparse train configs/en_ewt/rerank-nonlocal.yaml --out models/rerank --jobs 2
      dparse train configs/en_ewt/rerank-local.yaml --work models/rerank.work --fold 3
      dparse train configs/en_ewt/tagger.yaml --out models/en_ewt-tagger
      dparse train configs/en_ewt/o1-cle-tagged.yaml --jobs 2 --work models/en_ewt.tagged
      dparse train configs/en_ewt/o2-eisner.yaml --workers 2
      dparse train configs/en_ewt/easyfirst.yaml --workers 2 --mixing updates
      dparse train configs/en_ewt/o2-eisner.yaml --workers 8 --cluster slurm --queue debug
      dparse train configs/en_ewt/neural-o1.yaml --threads 1 --progress
    """
    cfg = load_config(config, overrides + neural_overrides(threads, device), data_root)
    if not quiet:
        logging.basicConfig(level=logging.INFO, format="%(message)s")
    out_dir = Path(out) if out else Path("models") / cfg.name
    record = family(cfg.parser)
    source = click.get_current_context().get_parameter_source("workers")
    if not record.trains_on_workers and source == click.core.ParameterSource.ENVIRONMENT:
        workers = 1  # DPARSE_TRAIN_WORKERS (make TRAIN_WORKERS=N) is for the parsers it can train
    try:
        options = train_options(cfg, out_dir, work, jobs, fold, worker_options(
            workers, cluster, mixing, scheduler=scheduler, queue=queue, account=account,
            walltime=walltime, memory=memory, scheduler_host=scheduler_host))
    except ConfigError as exc:
        raise click.UsageError(f"{exc} ({config})") from None
    if fold is not None:  # train_options took it: the family makes folds
        assert record.make_fold is not None
        click.echo(record.make_fold(cfg, fold, show_progress(quiet, progress)), err=True)
        return

    def report(ep: EpochReport) -> None:
        if not quiet:
            click.echo(ep.summary(cfg.data.dev, cfg.training.punct), err=True)

    trained = train_model(cfg, out_dir, options, show_progress(quiet, progress), report)
    click.echo(f"trained {cfg.name} in {trained.seconds:.1f}s; best epoch {trained.best_epoch}; "
               f"model written to {out_dir}", err=True)
