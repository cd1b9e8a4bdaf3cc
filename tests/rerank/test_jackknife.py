"""Jackknifed training forests (dparse.rerank.jackknife) on a slice of en_ewt: the fold
blocks, forests that hold the projectivized gold tree, each fold's model trained on the other
folds only, resuming by stamps, errors on stale or missing files, parallel folds."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data
from dparse.hypergraph.hypergraph import Hypergraph

from dparse.config import ExperimentConfig, load_config
from dparse.conll import Sentence, read_conll, write_conll
from dparse.errors import ConfigError, DparseError
from dparse.folds import fold_of_sentences
from dparse.hypergraph.forest_io import read_forests
from dparse.projectivize import projectivize_heads
from dparse.rerank.jackknife import (
    fold_paths,
    jackknife_forests,
    jackknife_stats,
    read_jackknife_forests,
    stamp_key,
)
from dparse.transition.shiftreduce import train
from dparse.trees import is_projective

FOLDS, N_TRAIN, N_DEV = 3, 120, 40
TWO_ROOTS = 50  # 1-based position of the training sentence given a second root word


def _conllx(sent: Sentence) -> Sentence:
    return Sentence.build(sent.form, sent.heads, sent.deprels, sent.upos, sent.xpos,
                          sent.lemma, sent.feats, fmt="conllx")


def _config(root: Path, *overrides: str) -> ExperimentConfig:
    return load_config("configs/en_ewt/sr-nonsp-b12.yaml", [
        "data.train=train.conll", "data.dev=dev.conllu", "shiftreduce.beam=4",
        "features.arc_bits=16", "features.label_bits=12", "training.epochs=2", *overrides],
        data_root=str(root))


@pytest.fixture(scope="module")
def jk(tmp_path_factory) -> dict:
    """A CoNLL-X training slice (sentence TWO_ROOTS with two root words, allowed there), a
    CoNLL-U dev slice, and one jackknife run over them (jobs=1)."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    root = tmp_path_factory.mktemp("jackknife")
    sents = [_conllx(s) for s, _ in zip(read_conll(DATA / "en_ewt/train.conllu"),
                                        range(N_TRAIN), strict=False)]
    heads = sents[TWO_ROOTS - 1].heads.copy()
    top = int(np.flatnonzero(heads == 0)[0])
    heads[int(np.flatnonzero(heads == top)[0])] = 0  # a child of the root word to the root
    sents[TWO_ROOTS - 1] = sents[TWO_ROOTS - 1].with_parse(heads, sents[TWO_ROOTS - 1].deprels)
    write_conll(sents, root / "train.conll")
    write_conll([s for s, _ in zip(read_conll(DATA / "en_ewt/dev.conllu"), range(N_DEV),
                                   strict=False)], root / "dev.conllu")
    cfg = _config(root)
    lines: list[str] = []
    paths = jackknife_forests(cfg, FOLDS, root / "work", log=lines.append)
    return {"root": root, "cfg": cfg, "sents": list(read_conll(root / "train.conll")),
            "paths": paths, "lines": lines, "work": root / "work"}


def _files(work: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(work.iterdir())}


def test_folds_are_contiguous_nearly_equal_blocks_covering_every_sentence() -> None:
    for n in range(2, 60):
        for folds in range(2, min(n, 12) + 1):
            fold_of = fold_of_sentences(n, folds)
            assert fold_of.shape == (n,) and fold_of[0] == 1 and fold_of[-1] == folds
            assert np.all(np.diff(fold_of) >= 0) and np.all(np.diff(fold_of) <= 1)
            sizes = np.bincount(fold_of)[1:]
            assert sizes.sum() == n and sizes.max() - sizes.min() <= 1
            assert np.all(np.diff(sizes) <= 0)  # the longer blocks first
    with pytest.raises(DparseError, match="3 training sentences cannot be cut into 4 folds"):
        fold_of_sentences(3, 4)
    with pytest.raises(ConfigError, match="at least 2 folds"):
        fold_of_sentences(10, 1)


@requires_data
def test_every_forest_validates_and_holds_the_projectivized_gold_tree(jk: dict) -> None:
    assert jk["paths"] == [fold_paths(jk["work"], FOLDS, k)[0] for k in (1, 2, 3)]
    assert [p.name for p in jk["paths"]] == [f"fold-0{k}-of-03.forests.gz" for k in (1, 2, 3)]
    forests = read_jackknife_forests(jk["work"], FOLDS, N_TRAIN, jk["cfg"])
    assert len(forests) == N_TRAIN
    assert [i for i, f in enumerate(forests) if f is None] == [TWO_ROOTS - 1]
    non_projective = 0
    for sent, forest in zip(jk["sents"], forests, strict=True):
        if forest is None:
            continue
        forest.validate()
        assert forest.n == len(sent)
        gold = projectivize_heads(sent.heads)
        non_projective += not is_projective(sent.heads)
        hits, _, heads, _ = Hypergraph(forest).oracle(gold)
        assert hits == len(sent) and heads.tolist() == gold.tolist()
    assert non_projective > 0  # the slice tests projectivization too
    stats = jackknife_stats(jk["work"], FOLDS)
    assert stats.forests == N_TRAIN - 1 and stats.oracle == stats.words
    assert stats.without == {"several root dependents": 1}
    assert stats.vertices == sum(f.num_vertices for f in forests if f is not None)
    assert stats.hyperedges == sum(f.num_edges for f in forests if f is not None)
    assert 0.5 * stats.words < stats.onebest < stats.words  # a real, imperfect first stage


@requires_data
def test_each_fold_is_parsed_by_a_model_trained_on_the_other_folds(jk: dict) -> None:
    fold_of = fold_of_sentences(N_TRAIN, FOLDS)
    others = [s for s, f in zip(jk["sents"], fold_of, strict=True) if f != 2]
    model = train(jk["cfg"], progress=False, sentences=others).model
    model.weights = model.weights.astype(np.float32)
    written = dict(read_forests(jk["paths"][1]))
    assert sorted(map(int, written)) == [i + 1 for i in np.flatnonzero(fold_of == 2)
                                         if i + 1 != TWO_ROOTS]
    for sid, forest in written.items():
        sent = jk["sents"][int(sid) - 1]
        _, _, direct = model.forest_encoded(model.vocab.encode(sent),
                                            projectivize_heads(sent.heads))
        assert forest.same_as(direct)


@requires_data
def test_the_log_reports_each_fold_and_the_sentence_without_a_forest(jk: dict) -> None:
    lines = jk["lines"]
    assert len(lines) == FOLDS + 1
    for k, line in enumerate(lines[:FOLDS], 1):
        assert line.startswith(f"fold {k} of {FOLDS}: trained on 80 sentences in ")
        assert "best epoch" in line and "forests" in line
    assert "39 forests, 1 without (1 several root dependents)" in lines[1]  # 41..80
    assert "40 forests, 0 without;" in lines[0] and "40 forests, 0 without;" in lines[2]
    assert lines[-1].startswith(f"all {FOLDS} folds: {N_TRAIN - 1} forests, 1 without")
    stamp = json.loads(fold_paths(jk["work"], FOLDS, 2)[1].read_text())
    assert stamp["without"] == {"several root dependents": [TWO_ROOTS]}
    assert (stamp["first"], stamp["last"]) == (41, 80)


@requires_data
def test_stamps_skip_finished_folds_and_a_changed_config_redoes_them(jk: dict,
                                                                      tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(jk["work"], work)
    before = _files(work)
    lines: list[str] = []
    assert jackknife_forests(jk["cfg"], FOLDS, work, log=lines.append) == [
        fold_paths(work, FOLDS, k)[0] for k in (1, 2, 3)]
    assert lines[:FOLDS] == [f"fold {k} of {FOLDS}: up to date ({fold_paths(work, FOLDS, k)[0]})"
                             for k in (1, 2, 3)]
    assert _files(work) == before
    unrelated = _config(jk["root"], "name=renamed", "data.test=dev.conllu", "rerank.k=9",
                        "features.order=2", "shiftreduce.force_gold=true")
    lines.clear()
    jackknife_forests(unrelated, FOLDS, work, log=lines.append)
    assert all(" up to date " in line for line in lines[:FOLDS])
    # a fold whose forests are gone, and one without its stamp (killed between the files)
    fold_paths(work, FOLDS, 1)[0].unlink()
    fold_paths(work, FOLDS, 3)[1].unlink()
    lines.clear()
    jackknife_forests(jk["cfg"], FOLDS, work, log=lines.append)
    assert sorted(line.split(": ")[0] + ": " + line.split(": ")[1].split()[0]
                  for line in lines[:FOLDS]) == [
        "fold 1 of 3: trained", "fold 2 of 3: up", "fold 3 of 3: trained"]
    assert _files(work) == before  # same inputs, same bytes
    changed = _config(jk["root"], "training.seed=7")
    lines.clear()
    assert jackknife_forests(changed, FOLDS, work, only_fold=2, log=lines.append) == [
        fold_paths(work, FOLDS, 2)[0]]
    assert len(lines) == 1 and lines[0].startswith("fold 2 of 3: trained")
    after = _files(work)
    assert after["fold-02-of-03.stamp.json"] != before["fold-02-of-03.stamp.json"]
    assert after["fold-01-of-03.forests.gz"] == before["fold-01-of-03.forests.gz"]
    with pytest.raises(DparseError, match=r"fold-01-of-03.stamp.json: stale: made with "
                                          r"another config"):
        read_jackknife_forests(work, FOLDS, N_TRAIN, changed)


@requires_data
def test_missing_stale_or_inconsistent_fold_files_are_clear_errors(jk: dict,
                                                                   tmp_path: Path) -> None:
    work = tmp_path / "work"

    def fresh() -> None:
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(jk["work"], work)

    fresh()
    with pytest.raises(DparseError, match=r"fold-01-of-03.stamp.json: stale: made for "
                                          r"sentences 1..40, but fold 1 of 121 .* is 1..41"):
        read_jackknife_forests(work, FOLDS, N_TRAIN + 1)
    with pytest.raises(DparseError, match=r"fold-01-of-04.forests.gz: missing"):
        read_jackknife_forests(work, 4, N_TRAIN)
    fold_paths(work, FOLDS, 3)[0].unlink()
    with pytest.raises(DparseError, match=r"fold-03-of-03.forests.gz: missing"):
        read_jackknife_forests(work, FOLDS, N_TRAIN)
    fresh()
    fold_paths(work, FOLDS, 2)[1].unlink()
    with pytest.raises(DparseError, match=r"fold-02-of-03.stamp.json: missing \(the fold was "
                                          r"never finished\)"):
        read_jackknife_forests(work, FOLDS, N_TRAIN)
    fresh()
    shutil.copyfile(fold_paths(work, FOLDS, 1)[0], fold_paths(work, FOLDS, 2)[0])
    with pytest.raises(DparseError, match=r"fold-02-of-03.forests.gz: changed since its stamp"):
        read_jackknife_forests(work, FOLDS, N_TRAIN)
    fresh()
    stamp = fold_paths(work, FOLDS, 3)[1]
    data = json.loads(stamp.read_text())
    data["without"] = {"no words": [81]}
    stamp.write_text(json.dumps(data))
    with pytest.raises(DparseError, match=r"fold-03-of-03.forests.gz: the forests and the "
                                          r"stamp's sentences without one do not cover"):
        read_jackknife_forests(work, FOLDS, N_TRAIN)
    data["without"] = {}
    data["last"] = 121
    stamp.write_text(json.dumps(data))
    with pytest.raises(DparseError, match="stale: made for sentences 81..121"):
        read_jackknife_forests(work, FOLDS, N_TRAIN)
    with pytest.raises(ConfigError, match="must be a shift-reduce config"):
        jackknife_forests(dataclasses.replace(jk["cfg"], parser="graph"), FOLDS, work)


@requires_data
def test_parallel_folds_give_the_same_bytes_and_name_a_failing_fold(jk: dict,
                                                                    tmp_path: Path) -> None:
    lines: list[str] = []
    jackknife_forests(jk["cfg"], FOLDS, tmp_path / "par", jobs=2, log=lines.append)
    assert _files(tmp_path / "par") == _files(jk["work"])
    assert sorted(line[:12] for line in lines[:FOLDS]) == [f"fold {k} of 3:" for k in (1, 2, 3)]
    bad = tmp_path / "bad"
    fold_paths(bad, FOLDS, 2)[0].mkdir(parents=True)  # a directory where fold 2's file goes
    with pytest.raises(DparseError, match=r"^fold 2 of 3: .*fold-02-of-03.forests.gz"):
        jackknife_forests(jk["cfg"], FOLDS, bad, jobs=2)
    assert not any(p.name.startswith(".") for p in bad.iterdir())  # no temporaries left


INTERRUPTED_RUN = """
import multiprocessing, sys
from pathlib import Path
from dparse.config import load_config
from dparse.rerank.jackknife import jackknife_forests
cfg = load_config("configs/en_ewt/sr-nonsp-b12.yaml", sys.argv[3:], data_root=sys.argv[1])
try:
    jackknife_forests(cfg, 3, Path(sys.argv[2]), jobs=2)
    print("finished")
except KeyboardInterrupt:
    print("interrupted, live workers:", len(multiprocessing.active_children()))
"""


@requires_data
def test_sigint_stops_the_workers_and_leaves_only_whole_folds(jk: dict, tmp_path: Path) -> None:
    work = tmp_path / "work"
    settings = ["data.train=train.conll", "data.dev=dev.conllu", "shiftreduce.beam=4",
                "features.arc_bits=16", "features.label_bits=12", "training.epochs=12"]
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_RUN, str(jk["root"]), str(work),
                             *settings], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 60
    while not list(work.glob("*.stamp.json")) and time.monotonic() < deadline:
        time.sleep(0.01)  # the first fold done: the third is being trained
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert out.strip() == "interrupted, live workers: 0", err
    names = sorted(p.name for p in work.iterdir())
    assert not [n for n in names if n.startswith(".")]  # no temporaries
    # finished folds only (a fold stopped between its two files has forests but no stamp:
    # it is redone by the next run)
    assert 1 <= len(list(work.glob("*.stamp.json"))) < FOLDS
    for stamp in work.glob("*.stamp.json"):
        forests = stamp.with_name(stamp.name.replace(".stamp.json", ".forests.gz"))
        digest = hashlib.sha256(forests.read_bytes()).hexdigest()
        assert json.loads(stamp.read_text())["forests_sha256"] == digest


@requires_data
def test_stamp_key_holds_the_columns_setting(jk: dict) -> None:
    """data.columns decides which columns the first stage reads (with the dev file, whose
    sha256 the key holds): another setting makes other files."""
    assert stamp_key(jk["cfg"], FOLDS)["config"]["data.columns"] == "auto"
    read_all = _config(jk["root"], "data.columns=all")
    assert stamp_key(read_all, FOLDS)["config"]["data.columns"] == "all"
    assert stamp_key(read_all, FOLDS) != stamp_key(jk["cfg"], FOLDS)
