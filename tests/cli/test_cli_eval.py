"""``dparse eval``: output matches dparse.metrics, JSON, options, and errors exit with status 2."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from paths import REPO

from dparse.cli.eval import eval_command
from dparse.conll import read_treebank, write_conll
from dparse.contentscores import format_content, score_content
from dparse.metrics import evaluate, format_table
from dparse.tagscores import format_tags, score_tags

GOLD = (
    "# sent_id = 1\n"
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
    "2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
    "3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_\n"
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n"
    "\n"
)
SYSTEM = GOLD.replace("\t3\tpunct", "\t2\tpunct").replace("\tnsubj\t", "\tobj\t")


def _files(tmp_path: Path) -> tuple[Path, Path]:
    gold, system = tmp_path / "gold.conllu", tmp_path / "sys.conllu"
    gold.write_text(GOLD)
    system.write_text(SYSTEM)
    return gold, system


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("DPARSE_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "dparse", "eval", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )


def test_cli_eval_prints_the_table(tmp_path: Path) -> None:
    gold, system = _files(tmp_path)
    result = CliRunner().invoke(eval_command, [str(gold), str(system), "--punct", "conll"])
    assert result.exit_code == 0, result.output
    expected = format_table(evaluate(read_treebank(gold), read_treebank(system), punct="conll"))
    content = format_content(score_content(read_treebank(gold), read_treebank(system)))
    tags = format_tags(score_tags(read_treebank(gold), read_treebank(system)))
    assert result.output == f"{expected}\n\n{content}\n\n{tags}\n"
    assert "conll" in result.output.splitlines()[0]
    assert "UAS                     100.00" in result.output


def test_cli_eval_json_with_other_and_detail(tmp_path: Path) -> None:
    gold, system = _files(tmp_path)
    args = [str(gold), str(system), "--other", str(gold), "--json", "--detail", "--punct", "upos"]
    result = CliRunner().invoke(eval_command, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["punct"] == "upos" and data["scored"] == 3 and data["excluded"] == 1
    assert data["uas"] == 100.0 and data["las"] == pytest.approx(200 / 3)
    assert data["sarc"] == 100.0 and data["gold_xy"] == [0.0, 0.0]  # only '.' lost its head
    assert data["per_label"]["nsubj"]["las"] == 0.0 and "per_distance" in data


def test_cli_eval_format_and_encoding_options(tmp_path: Path) -> None:
    gold = tmp_path / "gold.txt"
    gold.write_bytes("caf\xe9\tNN\t0\n\n".encode("latin-1"))
    args = [str(gold), str(gold), "--format", "malttab", "--encoding", "latin-1", "--json"]
    result = CliRunner().invoke(eval_command, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["tokens"] == 1


def test_cli_eval_help() -> None:
    result = CliRunner().invoke(eval_command, ["--help"])
    assert result.exit_code == 0
    for word in (
        "GOLD",
        "SYSTEM",
        "--other",
        "--punct",
        "--json",
        "--detail",
        "--encoding",
        "--format",
        "eval.pl",
        "PUNCT",
    ):
        assert word in result.output


@pytest.mark.parametrize(
    ("system_text", "line", "problem"),
    [
        (SYSTEM.replace("\t2\tdet", "\tx\tdet"), 2, "HEAD 'x' is not a word ID"),
        # other words: scored through the CoNLL 2018 alignment, which needs gold's text
        (SYSTEM.replace("\tdog\t", "\tcat\t"), 3, "the text differs from gold's at character "
         "4 (non-space characters): the system's token 'cat' has 'c' as its character 1, gold's "
         "token 'dog'"),
        (SYSTEM.replace("4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_\n", ""), 4,
         "the system's text ends at character 12 of gold's"),
    ],
)
def test_cli_eval_bad_input_exits_2_without_traceback(
    tmp_path: Path, system_text: str, line: int, problem: str
) -> None:
    gold, system = _files(tmp_path)
    system.write_text(system_text)
    result = _run(str(gold), str(system))
    assert result.returncode == 2
    assert result.stderr.startswith(f"dparse: error: {system}:{line}: ")
    assert problem in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_cli_eval_latin1_hint_and_missing_file(tmp_path: Path) -> None:
    gold, _ = _files(tmp_path)
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(GOLD.replace("dog", "d\xf6g").encode("latin-1"))
    result = _run(str(gold), str(bad))
    assert result.returncode == 2 and f"{bad}:3:" in result.stderr
    assert "--encoding latin-1" in result.stderr and "Traceback" not in result.stderr
    result = _run(str(gold), str(tmp_path / "missing.conllu"))
    assert result.returncode == 2 and "does not exist" in result.stderr


def test_cli_eval_real_data_matches_evaluate(data: Path, tmp_path: Path) -> None:
    gold_path = data / "en_ewt" / "dev.conllu"
    gold = read_treebank(gold_path)
    rng = np.random.default_rng(7)
    system = [
        s.with_parse(np.where(rng.random(len(s) + 1) < 0.2, 0, s.heads), s.deprels) for s in gold
    ]
    sys_path = tmp_path / "sys.conllu.gz"
    write_conll(system, sys_path)
    result = _run(str(gold_path), str(sys_path), "--punct", "ptb", "--json")
    assert result.returncode == 0, result.stderr
    system = read_treebank(sys_path)
    expected = {**evaluate(gold, system, punct="ptb").as_dict(), "system_heads": True,
                **score_content(gold, system).as_dict(), **score_tags(gold, system).as_dict()}
    assert json.loads(result.stdout) == json.loads(json.dumps(expected))


# GOLD with "barks" split in two (bar ks): a system with its own tokenization
SPLIT = GOLD.replace("3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_\n4\t.\t.\tPUNCT\t.\t_\t3",
                     "3\tbar\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_\n"
                     "4\tks\tks\tVERB\tVBZ\t_\t3\tflat\t_\t_\n5\t.\t.\tPUNCT\t.\t_\t3")


def test_cli_eval_own_tokenization_is_aligned(tmp_path: Path) -> None:
    gold, system = _files(tmp_path)
    system.write_text(SPLIT)
    text = _run(str(gold), str(system))
    assert text.returncode == 0, text.stderr
    assert "alignment of the system's words with gold's" in text.stdout
    # The, dog and . match; dog's and .'s head (bar) matches no gold word
    assert re.search(r"^Tokens +66\.67 +60\.00 +75\.00 +3 +4 +5$", text.stdout, re.M)
    assert re.search(r"^UAS +22\.22 +20\.00 +25\.00 +1 +4 +5$", text.stdout, re.M)
    data = json.loads(_run(str(gold), str(system), "--json").stdout)
    assert data["alignment"] == "conll18" and data["words"] == pytest.approx(200 * 3 / 9)
    assert data["aligned_scores"]["clas"] == {"correct": 0, "gold": 2, "system": 3,
                                              "precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_cli_eval_aligned_flag_gives_eval_numbers(tmp_path: Path) -> None:
    gold, system = _files(tmp_path)
    plain = json.loads(_run(str(gold), str(system), "--json").stdout)
    aligned = json.loads(_run(str(gold), str(system), "--json", "--aligned").stdout)
    assert aligned["tokens"] == aligned["sentences"] == 100.0
    for key in ("uas", "las", "las_universal", "upos", "lemmas", "clas", "mlas", "blex"):
        assert aligned[key] == plain[key], key


@pytest.mark.parametrize("option", [["--detail"], ["--other", "OTHER"], ["--punct", "upos"],
                                    ["--calibration"]])
def test_cli_eval_own_tokenization_refuses_word_options(tmp_path: Path, option: list) -> None:
    gold, system = _files(tmp_path)
    system.write_text(SPLIT)
    args = [str(gold) if a == "OTHER" else a for a in option]
    result = _run(str(gold), str(system), *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{system}:1: system sentence 1 has 5 words but gold" in result.stderr
    assert f"{' '.join(option[:1] if option[0] != '--punct' else option)} needs gold's" \
        in result.stderr
    forced = _run(str(gold), str(gold), "--aligned", *args)
    assert forced.returncode == 2 and "does not go with --aligned" in forced.stderr
