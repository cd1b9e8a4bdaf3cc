"""Options shared by several subcommands."""

from __future__ import annotations

import click

set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY.PATH=VALUE",
    help="Override a config value, e.g. --set training.epochs=5 (repeatable).",
)
data_root_option = click.option(
    "--data-root",
    type=click.Path(file_okay=False),
    envvar="DPARSE_DATA",
    default=None,
    help="Directory that config treebank paths are relative to "
    "[env DPARSE_DATA; default ../shared/data].",
)
quiet_option = click.option(
    "--quiet", "-q", is_flag=True, help="No progress bars or per-epoch lines on stderr."
)
