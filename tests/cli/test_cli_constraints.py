"""``dparse parse --constraints keep|misc --forbid FILE`` and the API's ``constraints`` and
``forbid``, end to end with tiny first- and second-order models trained on en_ewt slices.

Every output is a valid tree holding the fixed arcs and labels and none of the forbidden arcs,
for exact, greedy and projective decoders; a parse whose constraints fix nothing gives the bytes
of a parse without them; impossible sets and bad forbid files exit 2 naming the sentence or the
line; a parser without parse_constrained refuses them.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data, train_tiny_model
from test_cli_train_parse import dparse

import dparse as api
from dparse.conll import Sentence, read_conll, write_conll
from dparse.constraints import (
    ConstraintSource,
    constrained_parse,
    sent_id,
    sentence_constraints,
)
from dparse.errors import DparseError
from dparse.timer import ParseTimer
from dparse.trees import check_tree

pytestmark = requires_data


@pytest.fixture(scope="module")
def second_order(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny pruned second-order model (eisner2-sibgp): its pruner removes arcs, so that fixed
    arcs it removed must be rescued."""
    folder = tmp_path_factory.mktemp("o2")
    raw = {"name": "tiny-o2", "data": {"train": "train.conllu"},
           "features": {"order": 2, "arc_bits": 16, "label_bits": 10, "sib_bits": 14,
                        "grand_bits": 14},
           "decoder": {"name": "eisner2-sibgp"},
           "pruner": {"epochs": 1, "arc_bits": 16, "train_folds": 0, "top_k": 3},
           "training": {"epochs": 1}}
    return train_tiny_model(folder, raw, 150, 10) / "model"


@pytest.fixture(scope="module")
def gold() -> list[Sentence]:
    return list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 40, 80))


def partial(gold: list[Sentence], share: float, seed: int) -> list[Sentence]:
    """Each sentence with a random ``share`` of its gold arcs kept, the others ``_``."""
    rng = np.random.default_rng(seed)
    out = []
    for s in gold:
        free = rng.random(len(s) + 1) >= share
        free[0] = True
        heads = np.where(free, -1, s.heads).astype(np.int32)
        deprels = [("_" if f else d) for f, d in zip(free, s.deprels, strict=True)]
        out.append(s.with_parse(heads, deprels))
    return out


def write_misc(src: Path, out: Path, misc: list[list[str]]) -> None:
    """``src`` (CoNLL-U) written to ``out`` with the MISC column of word m of sentence k set
    to misc[k][m - 1]."""
    sentences = iter(misc)
    values: list[str] = []
    lines = []
    for line in src.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdecimal():
            if cols[0] == "1":
                values = next(sentences)
            cols[9] = values[int(cols[0]) - 1]
        lines.append("\t".join(cols))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def satisfied(inputs: list[Sentence], parsed: list[Sentence], projective: bool) -> None:
    for s, p in zip(inputs, parsed, strict=True):
        check_tree(p.heads, single_root=True, projective=projective)
        c = sentence_constraints(s, True)
        assert c.satisfied_by(p.heads)
        assert all(lab is None or p.deprels[m] == lab for m, lab in enumerate(c.labels))


def non_crossing(gold: list[Sentence], share: float) -> list[Sentence]:
    """``partial`` keeping only sentences whose kept arcs do not cross (projective decoders)."""
    keep = []
    for s in partial(gold, share, 5):
        try:
            sentence_constraints(s, True).check(True, True, "eisner")
        except DparseError:
            continue
        keep.append(s)
    return keep


@pytest.mark.parametrize("decoder", ["cle", "eisner", "bgi", "bgi-pp"])
def test_keep_holds_fixed_arcs_and_labels_first_order(tiny_first_order: Path, tmp_path: Path,
                                                      gold: list[Sentence],
                                                      decoder: str) -> None:
    projective = decoder == "eisner"
    inputs = non_crossing(gold, 0.4) if projective else partial(gold, 0.4, 1)
    src, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    write_conll(inputs, src)
    run = dparse("parse", str(tiny_first_order / "model"), str(src), "-o", str(out),
                 "--decoder", decoder, "--constraints", "keep")
    assert run.returncode == 0, run.stderr
    satisfied(inputs, list(read_conll(out)), projective)


@pytest.mark.parametrize("decoder", ["eisner2-sibgp", "bgi-pp", "dd2"])
def test_keep_holds_fixed_arcs_pruned_second_order(second_order: Path, gold: list[Sentence],
                                                   decoder: str) -> None:
    """Fixed arcs the pruner removed are rescued (with their parts scored); forbidden arcs are
    avoided, through the API."""
    projective = decoder == "eisner2-sibgp"
    inputs = non_crossing(gold, 0.5) if projective else partial(gold, 0.5, 2)
    parser = api.load(second_order, decoder=decoder)
    pruned = 0
    model = parser._loaded.model
    for s in inputs:
        allowed = model.allowed(model.vocab.encode(s))
        fixed = np.flatnonzero(s.heads >= 0)
        pruned += int((allowed[s.heads[fixed], fixed] == 0).sum())
    assert pruned > 0  # the test exercises the rescue
    parsed = list(parser.parse_many(inputs, constraints="keep"))
    satisfied(inputs, parsed, projective)


def test_forbid_file_and_misc_rule_arcs_out(tiny_first_order: Path, tmp_path: Path,
                                            gold: list[Sentence]) -> None:
    model = str(tiny_first_order / "model")
    blank = [s.with_parse(np.full(len(s) + 1, -1), [""] + ["_"] * len(s)) for s in gold]
    src, plain, out = tmp_path / "in.conllu", tmp_path / "plain.conllu", tmp_path / "out.conllu"
    write_conll(blank, src)
    assert dparse("parse", model, str(src), "-o", str(plain)).returncode == 0
    first = list(read_conll(plain))
    # forbid every predicted arc of the first parse: each word must take another head
    forbid = tmp_path / "forbid.tsv"
    lines = ["# sentence\tdependent\thead"]
    for k, s in enumerate(first, 1):
        key = sent_id(s) or str(k)
        lines += [f"{key}\t{m}\t{s.heads[m]}" for m in range(1, len(s) + 1)]
    forbid.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = dparse("parse", model, str(src), "-o", str(out), "--forbid", str(forbid))
    assert run.returncode == 0, run.stderr
    for a, b in zip(first, read_conll(out), strict=True):
        check_tree(b.heads, single_root=True)
        assert not np.any(a.heads[1:] == b.heads[1:])
    # the same through MISC Forbid= (read with --constraints misc)
    misc_src = tmp_path / "misc.conllu"
    write_misc(src, misc_src, [[f"Forbid={h}" for h in s.heads[1:]] for s in first])
    out2 = tmp_path / "out2.conllu"
    run = dparse("parse", model, str(misc_src), "-o", str(out2), "--constraints", "misc")
    assert run.returncode == 0, run.stderr
    assert [s.heads.tolist() for s in read_conll(out2)] == [
        s.heads.tolist() for s in read_conll(out)]


def test_constraints_that_fix_nothing_give_the_plain_bytes(tiny_first_order: Path,
                                                           tmp_path: Path,
                                                           gold: list[Sentence]) -> None:
    model = str(tiny_first_order / "model")
    blank = [s.with_parse(np.full(len(s) + 1, -1), [""] + ["_"] * len(s)) for s in gold]
    src = tmp_path / "in.conllu"
    write_conll(blank, src)
    outs = []
    for options in ((), ("--constraints", "keep"), ("--constraints", "misc")):
        out = tmp_path / f"out{len(outs)}.conllu"
        assert dparse("parse", model, str(src), "-o", str(out), *options).returncode == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]


def test_impossible_constraints_exit_2_naming_the_sentence(tiny_first_order: Path,
                                                           tmp_path: Path,
                                                           gold: list[Sentence]) -> None:
    model = str(tiny_first_order / "model")
    s = gold[3]
    heads = np.full(len(s) + 1, -1, dtype=np.int32)
    heads[1], heads[2] = 2, 1  # a cycle
    src = tmp_path / "cycle.conllu"
    write_conll([gold[0], s.with_parse(heads, [""] + ["_"] * len(s))], src)
    out = tmp_path / "out.conllu"
    run = dparse("parse", model, str(src), "-o", str(out), "--constraints", "keep")
    assert run.returncode == 2
    assert f"{src}:" in run.stderr and "sentence 2 (sent_id " in run.stderr
    assert "make a cycle" in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()  # written whole or not at all
    forbid = tmp_path / "forbid.tsv"
    forbid.write_text("nosuch\t1\t0\n", encoding="utf-8")
    run = dparse("parse", model, str(src), "-o", str(out), "--forbid", str(forbid))
    assert run.returncode == 2 and f"{forbid}:1: no sentence 'nosuch'" in run.stderr
    forbid.write_text("1\t1\n", encoding="utf-8")
    run = dparse("parse", model, str(src), "-o", str(out), "--forbid", str(forbid))
    assert run.returncode == 2 and f"{forbid}:1: expected SENTENCE" in run.stderr
    run = dparse("parse", model, str(src), "--constraints", "keep", "--jobs", "2")
    assert run.returncode == 2 and "--jobs 1" in run.stderr
    run = dparse("parse", model, str(src), "--constraints", "keep", "--forest", "f.gz")
    assert run.returncode == 2 and "--forest and --constraints" in run.stderr


def test_api_parse_keeps_and_forbids(tiny_first_order: Path) -> None:
    parser = api.load(tiny_first_order / "model")
    words = ["She", "reads", "books", "."]
    fixed = Sentence.build(words, [-1, 2, -1, -1, 2], ["", "_", "_", "_", "punct"])
    s = parser.parse(fixed, constraints="keep", forbid=[(3, 2), (1, 0)])
    check_tree(s.heads, single_root=True)
    assert s.heads[1] == 2 and s.heads[4] == 2 and s.deprels[4] == "punct"
    assert s.heads[3] != 2
    with pytest.raises(DparseError, match="constraints: 'bad'"):
        parser.parse(fixed, constraints="bad")


def test_a_parser_without_constraints_refuses_them() -> None:
    class Other:  # a loaded parser without parse_constrained (every family's has one)
        decoder_name = "other"

    with pytest.raises(DparseError, match="family does not honour constraints"):
        constrained_parse(Other(), iter(()), ParseTimer(), "models/x")
    assert ConstraintSource.of(None, None) is None
