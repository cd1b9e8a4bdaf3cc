"""K-best trees through the API (``Parser.parse_kbest``, ``parse_file(kbest=K)``) and ``dparse
parse --kbest`` with a small trained first-order model, and ``dparse oracle --kbest`` on the
file it writes.

Each sentence gets min(K, trees) blocks, best first, numbered by ``# kbest = i`` after its own
comments, with ``# score``; the trees are distinct, scored as the model scores them (the sum of
the arc scores, best label included), labeled by the model's best label of each arc; the
first block is the 1-best parse, byte for byte once the two comments are taken out; a model or
decoder without k-best lists is a clear error (exit 2).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data
from paths import REPO

import dparse
from dparse.conll import read_treebank, write_conll
from dparse.graph.model import best_labels
from dparse.oracle import kbest_lists
from dparse.trees import check_tree

pytestmark = requires_data


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                          text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture(scope="module")
def inputs(tiny_first_order: Path) -> Path:
    """The first 25 sentences of en_ewt test (comments and multiword tokens included)."""
    path = tiny_first_order.parent / "kbest-test.conllu"
    if not path.exists():
        write_conll(islice(dparse.read(DATA / "en_ewt" / "test.conllu"), 25), path)
    return path


def without_kbest_comments(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(("# kbest = ", "# score = ")))


@pytest.mark.parametrize("decoder", ["cle", "eisner"])
def test_parse_kbest_lists(tiny_first_order: Path, inputs: Path, decoder: str) -> None:
    parser = dparse.load(tiny_first_order / "model", decoder=decoder)
    loaded = parser._loaded
    model = loaded.model
    for sent in dparse.read(inputs):
        k = 6
        trees = parser.parse_kbest(sent, k)
        n = len(sent)
        enc = model.vocab.encode(sent)
        arc, label, _ = model.score_parts(enc, None, False)
        assert 1 <= len(trees) <= k
        assert trees[0][0].to_conll() == parser.parse(sent).to_conll()
        heads = np.array([t.heads for t, _ in trees])
        assert len({h.tobytes() for h in heads}) == len(trees)
        scores = [s for _, s in trees]
        assert scores == sorted(scores, reverse=True)
        for (tree, score), h in zip(trees, heads, strict=True):
            check_tree(h, single_root=loaded.single_root,
                                    projective=decoder == "eisner")
            assert score == pytest.approx(arc[h[1:], np.arange(1, n + 1)].sum(), abs=1e-9)
            names = [model.vocab.labels[i] for i in best_labels(label, h)[1:]]
            assert tree.deprels[1:] == names
            assert tree.form == sent.form


def test_cli_kbest_file_and_oracle(tiny_first_order: Path, inputs: Path, tmp_path: Path
                                   ) -> None:
    model = str(tiny_first_order / "model")
    one, many = tmp_path / "one.conllu", tmp_path / "many.conllu"
    assert run_cli("parse", model, str(inputs), "-o", str(one)).returncode == 0
    done = run_cli("parse", model, str(inputs), "--kbest", "4", "-o", str(many))
    assert done.returncode == 0, done.stderr
    assert "parsed 25 sentences" in done.stderr
    blocks = read_treebank(many)
    sentences = read_treebank(inputs)
    firsts = [b for b in blocks if "# kbest = 1" in b.comments]
    assert len(firsts) == len(sentences)
    # the first block of each list is the 1-best parse, comments and all
    assert "".join(without_kbest_comments(b.to_conll()) for b in firsts) == \
        one.read_text(encoding="utf-8")
    lists = kbest_lists(blocks)
    assert len(lists) == len(sentences)
    for sent, trees in zip(sentences, lists, strict=True):
        assert 1 <= len(trees) <= 4 and len({t.heads.tobytes() for t in trees}) == len(trees)
        scores = []
        for rank, tree in enumerate(trees, 1):
            assert tree.form == sent.form
            assert tree.comments[:-2] == sent.comments
            assert tree.comments[-2] == f"# kbest = {rank}"
            scores.append(float(tree.comments[-1].removeprefix("# score = ")))
        assert scores == sorted(scores, reverse=True)
    report = run_cli("oracle", str(inputs), str(many), "--kbest", "--json")
    assert report.returncode == 0, report.stderr
    uas = json.loads(report.stdout)["uas"]
    assert len(uas) == 4 and uas == sorted(uas)
    ev = dparse.evaluate(inputs, one)
    assert uas[0] == pytest.approx(ev.uas)


def test_kbest_errors(tiny_first_order: Path, inputs: Path) -> None:
    model = str(tiny_first_order / "model")
    done = run_cli("parse", model, str(inputs), "--kbest", "3", "--decoder", "bgi")
    assert done.returncode == 2 and "k-best" in done.stderr and "bgi" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli("parse", model, str(inputs), "--kbest", "3", "--jobs", "2")
    assert done.returncode == 2 and "--kbest" in done.stderr
    done = run_cli("parse", model, str(inputs), "--kbest", "0")
    assert done.returncode == 2
    parser = dparse.load(model, decoder="bgi")
    with pytest.raises(dparse.DparseError, match="k-best"):
        parser.parse_kbest(["Dogs", "bark", "."], 2)


def test_second_order_decoder_lists(tiny_first_order: Path, inputs: Path) -> None:
    """A second-order decoder's lists through the same path: on a first-order model (no
    sibling or grandparent parts: zeros) eisner2-sibgp lists the trees eisner lists, with
    the same scores (up to ties, so compared as score lists)."""
    model = tiny_first_order / "model"
    first = dparse.load(model, decoder="eisner")
    second = dparse.load(model, decoder="eisner2-sibgp")
    for sent in islice(dparse.read(inputs), 10):
        a, b = first.parse_kbest(sent, 5), second.parse_kbest(sent, 5)
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-9)
