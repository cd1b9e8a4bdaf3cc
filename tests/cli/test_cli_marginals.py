"""``dparse parse --marginals`` / ``--marginals-file`` / ``--temperature``, ``dparse eval
--calibration`` and ``Parser.marginals``, on the session's tiny first-order model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from paths import REPO

import dparse
from dparse.calibration import calibration_of_files, head_probabilities
from dparse.cli.eval import eval_command
from dparse.cli.parse import parse
from dparse.conll import Sentence, read_conll, write_conll


@pytest.fixture(scope="module")
def files(tiny_first_order: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``in.conllu`` (12 dev sentences, MISC attributes among them) and
    ``in.conllx`` (the same as CoNLL-X)."""
    folder = tmp_path_factory.mktemp("marginals")
    write_conll(islice(read_conll(tiny_first_order / "dev.conllu"), 12), folder / "in.conllu")
    assert "SpaceAfter=No" in (folder / "in.conllu").read_text()  # attributes to keep
    write_conll((Sentence.build(s.form, s.heads, s.deprels, s.upos, s.xpos, s.lemma, s.feats,
                                fmt="conllx") for s in read_conll(folder / "in.conllu")),
                folder / "in.conllx")
    return folder


def run_parse(*args: str) -> str:
    result = CliRunner().invoke(parse, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def strip_probabilities(text: str) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        cols = line.rstrip("\n").split("\t")
        if len(cols) == 10:
            kept = [a for a in cols[9].split("|") if not a.startswith(("HeadProb=", "HeadAlt="))]
            cols[9] = "|".join(kept) or "_"
            line = "\t".join(cols) + "\n"
        lines.append(line)
    return "".join(lines)


def test_marginals_add_misc_attributes_and_change_nothing_else(tiny_first_order: Path,
                                                               files: Path) -> None:
    model = str(tiny_first_order / "model")
    plain = files / "plain.conllu"
    run_parse(model, str(files / "in.conllu"), "-o", str(plain))
    table = files / "arcs.tsv"
    alone = files / "alone.conllu"
    said = run_parse(model, str(files / "in.conllu"), "-o", str(alone), "--marginals-file",
                     str(table))
    assert "head probabilities at T = 1: the model has no fitted temperature" in said
    assert alone.read_bytes() == plain.read_bytes()  # the table alone leaves the parse's bytes
    probs_out = files / "probs.conllu"
    run_parse(model, str(files / "in.conllu"), "-o", str(probs_out), "--marginals",
              "--temperature", "0.5")
    text = probs_out.read_text()
    assert "SpaceAfter=No|HeadProb=" in text
    assert strip_probabilities(text) == plain.read_text()

    parser = dparse.load(model)
    rows = [r.split("\t") for r in table.read_text().splitlines()[1:]]
    for k, (sent, out) in enumerate(zip(read_conll(files / "in.conllu"),
                                        read_conll(probs_out), strict=True), 1):
        parsed, probs = parser.marginals(sent, temperature=0.5)
        words = np.arange(1, len(sent) + 1)
        np.testing.assert_allclose(probs[:, 1:].sum(axis=0), 1.0, atol=1e-9)
        assert (out.heads == parsed.heads).all()
        assert head_probabilities(out) == [
            float(f"{p:.3f}") for p in probs[parsed.heads[1:], words]]
        _, at_one = parser.marginals(sent)
        mine = [r for r in rows if r[0] == str(k)]
        assert {(int(r[1]), int(r[2])) for r in mine} == {
            (m, h) for h, m in zip(*np.nonzero(at_one >= 0.01), strict=True)}
        for r in mine:
            assert float(r[3]) == pytest.approx(at_one[int(r[2]), int(r[1])], abs=1e-6)
            assert r[4] == str(int(parsed.heads[int(r[1])] == int(r[2])))


def test_eval_calibration_reports_the_ece_of_the_head_probabilities(tiny_first_order: Path,
                                                                    files: Path) -> None:
    model = str(tiny_first_order / "model")
    out = files / "cal.conllu"
    run_parse(model, str(files / "in.conllu"), "-o", str(out), "--marginals")
    result = CliRunner().invoke(eval_command, [str(files / "in.conllu"), str(out),
                                               "--calibration", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    want = calibration_of_files(files / "in.conllu", out)
    assert report["calibration"]["ece"] == pytest.approx(want.ece)
    assert sum(b["words"] for b in report["calibration"]["reliability"]) == want.words > 0
    text = CliRunner().invoke(eval_command, [str(files / "in.conllu"), str(out),
                                             "--calibration"]).output
    assert "10 equal-width bins): ECE" in text
    svg = files / "cal.svg"
    drawn = CliRunner().invoke(eval_command, [str(files / "in.conllu"), str(out),
                                              "--calibration", "--calibration-plot", str(svg)])
    assert drawn.exit_code == 0, drawn.output
    assert f"ECE {100 * want.ece:.2f}%" in svg.read_text()
    alone = CliRunner().invoke(eval_command, [str(files / "in.conllu"), str(out),
                                              "--calibration-plot", str(files / "no.svg")])
    assert alone.exit_code == 2 and "give both" in alone.output
    assert not (files / "no.svg").exists()
    tagged = files / "tagged.conllu"
    tagged.write_text("".join(
        "\t".join([*c[:6], "_", "_", *c[8:]]) + "\n" if len(c) == 10 else "\t".join(c) + "\n"
        for c in (line.split("\t") for line in out.read_text().splitlines())))
    no_heads = CliRunner().invoke(eval_command, [str(files / "in.conllu"), str(tagged),
                                                 "--calibration"])
    assert no_heads.exit_code == 2 and "--calibration compares parses" in no_heads.output


def dparse_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("DPARSE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=300)


def test_what_marginals_cannot_do_exits_2_with_a_message(tiny_first_order: Path, files: Path,
                                                         tmp_path: Path) -> None:
    model = str(tiny_first_order / "model")
    out = tmp_path / "out.conllu"
    conllx = dparse_cli("parse", model, str(files / "in.conllx"), "--format", "conllx",
                        "--marginals", "-o", str(out))
    assert conllx.returncode == 2 and "MISC" in conllx.stderr and "Traceback" not in conllx.stderr
    assert not out.exists()  # written whole or not at all
    jobs = dparse_cli("parse", model, str(files / "in.conllu"), "--marginals", "--jobs", "2")
    assert jobs.returncode == 2 and "one job" in jobs.stderr
    easyfirst = dparse.train(tiny_first_order / "model" / "config.yaml", tmp_path / "ef",
                             {"parser": "easyfirst", "decoder.name": "easyfirst-scan",
                              "training.epochs": 1, "training.learner": "perceptron",
                              "data.train": "dev.conllu",
                              "data.dev": None},
                             data_root=tiny_first_order).path
    other = dparse_cli("parse", str(easyfirst), str(files / "in.conllu"), "--marginals")
    assert other.returncode == 2 and "need a graph model" in other.stderr
    with pytest.raises(dparse.ConfigError, match="graph model"):
        dparse.load(easyfirst).marginals(["A", "b"])
