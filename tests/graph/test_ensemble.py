"""dparse.graph.ensemble and ``dparse ensemble``: parser combination by biased decoding
(Tchernowitz et al. 2016, Section 7).

Biasing raises exactly the parts of the other tree (checked against the naive part lists of
tests/bruteforce.py and through tree scores), keeps pruned arcs pruned and leaves its inputs
alone; with gamma 0 the command reproduces ``dparse parse``, with a huge gamma an exact decoder
returns the other tree; mismatching files exit 2 naming the other file and line. The CLI runs
on a tiny first-order model trained on a slice of en_ewt (a few seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bruteforce import all_trees, second_order_parts, tree_score2
from conftest import requires_data
from paths import REPO

from dparse.config import load_config
from dparse.conll import Sentence, read_conll, read_treebank, write_conll
from dparse.decoders import get_decoder
from dparse.errors import InputError
from dparse.graph.ensemble import aligned, bias_parts, decode_scored, ensemble_parse, tree_parts
from dparse.graph.training import train
from dparse.trees import check_tree, is_projective

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))


def random_heads(rng: np.random.Generator, n: int) -> np.ndarray:
    """Any heads array of n words, each with a head in 0..n other than itself (not necessarily
    a tree): int32 [n+1]."""
    heads = rng.integers(0, n, size=n + 1).astype(np.int32)
    heads += heads >= np.arange(n + 1)  # skip the word itself
    heads[0] = -1
    return heads


def random_scores(rng: np.random.Generator, n: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    shape = (n + 1,) * 3
    return rng.normal(size=(n + 1, n + 1)), {"sib": rng.normal(size=shape),
                                             "grand": rng.normal(size=shape)}


# -- the parts of a tree, and biasing -----------------------------------------------------------


def test_tree_parts_match_the_naive_lists() -> None:
    rng = np.random.default_rng([SEED, 1])
    for n in [1, 2, 3, 5, 8, 13, 30]:
        for _ in range(20):
            heads = random_heads(rng, n)
            (sh, sm, ss), (gg, gh, gm) = tree_parts(heads)
            sib, grand = second_order_parts(heads)
            got_sib = list(zip(sh.tolist(), sm.tolist(), ss.tolist(), strict=True))
            got_grand = list(zip(gg.tolist(), gh.tolist(), gm.tolist(), strict=True))
            assert sorted(got_sib) == sorted(sib) and len(got_sib) == n
            assert sorted(got_grand) == sorted(grand)


def test_bias_raises_exactly_the_parts_of_the_other_tree() -> None:
    rng = np.random.default_rng([SEED, 2])
    for n in [1, 2, 4, 9, 20]:
        arc, parts = random_scores(rng, n)
        before = (arc.copy(), {k: v.copy() for k, v in parts.items()})
        other = random_heads(rng, n)
        biased, out = bias_parts(arc, parts, [other], 0.75, 0.3)
        # the inputs are left alone
        assert np.array_equal(arc, before[0])
        assert all(np.array_equal(parts[k], before[1][k]) for k in parts)
        want_arc = np.zeros_like(arc)
        want_arc[other[1:], np.arange(1, n + 1)] = 0.75
        assert np.allclose(biased - arc, want_arc, rtol=0, atol=1e-12)
        sib, grand = second_order_parts(other)
        for name, raised in (("sib", sib), ("grand", grand)):
            want = np.zeros_like(parts[name])
            for p in raised:
                want[p] = 0.3
            assert np.allclose(out[name] - parts[name], want, rtol=0, atol=1e-12), name


def test_bias_adds_gamma_per_shared_part_to_every_tree_score() -> None:
    # score'(T) - score(T) = gamma1 * |arcs shared with T_o| + gamma2 * |parts shared with T_o|
    rng = np.random.default_rng([SEED, 3])
    n = 5
    arc, parts = random_scores(rng, n)
    trees = all_trees(n, False, False)
    other = trees[rng.integers(len(trees))]
    biased, out = bias_parts(arc, parts, [other], 1.5, 0.2)
    sib_o, grand_o = map(set, second_order_parts(other))
    for heads in trees[rng.choice(len(trees), 200, replace=False)]:
        arcs = int((heads[1:] == other[1:]).sum())
        sib, grand = second_order_parts(heads)
        shared = len(sib_o.intersection(sib)) + len(grand_o.intersection(grand))
        gain = tree_score2(heads, biased, **out) - tree_score2(heads, arc, **parts)
        assert gain == pytest.approx(1.5 * arcs + 0.2 * shared, abs=1e-9)


def test_several_other_trees_each_raise_their_parts() -> None:
    # raising by trees A and B at once = raising by A, then by B; no trees: a plain copy
    rng = np.random.default_rng([SEED, 6])
    for n in [1, 3, 8, 15]:
        arc, parts = random_scores(rng, n)
        arc[rng.random(arc.shape) < 0.2] = -np.inf
        a, b = random_heads(rng, n), random_heads(rng, n)
        both_arc, both = bias_parts(arc, parts, [a, b, a], 0.5, 0.25)
        step_arc, step = bias_parts(arc, parts, [a], 0.5, 0.25)
        step_arc, step = bias_parts(step_arc, step, [b], 0.5, 0.25)
        step_arc, step = bias_parts(step_arc, step, [a], 0.5, 0.25)
        assert np.array_equal(both_arc, step_arc)
        assert all(np.allclose(both[k], step[k], rtol=0, atol=1e-12) for k in parts)
        m = np.arange(1, n + 1)
        shared = (a[1:] == b[1:]) & np.isfinite(arc[a[1:], m])
        assert np.allclose(both_arc[a[1:], m][shared] - arc[a[1:], m][shared], 1.5)
        plain_arc, plain = bias_parts(arc, parts, [], 0.5, 0.25)
        assert np.array_equal(plain_arc, arc) and plain_arc is not arc
        assert all(np.array_equal(plain[k], parts[k]) for k in parts)


def test_pruned_arcs_stay_pruned_and_their_parts_unraised() -> None:
    n = 4
    rng = np.random.default_rng([SEED, 4])
    arc, parts = random_scores(rng, n)
    other = np.array([-1, 2, 0, 2, 3], dtype=np.int32)  # 0 -> 2 -> {1, 3}, 3 -> 4
    arc[2, 3] = -np.inf  # an arc of the other tree the model pruned
    biased, out = bias_parts(arc, parts, [other], 1.0, 1.0)
    assert biased[2, 3] == -np.inf and biased[2, 1] == arc[2, 1] + 1.0
    assert out["sib"][2, 1, 3] == parts["sib"][2, 1, 3]  # left 1, right 3: not siblings here
    assert out["sib"][2, 2, 3] == parts["sib"][2, 2, 3]  # holds 2 -> 3
    assert out["grand"][2, 3, 4] == parts["grand"][2, 3, 4]  # holds 2 -> 3
    assert out["grand"][0, 2, 1] == parts["grand"][0, 2, 1] + 1.0
    assert out["sib"][2, 2, 1] == parts["sib"][2, 2, 1] + 1.0
    assert out["sib"][3, 3, 4] == parts["sib"][3, 3, 4] + 1.0


def test_bias_of_first_order_scores_and_bad_trees() -> None:
    arc = np.zeros((4, 4))
    biased, out = bias_parts(arc, {}, [np.array([-1, 0, 1, 1])], 2.0, 5.0)
    assert out == {} and biased[0, 1] == biased[1, 2] == biased[1, 3] == 2.0
    assert biased.sum() == 6.0
    with pytest.raises(ValueError, match="words"):
        bias_parts(arc, {}, [np.array([-1, 0, 1])], 1.0, 1.0)
    with pytest.raises(ValueError, match="out of range"):
        bias_parts(arc, {}, [np.array([-1, 0, -1, 1])], 1.0, 1.0)
    with pytest.raises(ValueError, match="its own head"):
        bias_parts(arc, {}, [np.array([-1, 0, 2, 1])], 1.0, 1.0)


@pytest.mark.parametrize(("name", "projective"), [("cle", False), ("eisner2-sibgp", True),
                                                  ("dd2", False)])
def test_a_large_gamma_makes_a_decoder_return_the_other_tree(name: str, projective: bool) -> None:
    rng = np.random.default_rng([SEED, 5])
    decoder = get_decoder(name)
    for n in [3, 6, 7]:
        trees = all_trees(n, projective, True)
        for _ in range(5):
            arc, parts = random_scores(rng, n)
            other = trees[rng.integers(len(trees))]
            biased, out = bias_parts(arc, parts, [other], 100.0, 100.0)
            label = np.zeros((n + 1, n + 1), dtype=np.int32)
            heads, labels = decode_scored(decoder, biased, label, out)
            assert heads.tolist() == other.tolist()
            assert labels.tolist() == [-1] + [0] * n


# -- aligned streams ------------------------------------------------------------------------------


def _conllu(path: Path, sentences: list[list[str]]) -> Path:
    write_conll([Sentence.build(words, heads=[-1, *range(len(words))]) for words in sentences],
                path)
    return path


def test_aligned_names_the_other_file_and_line(tmp_path: Path) -> None:
    a = _conllu(tmp_path / "a.conllu", [["A", "b"], ["c", "d", "e"], ["f"]])

    def pairs(other: list[list[str]]) -> list:
        b = _conllu(tmp_path / "b.conllu", other)
        return list(aligned(read_conll(a), read_conll(b)))

    assert len(pairs([["A", "b"], ["c", "d", "e"], ["f"]])) == 3
    with pytest.raises(InputError, match=r"b\.conllu:6: .*sentence 2 word 3 is 'X' but the "
                                         r"input \(.*a\.conllu:6\) has 'e'"):
        pairs([["A", "b"], ["c", "d", "X"], ["f"]])
    with pytest.raises(InputError, match=r"b\.conllu:4: .*sentence 2 has 2 words but the input "
                                         r"\(.*a\.conllu:4\) has 3"):
        pairs([["A", "b"], ["c", "d"], ["f"]])
    with pytest.raises(InputError, match=r"a\.conllu:8: sentence 3 has no counterpart .*2 "):
        pairs([["A", "b"], ["c", "d", "e"]])
    with pytest.raises(InputError, match=r"b\.conllu:10: other parse sentence 4 has no "):
        pairs([["A", "b"], ["c", "d", "e"], ["f"], ["g"]])
    loop = _conllu(tmp_path / "loop.conllu", [["A", "b"], ["c", "d", "e"], ["f"]])
    loop.write_text(loop.read_text().replace("3\te\t_\t_\t_\t_\t2", "3\te\t_\t_\t_\t_\t3"))
    with pytest.raises(InputError, match=r"loop\.conllu:6: .*sentence 2 word 3 is its own head"):
        list(aligned(read_conll(a), read_conll(loop)))


def test_aligned_checks_every_other_stream(tmp_path: Path) -> None:
    a = _conllu(tmp_path / "a.conllu", [["A", "b"], ["c"]])
    b = _conllu(tmp_path / "b.conllu", [["A", "b"], ["c"]])
    rows = list(aligned(read_conll(a), read_conll(b), read_conll(b)))
    assert [[s.form for s in row] for row in rows] == [[["A", "b"]] * 3, [["c"]] * 3]
    assert [[s.form for s in row] for row in aligned(read_conll(a))] == [[["A", "b"]], [["c"]]]
    bad = _conllu(tmp_path / "bad.conllu", [["A", "b"], ["Z"]])
    with pytest.raises(InputError, match=r"bad\.conllu:4: .*sentence 2 word 1 is 'Z'"):
        list(aligned(read_conll(a), read_conll(b), read_conll(bad)))
    longer = _conllu(tmp_path / "longer.conllu", [["A", "b"], ["c"], ["d"]])
    with pytest.raises(InputError, match=r"longer\.conllu:6: other parse sentence 3 has no "):
        list(aligned(read_conll(a), read_conll(b), read_conll(longer)))


# -- the command line -----------------------------------------------------------------------------


def dparse(*args: str) -> subprocess.CompletedProcess:
    """``python -m dparse ARGS`` from the repository, without debug tracebacks."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("DPARSE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, tiny_first_order: Path) -> Path:
    """A folder with the session's tiny first-order model (``model``, trained on 300 en_ewt
    sentences, ``ensemble.gamma1`` 0.5 in its config), its training file, 40 dev sentences
    (``dev.conllu``) and their parse by that model with cle (``cle.conllu``)."""
    folder = tmp_path_factory.mktemp("ensemble")
    for name in ("model", "train.conllu", "dev.conllu"):
        (folder / name).symlink_to(tiny_first_order / name)
    run = dparse("parse", str(folder / "model"), str(folder / "dev.conllu"), "-o",
                 str(folder / "cle.conllu"))
    assert run.returncode == 0, run.stderr
    return folder


@requires_data
def test_second_order_model_in_process(tiny: Path) -> None:
    """A tiny second-order model: gamma 0 parses as the model does; a large gamma returns the
    gold tree where the pruner keeps it and it is projective (eisner2-sibgp is exact)."""
    cfg = load_config(raw={"name": "tiny2", "data": {"train": "train.conllu"},
                           "features": {"order": 2, "arc_bits": 16, "label_bits": 12,
                                        "sib_bits": 14, "grand_bits": 14},
                           "pruner": {"epochs": 1, "arc_bits": 16, "label_bits": 12},
                           "decoder": {"name": "eisner2-sibgp"}, "training": {"epochs": 1}},
                      data_root=str(tiny))
    model = train(cfg, progress=False).model
    dev = read_treebank(tiny / "dev.conllu")
    decoder = get_decoder("eisner2-sibgp")
    plain = [s.heads.tolist() for s in model.parse(dev, decoder)]
    same = [s.heads.tolist() for s in ensemble_parse(model, dev, [dev], decoder, 0.0, 0.0)]
    assert same == plain
    kept = [s for s in dev if is_projective(s.heads) and all(
        model.pruner.allowed(model.vocab.encode(s))[s.heads[1:], np.arange(1, len(s) + 1)])]
    assert len(kept) >= 10
    follow = ensemble_parse(model, kept, [kept], decoder, 0.0, 50.0)  # second-order parts only
    assert [s.heads.tolist() for s in follow] == [s.heads.tolist() for s in kept]


@requires_data
def test_gamma_zero_reproduces_parse(tiny: Path, tmp_path: Path) -> None:
    model, dev = str(tiny / "model"), str(tiny / "dev.conllu")
    for decoder in ("cle", "bgi-pp"):
        run = dparse("ensemble", model, dev, "--other", dev, "--gamma1", "0", "--gamma2", "0",
                     "--decoder", decoder, "-o", str(tmp_path / "ens.conllu"))
        assert run.returncode == 0, run.stderr
        plain = dparse("parse", model, dev, "--decoder", decoder)
        assert (tmp_path / "ens.conllu").read_text(encoding="utf-8") == plain.stdout


@requires_data
def test_a_large_gamma_follows_the_other_parse(tiny: Path) -> None:
    dev = tiny / "dev.conllu"
    run = dparse("ensemble", str(tiny / "model"), str(dev), "--other", str(dev),
                 "--decoder", "cle", "--gamma1", "1000")
    assert run.returncode == 0, run.stderr
    gold = read_treebank(dev)
    (tiny / "follow.conllu").write_text(run.stdout, encoding="utf-8")
    parsed = read_treebank(tiny / "follow.conllu")
    assert [s.heads.tolist() for s in parsed] == [s.heads.tolist() for s in gold]
    assert any(s.deprels != g.deprels for s, g in zip(parsed, gold, strict=True))  # model labels


@requires_data
def test_several_others_vote(tiny: Path, tmp_path: Path) -> None:
    """Two copies of gold against one cle parse, each with a gamma that alone cannot outvote
    the other: the output follows the pair (2 gamma beats gamma + the model's margin)."""
    dev, cle = str(tiny / "dev.conllu"), str(tiny / "cle.conllu")
    common = ("ensemble", str(tiny / "model"), dev, "--decoder", "cle", "--gamma1", "1000")
    run = dparse(*common, "--other", dev, "--other", cle, "--other", dev)
    assert run.returncode == 0, run.stderr
    (tmp_path / "vote.conllu").write_text(run.stdout, encoding="utf-8")
    gold = read_treebank(dev)
    assert [s.heads.tolist() for s in read_treebank(tmp_path / "vote.conllu")] == \
        [s.heads.tolist() for s in gold]
    run = dparse(*common, "--other", cle, "--other", dev, "--other", cle, "--other-seconds", "2")
    assert run.returncode == 0, run.stderr
    assert "with the other parsers' 2.00s" in run.stderr
    (tmp_path / "vote.conllu").write_text(run.stdout, encoding="utf-8")
    assert [s.heads.tolist() for s in read_treebank(tmp_path / "vote.conllu")] == \
        [s.heads.tolist() for s in read_treebank(cle)]


@requires_data
def test_default_decoder_summary_and_other_seconds(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "ens.conllu"
    run = dparse("ensemble", str(tiny / "model"), str(tiny / "dev.conllu"), "--other",
                 str(tiny / "cle.conllu"), "-o", str(out), "--other-seconds", "1.5", "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stderr.strip().splitlines()[-1])
    assert summary["decoder"] == "bgi-pp" and summary["gamma1"] == 0.5  # from the config
    assert summary["gamma2"] == 0.25 and summary["sentences"] == 40
    assert summary["other_seconds"] == 1.5
    total = summary["tokens"] / (summary["seconds"] + 1.5)
    assert summary["tokens_per_second_with_other"] == pytest.approx(total, rel=0.01)
    parsed = read_treebank(out)
    for sent in parsed:
        check_tree(sent.heads, single_root=True)
    text = dparse("ensemble", str(tiny / "model"), str(tiny / "dev.conllu"), "--other",
                  str(tiny / "cle.conllu"), "--other-seconds", "1.5", "--set",
                  "ensemble.options.beta=0.3")
    assert text.returncode == 0, text.stderr
    assert "tokens/sec (scoring" in text.stderr and "with the other parser's 1.50s" in text.stderr


@requires_data
def test_mismatching_files_exit_2_naming_file_and_line(tiny: Path, tmp_path: Path) -> None:
    sents = read_treebank(tiny / "cle.conllu")
    sent = sents[30]
    form = list(sent.form)
    form[2] = "CHANGED"
    sents[30] = Sentence.build(form, heads=sent.heads, deprels=sent.deprels)
    write_conll(sents, tmp_path / "other.conllu")
    out = tmp_path / "ens.conllu"
    run = dparse("ensemble", str(tiny / "model"), str(tiny / "dev.conllu"), "--other",
                 str(tmp_path / "other.conllu"), "-o", str(out))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    line = read_treebank(tmp_path / "other.conllu")[30].line_of(3)
    assert f"other.conllu:{line}: other parse sentence 31 word 3 is 'CHANGED'" in run.stderr
    assert not out.exists()  # written whole or not at all
    write_conll(sents[:20], tmp_path / "short.conllu")
    run = dparse("ensemble", str(tiny / "model"), str(tiny / "dev.conllu"), "--other",
                 str(tmp_path / "short.conllu"))
    assert run.returncode == 2 and "sentence 21 has no counterpart" in run.stderr


@requires_data
@pytest.mark.parametrize(("args", "message"), [
    (["--decoder", "nope"], "ensemble.decoder: unknown decoder 'nope'"),
    (["--set", "ensemble.options.gama=1"], "ensemble.options {'gama': 1} rejected"),
    (["--gamma1", "-1"], "ensemble.gamma1"),
])
def test_bad_settings_exit_2(tiny: Path, args: list[str], message: str) -> None:
    dev = str(tiny / "dev.conllu")
    run = dparse("ensemble", str(tiny / "model"), dev, "--other", dev, *args)
    assert run.returncode == 2 and message in run.stderr, run.stderr


def test_missing_other_is_a_usage_error(tmp_path: Path) -> None:
    run = dparse("ensemble", str(tmp_path), str(tmp_path), "--other", str(tmp_path / "no"))
    assert run.returncode == 2 and "Usage" in run.stderr
