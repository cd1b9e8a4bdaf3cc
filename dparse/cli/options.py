"""Options shared by several subcommands, and the checks that go with them."""

from __future__ import annotations

import sys

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
