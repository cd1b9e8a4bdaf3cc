"""Search errors (dparse.search_errors, ``dparse search-errors``): Zhang and McDonald 2012, 5.4.

Tree scores equal the brute-force reference (tests/bruteforce.py) on random parts with ties and
negative scores; every exact registered decoder makes no search error on random instances nor
under a real model (its unreachable gold trees counted apart); an approximate decoder with weak
settings makes search errors, as many as a direct per-sentence computation counts; the command
line reports them (text and JSON) and turns bad input into exit status 2. The random tests run
under another seed with DPARSE_TEST_SEED=<int>.
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
from bruteforce import all_trees, best_score2, tree_score2
from conftest import DATA, requires_data
from paths import REPO

from dparse.conll import read_conll, read_treebank, write_conll
from dparse.decoders import Decoder, available_decoders, configured_decoder, get_decoder
from dparse.errors import DparseError
from dparse.graph.load import load_model
from dparse.graph.model import GraphModel
from dparse.search_errors import (
    CATEGORIES,
    Comparison,
    SearchErrorReport,
    bin_labels,
    compare_trees,
    part_scores,
    search_errors,
    tree_score,
)
from dparse.trees import is_projective, tree_mask

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = ["normal", "ties", "negative"]
SCORED = {"arc", "sib", "grand"}  # the part kinds graph models give


def random_scores(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, dict]:
    """arc [n+1, n+1] and {"sib", "grand": [n+1]^3}: normal, tied (integers in -1..1) or
    all negative."""
    shapes = {"arc": (n + 1,) * 2, "sib": (n + 1,) * 3, "grand": (n + 1,) * 3}
    if kind == "normal":
        arrays = {k: rng.normal(size=s) for k, s in shapes.items()}
    elif kind == "ties":
        arrays = {k: rng.integers(-1, 2, size=s).astype(np.float64) for k, s in shapes.items()}
    else:
        arrays = {k: -rng.exponential(2.0, size=s).round(1) for k, s in shapes.items()}
    arc = arrays.pop("arc")
    return arc, arrays


PART_SETS = [(), ("sib",), ("grand",), ("sib", "grand")]


# -- tree scores ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("names", PART_SETS)
def test_tree_score_equals_the_brute_force_reference(kind: str, names: tuple[str, ...]) -> None:
    rng = np.random.default_rng([SEED, KINDS.index(kind), len(names)])
    for n in range(1, 6):
        arc, arrays = random_scores(rng, n, kind)
        parts = {k: arrays[k] for k in names}
        trees = all_trees(n, False, False)
        scores = [tree_score(heads, arc, parts) for heads in trees]
        step = max(1, len(trees) // 150)
        for heads, score in zip(trees[::step], scores[::step], strict=True):
            want = tree_score2(heads, arc, parts.get("sib"), parts.get("grand"))
            assert score == pytest.approx(want, rel=1e-12, abs=1e-12), (n, heads.tolist())
        best = best_score2(arc, parts.get("sib"), parts.get("grand"),
                           projective=False, single_root=False)
        assert max(scores) == pytest.approx(best, rel=1e-12, abs=1e-12)


def test_part_scores_lists_one_score_per_part() -> None:
    arc = np.arange(16, dtype=np.float64).reshape(4, 4)
    sib = np.arange(64, dtype=np.float64).reshape(4, 4, 4)
    grand = 1000 + sib
    heads = np.array([-1, 2, 0, 2])  # 0 -> 2, 2 -> 1, 2 -> 3
    scores = part_scores(heads, arc, {"sib": sib, "grand": grand})
    arcs = [arc[2, 1], arc[0, 2], arc[2, 3]]
    sibs = [sib[0, 0, 2], sib[2, 2, 1], sib[2, 2, 3]]
    grands = [grand[0, 2, 1], grand[0, 2, 3]]
    assert sorted(scores.tolist()) == sorted(arcs + sibs + grands)
    assert part_scores(heads, arc, {}).tolist() == arcs


def test_part_scores_rejects_a_part_it_cannot_score() -> None:
    with pytest.raises(ValueError, match="trisib"):
        part_scores(np.array([-1, 0]), np.zeros((2, 2)), {"trisib": np.zeros((2,) * 4)})


def test_a_disallowed_arc_makes_the_tree_score_minus_infinity() -> None:
    arc = np.ones((3, 3))
    arc[1, 2] = -np.inf
    assert tree_score(np.array([-1, 0, 1]), arc, {}) == -np.inf
    assert tree_score(np.array([-1, 0, 0]), arc, {}) == 2.0


# -- categories of one sentence ------------------------------------------------------------------


def _compare(gold: list[int], predicted: list[int], arc: np.ndarray, decoder: str = "bgi",
             single_root: bool = True) -> Comparison:
    return compare_trees(np.array(gold), np.array(predicted), arc, {}, get_decoder(decoder),
                         single_root)


def test_compare_trees_categories() -> None:
    arc = np.zeros((3, 3))
    assert _compare([-1, 0, 1], [-1, 0, 1], arc).category == "correct"
    assert _compare([-1, 0, 1], [-1, 2, 0], arc).category == "ties"
    arc[0, 1] = 1.0  # gold 0 -> 1 -> 2 now outscores 0 -> 2 -> 1
    found = _compare([-1, 0, 1], [-1, 2, 0], arc)
    assert (found.category, found.gap) == ("search_errors", 1.0)
    assert _compare([-1, 2, 0], [-1, 0, 1], arc).category == "model_errors"


def test_a_tie_allows_for_rounding_but_not_more() -> None:
    gold, predicted = [-1, 0, 1, 2], [-1, 2, 3, 0]  # chain 0-1-2-3 and chain 0-3-2-1
    arc = np.zeros((4, 4))
    arc[0, 1], arc[1, 2], arc[2, 3] = 0.1, 0.2, 0.3
    arc[2, 1], arc[3, 2], arc[0, 3] = 0.3, 0.2, 0.1
    # the same three numbers summed in another order differ by rounding
    assert tree_score(np.array(gold), arc, {}) != tree_score(np.array(predicted), arc, {})
    assert _compare(gold, predicted, arc).category == "ties"
    arc[0, 3] -= 1e-7
    assert _compare(gold, predicted, arc).category == "search_errors"


def test_unreachable_gold_trees_are_no_search_errors() -> None:
    # 0 -> 2 crosses 3 -> 1: non-projective, out of reach of a projective decoder
    gold, predicted = [-1, 3, 0, 2], [-1, 0, 1, 2]
    arc = np.zeros((4, 4))
    arc[3, 1] = 5.0
    found = _compare(gold, predicted, arc, "eisner")
    assert (found.category, found.reasons, found.gold_higher) == (
        "unreachable", ("non-projective",), True)
    assert _compare(gold, predicted, arc, "cle").category == "search_errors"
    # two root children: unreachable only under single-root decoding
    arc = np.zeros((3, 3))
    arc[0, 2] = 1.0
    found = _compare([-1, 0, 0], [-1, 0, 1], arc, "cle")
    assert (found.category, found.reasons) == ("unreachable", ("multi-rooted",))
    assert _compare([-1, 0, 0], [-1, 0, 1], arc, "cle", single_root=False).category == (
        "search_errors")
    # a gold arc the model disallows (pruned)
    arc[0, 1] = -np.inf
    found = _compare([-1, 0, 0], [-1, 2, 0], arc, "cle", single_root=False)
    assert (found.category, found.reasons, found.gold_higher) == (
        "unreachable", ("disallowed",), False)
    assert found.gold_score == -np.inf
    # a prediction holding a disallowed arc when gold avoids them: a search error
    found = _compare([-1, 2, 0], [-1, 0, 1], arc, "cle", single_root=False)
    assert (found.category, found.predicted_score, found.gap) == (
        "search_errors", -np.inf, np.inf)


@pytest.mark.parametrize("kind", KINDS)
def test_exact_decoders_make_no_search_errors_on_random_scores(kind: str) -> None:
    """Every exact registered decoder whose parts a graph model gives, against every gold tree
    of small sentences: never a search error; unreachable exactly when the decoder's kind of
    tree excludes gold; the category agrees with the brute-force scores."""
    exact = [get_decoder(name) for name in available_decoders()]
    exact = [d for d in exact if d.exact and set(d.parts) <= SCORED]
    assert {"cle", "eisner", "eisner2-sib", "eisner2-sibgp"} <= {d.name for d in exact}
    rng = np.random.default_rng([SEED, 7, KINDS.index(kind)])
    for n in (1, 3, 4, 5):
        for single_root in (True, False):
            arc, arrays = random_scores(rng, n, kind)
            golds = all_trees(n, False, False)
            for decoder in exact:
                parts = {k: v for k, v in arrays.items() if k in decoder.parts}
                sib, grand = parts.get("sib"), parts.get("grand")
                predicted = decoder.decode(arc, single_root=single_root, **parts)
                best = tree_score2(predicted, arc, sib, grand)
                reachable = tree_mask(golds, single_root=single_root,
                                      projective=decoder.projective)
                for gold, ok in zip(golds, reachable, strict=True):
                    found = compare_trees(gold, predicted, arc, parts, decoder, single_root)
                    assert (found.category == "unreachable") == (not ok)
                    if ok:
                        score = tree_score2(gold, arc, sib, grand)
                        assert found.category != "search_errors", (decoder.name, gold, score)
                        assert score <= best + 1e-9
                        want = "ties" if score > best - 1e-9 else "model_errors"
                        if np.array_equal(gold, predicted):
                            want = "correct"
                        assert found.category == want


# -- counts and bins -----------------------------------------------------------------------------


def test_bin_labels() -> None:
    assert bin_labels((10, 20)) == ["1-10", "11-20", "21+"]
    assert bin_labels(()) == ["1+"]
    for bad in ((0, 5), (10, 10), (20, 10)):
        with pytest.raises(DparseError, match="increasing"):
            bin_labels(bad)


def test_report_counts_each_sentence_once_in_its_length_bin() -> None:
    report = SearchErrorReport("bgi", False, False, {}, True, ("arc",), "gold", (10, 20))
    found = [
        (1, Comparison("correct", 1.0, 1.0)),
        (10, Comparison("search_errors", 3.0, 1.0)),
        (11, Comparison("search_errors", 2.0, 1.5)),
        (20, Comparison("ties", 1.0, 1.0)),
        (21, Comparison("model_errors", 1.0, 2.0)),
        (99, Comparison("unreachable", 5.0, 1.0, ("non-projective", "multi-rooted"))),
        (5, Comparison("unreachable", -np.inf, 1.0, ("disallowed",))),
        (12, Comparison("search_errors", 1.0, -np.inf)),
    ]
    for length, comparison in found:
        report.add(length, comparison)
    total = report.as_dict()
    keys = ("sentences", *CATEGORIES, "unreachable_higher", "predicted_disallowed")
    assert {k: total[k] for k in keys} == {
        "sentences": 8, "correct": 1, "search_errors": 3, "ties": 1, "model_errors": 1,
        "unreachable": 2, "unreachable_higher": 1, "predicted_disallowed": 1}
    assert total["mean_gap"] == pytest.approx((2.0 + 0.5) / 2)  # the infinite gap left out
    assert total["unreachable_reasons"] == {"non-projective": 1, "multi-rooted": 1,
                                            "disallowed": 1}
    bins = total["bins"]
    assert [b["sentences"] for b in bins.values()] == [3, 3, 2]
    assert [b["search_errors"] for b in bins.values()] == [1, 2, 0]
    assert bins["11-20"]["mean_gap"] == 0.5 and bins["11-20"]["predicted_disallowed"] == 1
    assert bins["21+"]["mean_gap"] is None
    json.dumps(total)  # JSON-ready


# -- a real model ----------------------------------------------------------------------------------


def dparse(*args: str) -> subprocess.CompletedProcess:
    """``python -m dparse ARGS`` from the repository, without debug tracebacks."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO),
                                                        os.environ.get("PYTHONPATH", "")])}
    env.pop("DPARSE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny first- and second-order models trained one epoch by ``dparse train`` on 200
    sentences of en_ewt dev, and the next 160 dev sentences as a gold file."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = tmp_path_factory.mktemp("search_errors")
    dev = read_conll(DATA / "en_ewt" / "dev.conllu")
    write_conll(islice(dev, 200), folder / "train.conllu")
    write_conll(islice(dev, 160), folder / "gold.conllu")
    common = "data:\n  train: train.conllu\ntraining:\n  epochs: 1\n"
    (folder / "o1.yaml").write_text(
        common + "features:\n  arc_bits: 16\n  label_bits: 12\ndecoder:\n  name: cle\n",
        encoding="utf-8")
    (folder / "o2.yaml").write_text(
        common + "features:\n  order: 2\n  arc_bits: 16\n  label_bits: 12\n  sib_bits: 14\n"
        "  grand_bits: 14\npruner:\n  epochs: 1\n  arc_bits: 16\n  label_bits: 12\n"
        "decoder:\n  name: dd2\n  options:\n    max_iter: 50\n",
        encoding="utf-8")
    for name in ("o1", "o2"):
        run = dparse("train", str(folder / f"{name}.yaml"), "--out", str(folder / name),
                     "--data-root", str(folder), "--quiet")
        assert run.returncode == 0, run.stderr
    return folder


def direct_counts(model: GraphModel, gold_file: Path, decoder: Decoder) -> dict[str, int]:
    """Search errors and unreachable gold trees, sentence by sentence with the naive scores of
    tests/bruteforce.py (single-root decoding)."""
    counts = {"sentences": 0, "search_errors": 0, "unreachable": 0}
    for sent in read_conll(gold_file):
        enc = model.vocab.encode(sent)
        arc, _, parts = model.score_parts(enc, None, False)
        parts = {k: v for k, v in parts.items() if k in decoder.parts}
        predicted = decoder.decode(arc, single_root=True, **parts)
        sib, grand = parts.get("sib"), parts.get("grand")
        gold_score = tree_score2(enc.heads, arc, sib, grand)
        predicted_score = tree_score2(predicted, arc, sib, grand)
        reachable = (np.isfinite(gold_score) and np.count_nonzero(enc.heads[1:] == 0) == 1
                     and (is_projective(enc.heads) or not decoder.projective))
        counts["sentences"] += 1
        if not reachable:
            counts["unreachable"] += 1
        elif gold_score > predicted_score + 1e-6:
            counts["search_errors"] += 1
    return counts


def _counts(report: SearchErrorReport) -> dict[str, int]:
    total = report.total
    return {"sentences": total.sentences, "search_errors": total.search_errors,
            "unreachable": total.unreachable}


@requires_data
@pytest.mark.parametrize(("model_name", "decoder"), [
    ("o1", "cle"), ("o1", "eisner"), ("o2", "eisner2-sibgp"), ("o2", "eisner2-sib"),
    ("o2", "cle")])
def test_exact_decoders_make_no_search_errors_under_a_real_model(
    folder: Path, model_name: str, decoder: str
) -> None:
    report = search_errors(folder / model_name, folder / "gold.conllu", decoder)
    total = report.total
    assert total.sentences == 160 and total.search_errors == 0
    assert sum(getattr(total, c) for c in CATEGORIES) == 160
    assert total.correct > 0 and total.model_errors > 0
    assert _counts(report) == direct_counts(load_model(folder / model_name),
                                            folder / "gold.conllu", get_decoder(decoder))
    gold = read_treebank(folder / "gold.conllu")
    non_projective = sum(not is_projective(s.heads) for s in gold)
    assert non_projective > 0  # the slice holds some: unreachable for projective decoders
    assert report.reasons["non-projective"] == (non_projective if report.projective else 0)
    assert report.parts == (("arc",) if model_name == "o1" else
                            ("arc", *sorted(set(get_decoder(decoder).parts[1:]))))


@requires_data
@pytest.mark.parametrize(("decoder", "options"), [
    ("dd2", {"max_iter": 1}), ("bgi", {}), ("bgi-pp", {})])
def test_weak_approximate_decoders_count_as_a_direct_computation(
    folder: Path, decoder: str, options: dict
) -> None:
    report = search_errors(folder / "o2", folder / "gold.conllu", decoder, options)
    want = direct_counts(load_model(folder / "o2"), folder / "gold.conllu",
                         configured_decoder(decoder, options))
    assert _counts(report) == want
    assert report.total.search_errors > 0 and report.total.mean_gap > 0
    assert report.options == options and report.parts == ("arc", "grand", "sib")
    bins = report.bins.values()
    assert sum(b.search_errors for b in bins) == report.total.search_errors
    assert sum(b.sentences for b in bins) == 160


@requires_data
def test_the_saved_decoder_and_options_are_the_default(folder: Path) -> None:
    saved = search_errors(folder / "o2", folder / "gold.conllu")
    assert (saved.decoder, saved.options, saved.single_root) == ("dd2", {"max_iter": 50}, True)
    named = search_errors(folder / "o2", folder / "gold.conllu", "dd2",
                          overrides=["decoder.options.max_iter=1"])
    assert named.options == {"max_iter": 1}
    # another decoder starts from no options (dd2's max_iter would be rejected by bgi)
    other = search_errors(folder / "o2", folder / "gold.conllu", "bgi")
    loaded = search_errors(load_model(folder / "o2"), folder / "gold.conllu", "bgi")
    assert other.options == {} and other.as_dict() == loaded.as_dict()
    several = search_errors(folder / "o2", folder / "gold.conllu", "cle",
                            overrides=["decoder.single_root=false"])
    assert not several.single_root and several.total.search_errors == 0
    with pytest.raises(DparseError, match="decoder name"):
        search_errors(load_model(folder / "o2"), folder / "gold.conllu")


@requires_data
def test_command_line_json_and_text(folder: Path) -> None:
    model, gold = str(folder / "o2"), str(folder / "gold.conllu")
    run = dparse("search-errors", model, gold, "--decoder", "dd2",
                 "--set", "decoder.options.max_iter=1", "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert set(report) >= {"decoder", "exact", "projective", "options", "single_root", "parts",
                           "gold", "sentences", *CATEGORIES, "unreachable_higher",
                           "predicted_disallowed", "search_error_percent", "mean_gap",
                           "unreachable_reasons", "bins"}
    want = search_errors(folder / "o2", gold, "dd2", {"max_iter": 1}).as_dict()
    assert report == json.loads(json.dumps(want))
    assert list(report["bins"]) == ["1-10", "11-20", "21-30", "31-40", "41+"]
    text = dparse("search-errors", model, gold, "--decoder", "bgi", "--bins", "15")
    assert text.returncode == 0, text.stderr
    assert "search errors of bgi (approximate, non-projective" in text.stdout
    assert "\n    1-15 " in text.stdout and "\n     16+ " in text.stdout
    assert "\n   total " in text.stdout


@requires_data
def test_command_line_bad_input_exits_2(folder: Path, tmp_path: Path) -> None:
    model = str(folder / "o2")
    cycle = tmp_path / "cycle.conllu"
    cycle.write_text("# a cycle\n1\tA\ta\tX\tX\t_\t2\tdep\t_\t_\n"
                     "2\tB\tb\tX\tX\t_\t1\tdep\t_\t_\n\n", encoding="utf-8")
    runs = {
        "cycle": dparse("search-errors", model, str(cycle)),
        "decoder": dparse("search-errors", model, str(folder / "gold.conllu"),
                          "--decoder", "no-such-decoder"),
        "option": dparse("search-errors", model, str(folder / "gold.conllu"),
                         "--set", "decoder.options.beam=2"),
        "bins": dparse("search-errors", model, str(folder / "gold.conllu"), "--bins", "9,3"),
        "model": dparse("search-errors", str(tmp_path), str(folder / "gold.conllu")),
    }
    for what, run in runs.items():
        assert run.returncode == 2, (what, run.stderr)
        assert "Traceback" not in run.stderr
    assert f"{cycle}:1: gold sentence is not a tree" in runs["cycle"].stderr
    assert "cycle through words [1, 2]" in runs["cycle"].stderr
    assert "no-such-decoder" in runs["decoder"].stderr
    assert "beam" in runs["option"].stderr and "dd2" in runs["option"].stderr
    assert "--bins" in runs["bins"].stderr
    assert f"{tmp_path}: not a dparse model directory" in runs["model"].stderr
