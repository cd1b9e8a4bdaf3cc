"""``dparse train`` and ``dparse parse`` end to end, as subprocesses of ``python -m dparse``.

A tiny model is trained once per module on slices of en_ewt; parsing must keep every byte of
the input except the HEAD and DEPREL columns, report a summary on stderr, and turn bad input or
usage into exit status 2 with a message (never a traceback).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest
import yaml
from conftest import DATA, requires_data
from paths import REPO

from dparse.cli import COMMANDS
from dparse.conll import Sentence, read_conll, read_treebank, write_conll
from dparse.trees import check_tree

pytestmark = requires_data

SUMMARY = re.compile(r"parsed (\d+) sentences, (\d+) tokens in [\d.]+s: [\d,]+ tokens/sec")


def dparse(*args: str, stdin: str | None = None, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess:
    """Run ``python -m dparse ARGS`` from the repository, without debug tracebacks."""
    full_env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        **(env or {}),
    }
    full_env.pop("DPARSE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "dparse", *args], input=stdin,
                          capture_output=True, text=True, env=full_env, cwd=REPO, timeout=300)


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _ids(sent: Sentence) -> list[str]:
    return [line.split("\t", 1)[0] for line in sent.to_conll().splitlines()
            if line and not line.startswith("#")]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Treebank slices, an experiment config naming them relative to this folder, and an
    input file mixing plain sentences with multiword tokens and empty nodes."""
    folder = tmp_path_factory.mktemp("cli")
    en = DATA / "en_ewt"
    write_conll(islice(read_conll(en / "train.conllu"), 300), folder / "train.conllu")
    write_conll(islice(read_conll(en / "dev.conllu"), 60), folder / "dev.conllu")
    (folder / "tiny.yaml").write_text(
        "name: tiny\n"
        "data:\n  train: train.conllu\n  dev: dev.conllu\n"
        "features:\n  arc_bits: 18\n  label_bits: 12\n"
        "training:\n  epochs: 1\n",
        encoding="utf-8",
    )
    plain, mwt, empty = [], [], []
    for sent in read_conll(en / "dev.conllu"):
        ids = _ids(sent)
        if any("." in i for i in ids):
            empty.append(sent)
        elif any("-" in i for i in ids):
            mwt.append(sent)
        elif len(plain) < 8:
            plain.append(sent)
        if len(empty) >= 2 and len(mwt) >= 3:
            break
    write_conll([*plain[:4], *mwt[:3], *plain[4:], *empty[:2]], folder / "mixed.conllu")
    return folder


@pytest.fixture(scope="module")
def trained(folder: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """``dparse train`` with --data-root and an override: the model dir and the run."""
    out = folder / "model"
    run = dparse("train", str(folder / "tiny.yaml"), "--out", str(out),
                 "--data-root", str(folder), "--set", "training.epochs=2")
    assert run.returncode == 0, run.stderr
    return out, run


@pytest.fixture(scope="module")
def model(trained: tuple[Path, subprocess.CompletedProcess]) -> Path:
    return trained[0]


def test_train_writes_a_model_dir(trained: tuple[Path, subprocess.CompletedProcess]) -> None:
    out, run = trained
    assert {p.name for p in out.iterdir()} >= {"weights.bin", "vocab.json", "config.yaml"}
    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert saved["training"]["epochs"] == 2  # the override is part of the resolved config
    assert saved["name"] == "tiny"
    assert re.search(r"^epoch 1: train UAS [\d.]+ LAS [\d.]+; dev UAS", run.stderr, re.M)
    assert re.search(r"^epoch 2: ", run.stderr, re.M)
    assert f"model written to {out}" in run.stderr


def test_train_reads_the_data_root_from_the_environment(folder: Path, tmp_path: Path) -> None:
    run = dparse("train", str(folder / "tiny.yaml"), "-o", str(tmp_path / "m"), "--quiet",
                 env={"DPARSE_DATA": str(folder)})
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "m" / "weights.bin").is_file()
    assert run.stderr.startswith("trained tiny") and "epoch 1:" not in run.stderr


def test_train_dev_without_scored_tokens_says_so(folder: Path, tmp_path: Path) -> None:
    """A dev file whose every token the punctuation rule excludes is not a missing dev file."""
    _write(folder, "punct-dev.conllu",
           "1\t.\t.\tPUNCT\t.\t_\t0\troot\t_\t_\n2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n")
    run = dparse("train", str(folder / "tiny.yaml"), "-o", str(tmp_path / "m"),
                 "--data-root", str(folder), "--set", "data.dev=punct-dev.conllu",
                 "--set", "training.punct=upos")
    assert run.returncode == 0, run.stderr
    assert "no dev file" not in run.stderr
    assert re.search(r"^epoch 1: .*dev punct-dev\.conllu: no scored tokens \(punct upos\)",
                     run.stderr, re.M), run.stderr


def test_parse_file_and_stdin_give_the_same_output(folder: Path, model: Path,
                                                   tmp_path: Path) -> None:
    text = (folder / "dev.conllu").read_text(encoding="utf-8")
    out = tmp_path / "out.conllu"
    from_file = dparse("parse", str(model), str(folder / "dev.conllu"), "-o", str(out))
    assert from_file.returncode == 0, from_file.stderr
    from_stdin = dparse("parse", str(model), stdin=text)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert out.read_text(encoding="utf-8") == from_stdin.stdout
    assert from_file.stdout == ""
    parsed = read_treebank(out)
    assert len(parsed) == 60
    for sent in parsed:
        check_tree(sent.heads, single_root=True)


def test_parse_changes_only_head_and_deprel(folder: Path, model: Path, tmp_path: Path) -> None:
    source = folder / "mixed.conllu"
    run = dparse("parse", str(model), str(source))
    assert run.returncode == 0, run.stderr
    before = source.read_text(encoding="utf-8").split("\n")
    after = run.stdout.split("\n")
    assert len(after) == len(before)
    kinds = {"comment": 0, "mwt": 0, "empty": 0, "word": 0}
    for old, new in zip(before, after, strict=True):
        cols = old.split("\t")
        if old.startswith("#") or len(cols) != 10:
            kinds["comment"] += old.startswith("#")
            assert new == old
        elif not cols[0].isdigit():
            kinds["mwt" if "-" in cols[0] else "empty"] += 1
            assert new == old
        else:
            kinds["word"] += 1
            new_cols = new.split("\t")
            assert len(new_cols) == 10
            assert new_cols[:6] == cols[:6] and new_cols[8:] == cols[8:]
            assert new_cols[6].isdigit() and new_cols[7] not in ("", "_")
    assert kinds["mwt"] >= 3 and kinds["empty"] >= 2 and kinds["comment"] >= 10
    for sent in read_treebank(_write(tmp_path, "mixed.out.conllu", run.stdout)):
        check_tree(sent.heads, single_root=True)


def test_summary_line_on_stderr(folder: Path, model: Path) -> None:
    run = dparse("parse", str(model), str(folder / "dev.conllu"))
    assert run.returncode == 0, run.stderr
    match = SUMMARY.search(run.stderr)
    assert match, run.stderr
    sents = read_treebank(folder / "dev.conllu")
    assert int(match.group(1)) == len(sents) == 60
    assert int(match.group(2)) == sum(len(s) for s in sents)
    assert "decoder cle" in run.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_parse_warns_about_a_column_the_input_leaves_empty(folder: Path, model: Path,
                                                           tmp_path: Path, jobs: str) -> None:
    """The model read XPOS (filled on every en_ewt token); an input without it is parsed all
    the same, with a warning before the summary (which stays the last line)."""
    blank = tmp_path / "no-xpos.conllu"
    write_conll(read_conll(folder / "dev.conllu"), blank)
    text = blank.read_text(encoding="utf-8").splitlines(keepends=True)
    rows = [line.split("\t") for line in text]
    blank.write_text("".join("\t".join([*r[:4], "_", *r[5:]]) if len(r) == 10 else "\t".join(r)
                             for r in rows), encoding="utf-8")
    assert all(s.xpos == ["_"] * len(s) for s in read_conll(blank))
    run = dparse("parse", str(model), str(blank), "--jobs", jobs, "--json")
    assert run.returncode == 0, run.stderr
    lines = run.stderr.strip().splitlines()
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert len(warnings) == 1, run.stderr
    assert f"{blank}: XPOS is filled on 0.0% of its tokens against 100.0%" in warnings[0]
    assert json.loads(lines[-1])["sentences"] == 60
    quiet = dparse("parse", str(model), str(folder / "dev.conllu"), "--jobs", jobs)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr


def test_eisner_decoder_and_json_summary(folder: Path, model: Path, tmp_path: Path) -> None:
    run = dparse("parse", str(model), str(folder / "dev.conllu"), "--decoder", "eisner", "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stderr.strip().splitlines()[-1])
    assert summary["decoder"] == "eisner"
    assert summary["sentences"] == 60 and summary["tokens"] > 500
    assert summary["tokens_per_second"] > 0 and summary["seconds"] > 0
    assert {"score_seconds", "decode_seconds"} <= set(summary)
    trees = [s.heads for s in read_treebank(_write(tmp_path, "eisner.conllu", run.stdout))]
    assert len(trees) == 60
    for heads in trees:
        check_tree(heads, single_root=True, projective=True)
    via_set = dparse("parse", str(model), str(folder / "dev.conllu"), "--set",
                     "decoder.name=eisner")
    assert via_set.returncode == 0 and via_set.stdout == run.stdout


def test_malformed_input_exits_2_and_leaves_no_output(folder: Path, model: Path,
                                                       tmp_path: Path) -> None:
    lines = (folder / "dev.conllu").read_text(encoding="utf-8").split("\n")
    word_lines = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    bad_index = word_lines[len(word_lines) // 2]  # deep in the file: output was begun
    lines[bad_index] = "\t".join(lines[bad_index].split("\t")[:7])  # 7 columns
    bad = _write(tmp_path, "bad.conllu", "\n".join(lines))
    out = tmp_path / "out" / "parsed.conllu"
    out.parent.mkdir()
    run = dparse("parse", str(model), str(bad), "-o", str(out))
    assert run.returncode == 2
    assert f"{bad}:{bad_index + 1}" in run.stderr
    assert "Traceback" not in run.stderr
    assert list(out.parent.iterdir()) == []  # neither the output nor a temporary file
    skipped_id = ("# a comment\n1\tThe\tthe\tDET\tDT\t_\t0\troot\t_\t_\n"
                  "3\tdog\tdog\tNOUN\tNN\t_\t1\tdep\t_\t_\n\n")
    from_stdin = dparse("parse", str(model), stdin=skipped_id)
    assert from_stdin.returncode == 2 and "Traceback" not in from_stdin.stderr
    assert "<stdin>:3:" in from_stdin.stderr and from_stdin.stdout == ""


def test_missing_input_file_exits_2(model: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nothing.conllu"
    run = dparse("parse", str(model), str(missing))
    assert run.returncode == 2 and str(missing) in run.stderr
    assert "Traceback" not in run.stderr


def test_unknown_decoder_exits_2(folder: Path, model: Path) -> None:
    run = dparse("parse", str(model), str(folder / "dev.conllu"), "--decoder", "nope")
    assert run.returncode == 2
    assert "nope" in run.stderr and "cle" in run.stderr and "eisner" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_threads_and_device_take_a_linear_model_as_it_runs(folder: Path, model: Path,
                                                          tmp_path: Path) -> None:
    """``--threads 1 --device cpu`` (one command line for every model) parse a linear model as
    without them; more threads or a GPU are a usage error naming the options."""
    plain = dparse("parse", str(model), str(folder / "dev.conllu"), "-o",
                   str(tmp_path / "a.conllu"))
    given = dparse("parse", str(model), str(folder / "dev.conllu"), "-o",
                   str(tmp_path / "b.conllu"), "--threads", "1", "--device", "cpu")
    assert plain.returncode == given.returncode == 0, given.stderr
    assert (tmp_path / "a.conllu").read_bytes() == (tmp_path / "b.conllu").read_bytes()
    for extra in (["--threads", "2"], ["--device", "cuda"]):
        run = dparse("parse", str(model), str(folder / "dev.conllu"), *extra)
        assert run.returncode == 2 and "--threads and --device" in run.stderr, extra
        assert "Traceback" not in run.stderr


def test_forest_of_a_graph_model_exits_2(folder: Path, model: Path, tmp_path: Path) -> None:
    forests, out = tmp_path / "f.forests", tmp_path / "out.conllu"
    run = dparse("parse", str(model), str(folder / "dev.conllu"), "--forest", str(forests),
                 "-o", str(out))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert str(model) in run.stderr and "parser: shiftreduce" in run.stderr
    assert not forests.exists() and not out.exists()


def test_not_a_model_directory_exits_2(folder: Path, tmp_path: Path) -> None:
    run = dparse("parse", str(tmp_path), str(folder / "dev.conllu"))
    assert run.returncode == 2 and str(tmp_path) in run.stderr
    assert "Traceback" not in run.stderr
    assert dparse("parse", str(tmp_path / "none"), str(folder / "dev.conllu")).returncode == 2


def test_config_errors_exit_2(folder: Path, tmp_path: Path) -> None:
    missing = dparse("train", str(tmp_path / "missing.yaml"))
    assert missing.returncode == 2 and "missing.yaml" in missing.stderr
    bad_key = dparse("train", str(folder / "tiny.yaml"), "--set", "training.epoch=3",
                     "--data-root", str(folder), "-o", str(tmp_path / "m"))
    assert bad_key.returncode == 2 and "epoch" in bad_key.stderr
    assert "Traceback" not in bad_key.stderr
    bad_file = _write(tmp_path, "bad.yaml", "data:\n  train: train.conllu\ntraining:\n  lr: 1\n")
    run = dparse("train", str(bad_file), "--data-root", str(folder), "-o", str(tmp_path / "m"))
    assert run.returncode == 2 and "lr" in run.stderr and str(bad_file) in run.stderr
    no_data = dparse("train", str(folder / "tiny.yaml"), "--data-root", str(tmp_path),
                     "-o", str(tmp_path / "m"))
    assert no_data.returncode == 2 and "train.conllu" in no_data.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("args", [[], *([name] for name in sorted(COMMANDS))], ids=str)
def test_help_exits_0(args: list[str]) -> None:
    run = dparse(*args, "--help")
    assert run.returncode == 0, run.stderr
    assert "Usage:" in run.stdout
    if not args:
        assert "train" in run.stdout and "parse" in run.stdout


@pytest.mark.parametrize("given", [None, "3"])
def test_blas_stays_single_threaded_unless_the_environment_says(given: str | None) -> None:
    """The command line sets OPENBLAS_NUM_THREADS to 1 before numpy is imported, and keeps a
    value the user gave."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = str(REPO)
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = ("import os, sys; import dparse.cli; "
            "print(os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [given or "1", "False"]
