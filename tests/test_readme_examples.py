"""The README's "Using it" commands and every command's ``--help`` examples run as written.

They are run through the real command line (``python -m dparse``) from a temporary project
root laid out as after ``make demo``: ``configs/`` is the repository's (each experiment config
set to one training epoch, so that a config another names, a reranker's first stage, trains as
briefly as the ones the examples train), ``../shared/data`` (also ``$DPARSE_DATA``) a miniature
of the real data root (every CoNLL-U file cut to its first sentences), and each
``models/en_ewt-NAME`` an example names is a tiny model trained here from
``configs/en_ewt/NAME.yaml`` (one epoch on 80 sentences, small weight vectors), standing in for
the model ``make demo`` or the config would train. ``dparse train`` examples run as written
with those same shrinking ``--set`` options added, so that they take seconds, not minutes.
Files that examples read but none writes (other parsers' outputs, a length dictionary) are made
first, as a user would have them. A few examples need what a test cannot have (the network, an
external tagger, licensed treebanks): they are listed in ``NOT_RUN`` with the reason.
"""

from __future__ import annotations

import fcntl
import glob
import os
import pty
import re
import shlex
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import click
import pytest
import yaml
from paths import REPO

from dparse.cli import cli
from dparse.config import load_yaml
from dparse.conll import read_treebank, write_conll
from dparse.constraints import sent_id
from dparse.decoders import available_decoders
from dparse.projectivize import projectivize_heads

DATA = Path(os.environ.get("DPARSE_DATA", REPO.parent / "shared" / "data"))
pytestmark = pytest.mark.skipif(not (DATA / "en_ewt").is_dir(),
                                reason=f"en_ewt not found under {DATA}")

# Examples that cannot run in a test, by their first words, and why.
NOT_RUN = {
    "dparse data ud-download": "downloads from the network",
    "dparse data jackknife": "needs an external POS tagger",
    "dparse data conll-layout --conll2006": "needs the licensed CoNLL 2006/2007 data",
    "dparse data ptb2dep --wsj-root": "needs the licensed WSJ treebank",
    "dparse grid configs/grids/smoke.yaml --cluster slurm": "needs a SLURM cluster (make "
    "slurm-check starts one)",
    "dparse grid configs/grids/smoke.yaml --scheduler": "needs a running Dask scheduler",
    "dparse train configs/en_ewt/o2-eisner.yaml --workers 8 --cluster slurm": "needs a SLURM "
    "cluster (make mixing-slurm starts one)",
    "dparse serve": "serves until stopped (tests/serve start it on a free port and stop it)",
}
# The miniature data root: every CoNLL-U file cut to its first sentences (the CoNLL 2007 files
# stay whole: dparse data conll-layout samples 500 sentences of them).
TREEBANK_SUFFIXES = (".conllu",)
SENTENCES_PER_FILE = 100
# Files examples read without any example writing them first: made by parsing en_ewt test.
PARSER_OUTPUTS = ("test.parsed.conllu", "test.eisner.conllu", "dd.conllu", "eisner2.conllu",
                  "easyfirst.conllu", "cle.conllu", "umst.conllu", "test.tagged.conllu")
WORDS = "words.txt"  # words alone, one sentence a line (dparse parse --format text)
MARGINALS_OUTPUT = "test.probs.conllu"  # with head probabilities (dparse eval --calibration)


def shrink(folder: Path) -> list[str]:
    """``--set`` options that make any en_ewt config train in seconds (tiny slices of dev; a
    forest reranker's jackknife in 3 folds, as many as the ``--fold 3`` example needs, and a
    tagger's in 3)."""
    return ["--set", "training.epochs=1", "--set", f"data.train={folder / 'train.conllu'}",
            "--set", f"data.dev={folder / 'dev.conllu'}", "--set", "features.arc_bits=16",
            "--set", "features.label_bits=10", "--set", "features.sib_bits=14",
            "--set", "features.grand_bits=14", "--set", "pruner.epochs=1",
            "--set", "pruner.arc_bits=14", "--set", "pruner.label_bits=10",
            "--set", "rerank.folds=3", "--set", "tagger.folds=3"]


def logical_lines(block: str) -> list[str]:
    """The commands of a shell snippet: backslash-continued lines joined (trailing comments stay:
    :func:`run_command` drops them), lines not starting with ``dparse`` left out."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [line.strip() for line in joined.splitlines() if line.strip().startswith("dparse ")]


def readme_commands() -> list[str]:
    """The commands of the first code block of the README's "Using it" section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Using it", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block, "no code block in the README's Using it section"
    return logical_lines(block.group(1))


def all_commands() -> dict[str, click.Command]:
    """Every command and group of the command line, by its full name ("dparse prune learn")."""
    found: dict[str, click.Command] = {}

    def walk(name: str, command: click.Command) -> None:
        found[name] = command
        if isinstance(command, click.Group):
            ctx = click.Context(command, info_name=name)
            for sub in command.list_commands(ctx):
                walk(f"{name} {sub}", command.get_command(ctx, sub))

    walk("dparse", cli)
    return found


def help_examples(command: click.Command) -> list[str]:
    """The commands of the ``Examples:`` section of a command's help (empty without one)."""
    help_text = command.help or ""
    if "Examples:" not in help_text:
        return []
    section = help_text.split("Examples:", 1)[1].split("\n\n", 1)[0]
    return logical_lines(section)


def first_sentences(data: bytes, count: int) -> bytes:
    """The bytes of a CoNLL file up to the blank line after its ``count``-th sentence (all of it
    if it has fewer)."""
    end = -2
    for _ in range(count):
        end = data.find(b"\n\n", end + 2)
        if end < 0:
            return data
    return data[:end + 2]


def miniature_data_root(source: Path, target: Path) -> None:
    """``target``: the folders of the data root ``source`` with every CoNLL-U file cut to its
    first SENTENCES_PER_FILE sentences and the other files linked."""
    target.mkdir(parents=True)
    for path in sorted(source.rglob("*")):
        out = target / path.relative_to(source)
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
        elif path.suffix in TREEBANK_SUFFIXES:
            out.write_bytes(first_sentences(path.read_bytes(), SENTENCES_PER_FILE))
        else:
            out.symlink_to(path)


def one_epoch_configs(source: Path, target: Path) -> None:
    """A copy of the configs folder ``source`` in which every config with a ``training.epochs``
    trains one epoch (the other files copied as they are)."""
    shutil.copytree(source, target)
    for path in sorted(target.rglob("*.yaml")):
        raw = load_yaml(path.read_text(encoding="utf-8"))
        if isinstance(raw, dict) and isinstance(raw.get("training"), dict) \
                and "epochs" in raw["training"]:
            raw["training"]["epochs"] = 1
            path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")


def run_command(line: str, cwd: Path, extra: list[str] = ()) -> subprocess.CompletedProcess:
    """Run one example as a shell would (its ``<`` and ``>`` redirections and ``*`` globs
    done here), with ``python -m dparse`` for ``dparse`` and ``extra`` arguments added."""
    words = shlex.split(line, comments=True)
    args: list[str] = []
    stdin = stdout = None
    it = iter(words[1:])
    for word in it:
        if word == "<":
            stdin = open(cwd / next(it), "rb")  # noqa: SIM115 - closed below
        elif word == ">":
            stdout = open(cwd / next(it), "wb")  # noqa: SIM115 - closed below
        elif any(c in word for c in "*?["):
            args += sorted(glob.glob(word, root_dir=cwd)) or [word]
        else:
            args.append(word)
    try:
        env = {**os.environ, "DPARSE_DATA": str(cwd.parent / "shared" / "data")}
        return subprocess.run([sys.executable, "-m", "dparse", *args, *extra], cwd=cwd, env=env,
                              stdin=stdin or subprocess.DEVNULL,
                              stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=600)  # a guard against a hang only
    finally:
        for f in (stdin, stdout):
            if f is not None:
                f.close()


def assert_ran(line: str, result: subprocess.CompletedProcess) -> None:
    err = result.stderr.decode(errors="replace")
    assert result.returncode == 0, f"{line}\nexit {result.returncode}\n{err[-2000:]}"
    assert "Traceback" not in err, f"{line}\n{err}"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project root as after ``make demo``; see the module doc."""
    base = tmp_path_factory.mktemp("readme")
    miniature_data_root(DATA.resolve(), base / "shared" / "data")
    root = base / "dparse"
    root.mkdir()
    one_epoch_configs(REPO / "configs", root / "configs")
    slices = base / "slices"
    slices.mkdir()
    blocks = (DATA / "en_ewt" / "dev.conllu").read_text(encoding="utf-8").split("\n\n")
    (slices / "train.conllu").write_text("\n\n".join(blocks[:80]) + "\n\n", encoding="utf-8")
    (slices / "dev.conllu").write_text("\n\n".join(blocks[80:110]) + "\n\n", encoding="utf-8")
    lines = readme_commands() + [line for command in all_commands().values()
                                 for line in help_examples(command)]
    names = sorted(set(re.findall(r"models/(en_ewt-[\w-]+)", "\n".join(lines))))
    assert "en_ewt-o1-cle" in names
    for name in names:
        config = root / "configs" / "en_ewt" / f"{name.removeprefix('en_ewt-')}.yaml"
        if not config.is_file():
            config = root / "configs" / "en_ewt" / "o1-cle.yaml"
        result = run_command(f"dparse train {config} --out models/{name} -q", root,
                             shrink(slices))
        assert_ran(f"training the stand-in for models/{name}", result)
    test = base / "shared" / "data" / "en_ewt" / "test.conllu"
    assert_ran("parse", run_command(f"dparse parse models/en_ewt-o1-cle {test} "
                                    f"-o {PARSER_OUTPUTS[0]}", root))
    for name in PARSER_OUTPUTS[1:]:
        shutil.copyfile(root / PARSER_OUTPUTS[0], root / name)
    assert_ran("parse --marginals", run_command(f"dparse parse models/en_ewt-o1-cle {test} "
                                                f"--marginals -o {MARGINALS_OUTPUT}", root))
    (root / WORDS).write_text("".join(" ".join(s.form) + "\n" for s in read_treebank(test)),
                              encoding="utf-8")
    # --constraints keep's input: the odd words' arcs of the projectivized gold tree kept
    # (projective models take it too); --forbid's file
    gold = list(read_treebank(test))
    write_conll([s.with_parse([h if m % 2 else -1
                               for m, h in enumerate(projectivize_heads(s.heads))],
                              [r if m % 2 else "_" for m, r in enumerate(s.deprels)])
                 for s in gold], root / "partial.conllu")
    (root / "forbid.tsv").write_text(f"{sent_id(gold[0])}\t1\t{gold[0].heads[1]}\n",
                                     encoding="utf-8")
    assert_ran("prune learn", run_command(
        "dparse prune learn ../shared/data/en_ewt/dev.conllu -o en_ewt.lendict.json", root))
    return root


def test_readme_using_it_commands_run_as_written(project: Path) -> None:
    lines = readme_commands()
    assert any(line.startswith("dparse train") for line in lines)
    assert sum(line.startswith("dparse parse models/en_ewt-o1-cle") for line in lines) >= 2
    slices = project.parent / "slices"
    for line in lines:
        extra = shrink(slices) if line.startswith("dparse train") else []
        assert_ran(line, run_command(line, project, extra))
    assert (project / "test.parsed.conllu").stat().st_size > 0


def test_every_command_has_examples() -> None:
    missing = [name for name, command in all_commands().items() if not help_examples(command)]
    assert not missing, f"no Examples: section in the help of {missing}"


def test_help_examples_keep_their_line_breaks() -> None:
    """A continued example line ends in a backslash; a docstring's single backslash would join
    the two lines into one with a run of spaces inside (the help shows it so)."""
    joined = [f"{name}: {line.strip()}" for name, command in all_commands().items()
              if "Examples:" in (command.help or "")
              for line in (command.help or "").split("Examples:", 1)[1].splitlines()
              if re.search(r"\S {4,}\S", line)]
    assert not joined, "help examples joined by a single backslash:\n" + "\n".join(joined)


def runnable_examples() -> list[tuple[str, str]]:
    """(command name, example) for every help example not in NOT_RUN, each example once."""
    seen: dict[str, str] = {}
    for name, command in all_commands().items():
        for line in help_examples(command):
            if not any(line.startswith(prefix) for prefix in NOT_RUN):
                seen.setdefault(line, name)
    return [(name, line) for line, name in seen.items()]


EXAMPLES = runnable_examples()


def test_most_help_examples_are_run() -> None:
    assert len(EXAMPLES) >= 25


@pytest.mark.parametrize(("name", "line"), EXAMPLES,
                         ids=[f"{name}-{k}" for k, (name, _) in enumerate(EXAMPLES)])
def test_help_example_runs_as_written(project: Path, name: str, line: str) -> None:
    extra = shrink(project.parent / "slices") if line.startswith("dparse train") else []
    assert_ran(line, run_command(line, project, extra))


def test_help_is_shown_by_the_real_command_line() -> None:
    for args in ([], ["parse"], ["prune", "learn"]):
        result = subprocess.run([sys.executable, "-m", "dparse", *args, "--help"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and "Examples:" in result.stdout, result.stderr


def test_parse_help_suggests_only_decoders_the_demo_model_takes(project: Path) -> None:
    """Every registered decoder that ``parse --help`` names parses with the (stand-in) demo
    model; the easy-first decoders are named only as those of an easy-first model."""
    text = " ".join(all_commands()["dparse parse"].get_help(
        click.Context(all_commands()["dparse parse"])).split())
    named = [d for d in available_decoders() if re.search(rf"(?<![\w-]){re.escape(d)}(?![\w-])",
                                                          text)]
    assert {"cle", "eisner"} <= set(named)
    sample = project.parent / "slices" / "dev.conllu"
    for decoder in named:
        assert_ran(decoder, run_command(f"dparse parse models/en_ewt-o1-cle {sample} "
                                        f"--decoder {decoder} -o out.conllu", project))
    for easyfirst in re.findall(r"easyfirst-\w+", text):
        assert re.search(rf"easy-first model takes[^.;]*{easyfirst}", text), easyfirst


def test_progress_bars_only_on_a_terminal_or_with_progress(project: Path) -> None:
    """Training draws progress bars (carriage returns, "sent/s") on a terminal or with
    --progress, not into a redirected log, and never with --quiet."""
    slices = project.parent / "slices"
    train = ["train", "configs/en_ewt/o1-cle.yaml", "--out", "models/progress", *shrink(slices)]

    def stderr_of(*extra: str, terminal: bool = False) -> str:
        if not terminal:
            result = subprocess.run([sys.executable, "-m", "dparse", *train, *extra],
                                    cwd=project, capture_output=True, timeout=120)
            assert result.returncode == 0, result.stderr
            return result.stderr.decode()
        main, side = pty.openpty()
        fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        try:
            proc = subprocess.Popen([sys.executable, "-m", "dparse", *train, *extra],
                                    cwd=project, stdout=subprocess.DEVNULL, stderr=side,
                                    stdin=subprocess.DEVNULL)
            os.close(side)
            chunks = []
            while True:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # EIO: the process closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            assert proc.wait(120) == 0
        finally:
            os.close(main)
        return b"".join(chunks).decode(errors="replace")

    logged = stderr_of()
    assert "\r" not in logged and "sent/s" not in logged and "epoch 1:" in logged
    forced = stderr_of("--progress")
    assert "\r" in forced and "sent/s" in forced
    assert "sent/s" in stderr_of(terminal=True)
    quiet = stderr_of("--progress", "-q")
    assert "sent/s" not in quiet and "epoch 1:" not in quiet and "trained" in quiet
