"""The ``dparse`` command line: one Click subcommand per module in this package.

Subcommands are imported only when they run, so ``dparse --help`` stays fast. Exit status
(:func:`main`): 0 on success; 2 on bad usage or bad input, including a file that cannot be
read or written (a message naming the file, the line where there is one, and the problem; no
traceback); 1 on internal errors (bugs; ``DPARSE_DEBUG=1`` shows the traceback); 130 when
interrupted (Ctrl-C); 141 (128 + SIGPIPE, what a shell reports for ``cat`` in ``cat | head``)
when the reader of standard output went away, without a message.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from dparse import __version__
from dparse.errors import DparseError

# dparse runs in parallel by processes (``--jobs``, grid workers); numpy's BLAS, which it
# uses only on small matrices, stays single-threaded unless the environment says otherwise
# (set here, before any subcommand imports numpy).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

# name -> (module, function, one-line help shown by ``dparse --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "train": ("dparse.cli.train", "train",
              "Train a parser or a tagger from a YAML experiment config."),
    "parse": ("dparse.cli.parse", "parse", "Parse a CoNLL file with a trained model."),
    "tag": ("dparse.cli.tag", "tag", "Predict UPOS, XPOS, FEATS and lemmas with a tagger."),
    "tokenize": ("dparse.cli.tokenize", "tokenize",
                 "Split raw text into sentences, tokens and words (CoNLL-U)."),
    "eval": ("dparse.cli.eval", "eval_command", "Score a system's output against gold."),
    "data": ("dparse.cli.data", "data", "Obtain and prepare treebanks (UD, CoNLL 2006/2007, PTB)."),
    "oracle": ("dparse.cli.oracle", "oracle_command", "Per-sentence oracle of several parsers."),
    "prune": ("dparse.cli.prune", "prune", "Learn arc pruners and measure what they remove."),
    "ensemble": ("dparse.cli.ensemble", "ensemble",
                 "Parse biased towards another parser's output (parser combination)."),
    "search-errors": ("dparse.cli.search_errors", "search_errors_command",
                      "Count sentences whose gold tree outscores the decoder's output."),
    "grid": ("dparse.cli.grid", "grid",
             "Train, parse and score a grid of experiments on a Dask cluster."),
    "show": ("dparse.cli.show", "show", "Draw trees as arc diagrams (SVG, or an HTML page)."),
    "serve": ("dparse.cli.serve", "serve",
              "Serve models over HTTP: UDPipe's REST API and a page drawing the trees."),
    "forest": ("dparse.cli.forest", "forest_command",
               "Statistics and oracles (forest, k-best) of packed forest files."),
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

    def invoke(self, ctx: click.Context) -> Any:
        """Run the subcommand; a closed output pipe becomes :class:`ClosedPipe`, which Click
        does not handle (it would exit 1, the status of a bug)."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise ClosedPipe from exc


class ClosedPipe(Exception):
    """The reader of standard output (or error) closed the pipe: stop quietly."""


EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE
EXIT_INTERRUPTED = 130  # 128 + SIGINT


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dparse")
def cli() -> None:
    """dparse: fast data-driven dependency parsing on CoNLL-X and CoNLL-U treebanks.

    Exit status: 0 success, 2 bad usage or input (the message names the file and line), 1 an
    internal error (set DPARSE_DEBUG=1 to see its traceback), 130 interrupted, 141 when the
    reader of the output went away (dparse parse ... | head).

    \b
    Examples:
      dparse train configs/en_ewt/o1-cle.yaml --out models/en_ewt-o1-cle
      dparse parse models/en_ewt-o1-cle ../shared/data/en_ewt/test.conllu -o test.parsed.conllu
      dparse eval ../shared/data/en_ewt/test.conllu test.parsed.conllu
      dparse parse --help
    """


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _internal_error(exc: BaseException) -> None:
    """Report a bug (exit 1): one line, or the traceback with DPARSE_DEBUG set."""
    if os.environ.get("DPARSE_DEBUG"):
        raise exc
    click.echo(f"dparse: internal error: {type(exc).__name__}: {exc}", err=True)
    sys.exit(1)


def main() -> None:
    """Entry point: runs the group, mapping errors to the exit statuses of the module doc."""
    try:
        cli.main(standalone_mode=False)
        sys.stdout.flush()  # here, not at exit, so that a closed pipe is seen
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except (ClosedPipe, BrokenPipeError):
        _silence_stdout()
        sys.exit(EXIT_CLOSED_PIPE)
    except click.Abort as exc:  # Click turns KeyboardInterrupt and EOFError into Abort
        if isinstance(exc.__cause__, KeyboardInterrupt):
            click.echo("dparse: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        _internal_error(exc.__cause__ or exc)
    except click.ClickException as exc:  # bad usage (Click's own FileError says 1)
        exc.show()
        sys.exit(2)
    except DparseError as exc:
        click.echo(f"dparse: error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:
        # A file the user named that cannot be read or written (missing directory, no
        # permission, disk full): the user's to fix, so exit 2 naming the file. The commands
        # report most of these themselves; this is the net under them.
        path = exc.filename2 or exc.filename
        if path is None or os.environ.get("DPARSE_DEBUG"):
            _internal_error(exc)
        click.echo(f"dparse: error: {os.fsdecode(path)}: {exc.strerror or exc}", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - the last resort of the command line
        _internal_error(exc)
