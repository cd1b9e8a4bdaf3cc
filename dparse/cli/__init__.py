"""The ``dparse`` command line: one Click subcommand per module in this package.

Subcommands are imported only when they run, so ``dparse --help`` stays fast. Exit status:
0 on success, 2 on bad usage or bad input (a message naming file and line, no traceback),
1 on internal errors.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from dparse import __version__
from dparse.errors import DparseError

# name -> (module, function, one-line help shown by ``dparse --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "train": ("dparse.cli.train", "train", "Train a parser from a YAML experiment config."),
    "parse": ("dparse.cli.parse", "parse", "Parse a CoNLL file with a trained model."),
    "eval": ("dparse.cli.eval", "eval_command", "Score a system's output against gold."),
    "data": ("dparse.cli.data", "data", "Obtain and prepare treebanks (UD, CoNLL 2006/2007, PTB)."),
    "oracle": ("dparse.cli.oracle", "oracle_command", "Per-sentence oracle of several parsers."),
    "prune": ("dparse.cli.prune", "prune", "Learn arc pruners and measure what they remove."),
    "ensemble": ("dparse.cli.ensemble", "ensemble",
                 "Parse biased towards another parser's output (parser combination)."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module_name, attr, _ = COMMANDS[cmd_name]
        return getattr(importlib.import_module(module_name), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dparse")
def cli() -> None:
    """dparse: fast data-driven dependency parsing on CoNLL-X and CoNLL-U treebanks.

    Set DPARSE_DEBUG=1 to see tracebacks of internal errors.
    """


def main() -> None:
    """Entry point: runs the group, mapping errors to exit statuses 2 (input) and 1 (internal)."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if exc.exit_code == 2 else exc.exit_code)
    except DparseError as exc:
        click.echo(f"dparse: error: {exc}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - the last resort of the command line
        if os.environ.get("DPARSE_DEBUG"):
            raise
        click.echo(f"dparse: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)
