"""Options shared by several subcommands, and the checks that go with them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY.PATH=VALUE",
    help="Override a config value, e.g. --set training.epochs=5 (repeatable).",
)
model_set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY.PATH=VALUE",
    help="Override a value of the model's config that parsing reads (the decoder and its "
    "options), e.g. --set decoder.options.max_iter=5 (repeatable); any other key is an error.",
)
data_root_option = click.option(
    "--data-root",
    type=click.Path(file_okay=False),
    envvar="DPARSE_DATA",
    default=None,
    help="Directory that config treebank paths are relative to "
    "[env DPARSE_DATA; default ../shared/data].",
)
skip_invalid_trees_option = click.option(
    "--skip-invalid-trees",
    is_flag=True,
    help="Leave out gold sentences whose heads are not a tree (a cycle, a self-loop, several "
    "root words in CoNLL-U) and report how many on stderr, instead of stopping with an error.",
)


def batch_job_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of a Dask cluster's batch jobs and of a running scheduler (``dparse grid``,
    ``dparse train --workers``): ``queue``, ``account``, ``walltime``, ``memory``,
    ``scheduler_host`` and ``scheduler``."""
    for option in reversed((
        click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Use the running Dask scheduler at ADDRESS (tcp://host:8786) "
                     "instead of starting a cluster."),
        click.option("--queue", default=None, help="Batch queue / partition (slurm, pbs)."),
        click.option("--account", default=None, help="Batch account (slurm, pbs)."),
        click.option("--walltime", default=None,
                     help="Wall-clock limit of a worker job, HH:MM:SS."),
        click.option("--memory", default=None, help="Memory of a worker job, e.g. 4GB."),
        click.option("--scheduler-host", default=None, metavar="HOST",
                     help="Address the scheduler listens on, that batch jobs reach it at "
                     "(slurm, pbs) [default: this host's]."),
    )):
        command = option(command)
    return command


def neural_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--threads`` and ``--device`` of neural parsers (``parser: neural``): the settings
    ``neural.threads`` and ``neural.device`` (:func:`neural_overrides`)."""
    for option in reversed((
        click.option("--threads", type=click.IntRange(min=1), default=None,
                     help="Neural parsers: torch's CPU threads (neural.threads) [default: the "
                     "config's]."),
        click.option("--device", type=click.Choice(["cpu", "cuda"]), default=None,
                     help="Neural parsers: where the network runs (neural.device) [default: "
                     "the config's]; cuda needs a GPU that torch sees."),
    )):
        command = option(command)
    return command


def neural_overrides(threads: int | None, device: str | None,
                     model_dir: str | None = None) -> tuple[str, ...]:
    """The ``--set`` strings of :func:`neural_options`' values (none for options not given).
    With ``model_dir`` (a trained model, checked) whose family has no such keys: none for
    ``--threads 1`` and ``--device cpu``, which is how it runs anyway, so that one command
    line serves every model; UsageError for more threads or a GPU."""
    given = tuple((key, value) for key, value in (("threads", threads), ("device", device))
                  if value is not None)
    if model_dir is not None and given:
        from dparse.config import load_config
        from dparse.families import family
        from dparse.modeldir import CONFIG_FILE, check_model_dir

        check_model_dir(Path(model_dir))
        parser = load_config(Path(model_dir) / CONFIG_FILE).parser
        if "neural.threads" not in family(parser).parse_time_keys:
            if threads not in (None, 1) or device not in (None, "cpu"):
                raise click.UsageError(
                    f"--threads and --device are a neural parser's; this {parser} model "
                    "parses on the CPU, one thread a job (--jobs N for more)")
            return ()
    return tuple(f"neural.{key}={value}" for key, value in given)


quiet_option = click.option(
    "--quiet", "-q", is_flag=True, help="Nothing on stderr but errors and the final summary: "
    "no progress bars, no per-epoch lines."
)
progress_option = click.option(
    "--progress", is_flag=True,
    help="Progress bars even when stderr is not a terminal (a log file) [default: only on a "
    "terminal; never with --quiet].",
)


def show_progress(quiet: bool, progress: bool) -> bool:
    """Whether to draw progress bars: with ``--progress``, or when stderr is a terminal, and
    never with ``--quiet``."""
    return not quiet and (progress or sys.stderr.isatty())
