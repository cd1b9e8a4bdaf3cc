"""Options shared by several subcommands, and the checks that go with them."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from dparse.config import load_config
from dparse.errors import ConfigError

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


# The --set keys that a trained model's commands accept, by parser type: the values read when
# parsing (the decoder, its options, LEP moves, ...), each with its sub-keys. Every other key
# (features, data, training, ...) was fixed by training: overriding it would change nothing.
PARSE_TIME_KEYS: Mapping[str, Sequence[str]] = {
    "graph": ("decoder.name", "decoder.single_root", "decoder.options"),
    "easyfirst": ("decoder.name", "decoder.single_root"),
    "umst": ("decoder.single_root", "umst.lep_steps", "umst.directed_model", "umst.method"),
    "shiftreduce": ("decoder.single_root", "shiftreduce.beam", "shiftreduce.force_gold"),
    "rerank": ("rerank.k", "rerank.beta", "rerank.first_stage_beam"),
    "tagger": (),
}
ENSEMBLE_KEYS: Mapping[str, Sequence[str]] = {"graph": ("decoder.single_root", "ensemble")}


def check_model_overrides(
    model_dir: Path, overrides: Sequence[str], keys: Mapping[str, Sequence[str]]
) -> None:
    """ConfigError naming the first ``--set`` of ``overrides`` whose key ``keys`` does not
    allow for the parser type of the model in ``model_dir`` (a DparseError first if that is
    not a sound model directory)."""
    if not overrides:
        return
    # not at the top: ``dparse data`` needs no numpy
    from dparse.modeldir import CONFIG_FILE, check_model_dir

    check_model_dir(model_dir)
    trained = load_config(model_dir / CONFIG_FILE)
    allowed = keys.get(trained.parser, ())
    for item in overrides:
        key = item.partition("=")[0].strip()
        if not any(key == k or key.startswith(k + ".") for k in allowed):
            can = f"{', '.join(allowed)} and their sub-keys" if allowed else "no key"
            raise ConfigError(
                f"{model_dir}: --set {key} does not apply to this command with a trained model "
                f"(a {trained.parser} parser; training fixed the rest of its config): it takes "
                f"{can}"
            )
