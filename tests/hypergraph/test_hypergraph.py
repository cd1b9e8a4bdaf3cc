"""The hypergraph library (dparse/hypergraph, its hypergraph.pyx) and ``dparse forest``.

Random small forests are built the way an arc-standard parser's forests look (a vertex per
(span, head) with random duplicates standing for distinct parser states, hyperedges per split,
random dropout, a unary goal hyperedge adding the root arc), so they are spurious: one tree can
have several derivations. Every derivation of the goal is enumerated in Python, independently
of the Cython code, and Viterbi, k-best, the forest oracle and counting are checked against it
on normal, tied and negative scores. The suite runs under another seed with
DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from dparse.hypergraph.hypergraph import EdgeBonusCombiner, ForestCube, Hypergraph
from paths import REPO

from dparse.cli.forest import forest_command
from dparse.errors import DparseError, InputError
from dparse.hypergraph import Forest
from dparse.hypergraph.forest_io import MAGIC, read_forests, write_forests
from dparse.trees import check_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = ["normal", "ties", "negative"]


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded by DPARSE_TEST_SEED and the test's name."""
    return np.random.default_rng([SEED, *request.node.name.encode()])


def random_scores(rng: np.random.Generator, size: int, kind: str) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=size)
    if kind == "ties":
        return rng.integers(-1, 2, size=size).astype(np.float64)
    return -rng.exponential(2.0, size=size).round(1)


def random_forest(rng: np.random.Generator, n: int, kind: str = "normal", keep: float = 0.6,
                  copies: int = 2, labeled: bool = False) -> Forest:
    """A random valid forest of n words (see the module docstring)."""
    while True:
        verts: list[tuple[int, int, int]] = []  # (first, last, head) of each vertex id
        by_key: dict[tuple[int, int, int], list[int]] = {}
        edges: list[tuple[int, int, int, int, int]] = []  # (vertex, tail0, tail1, h, m)
        for length in range(1, n + 1):
            for i in range(1, n - length + 2):
                j = i + length - 1
                for h in range(i, j + 1):
                    for _ in range(int(rng.integers(1, copies + 1))):
                        mine = []
                        if length == 1:
                            mine.append((-1, -1, -1, -1))
                        for k, m in itertools.product(range(i, j), range(i, j + 1)):
                            if m == h or (h <= k) != (m > k):
                                continue  # m must be in the other half
                            left = by_key.get((i, k, h if h <= k else m), [])
                            right = by_key.get((k + 1, j, m if h <= k else h), [])
                            for a, b in itertools.product(left, right):
                                if rng.random() < keep:
                                    mine.append((a, b, h, m))
                        if mine:
                            v = len(verts)
                            verts.append((i, j, h))
                            by_key.setdefault((i, j, h), []).append(v)
                            edges.extend((v, *e) for e in mine)
        tops = [v for v, (i, j, _) in enumerate(verts) if (i, j) == (1, n)]
        if tops:
            break
    goal = len(verts)
    verts.append((0, n, 0))
    chosen = [v for v in tops if rng.random() < keep] or tops[:1]
    edges.extend((goal, v, -1, 0, verts[v][2]) for v in chosen)
    E = len(edges)
    ed = np.array(edges, dtype=np.int32).reshape(E, 5)
    vs = np.array(verts, dtype=np.int32)
    labels = np.where(ed[:, 4] >= 0, rng.integers(0, 3, size=E), -1).astype(np.int32)
    forest = Forest(n=n, vertex_span=np.ascontiguousarray(vs[:, :2]),
                    vertex_head=np.ascontiguousarray(vs[:, 2]),
                    edge_head=np.ascontiguousarray(ed[:, 0]),
                    edge_tails=np.ascontiguousarray(ed[:, 1:3]),
                    edge_arc=np.ascontiguousarray(ed[:, 3:5]),
                    edge_score=random_scores(rng, E, kind), goal=goal,
                    edge_label=labels if labeled else None)
    forest.validate()
    return forest


def enumerate_derivations(forest: Forest) -> list[tuple[float, frozenset[int], tuple[int, ...]]]:
    """Every derivation of the goal: (score, its hyperedges, its heads array as a tuple)."""
    by_vertex: dict[int, list[tuple[float, frozenset[int], dict[int, int]]]] = {}
    for v in range(forest.num_vertices):
        out = []
        for e in np.flatnonzero(forest.edge_head == v):
            tails = [int(t) for t in forest.edge_tails[e] if t >= 0]
            h, m = (int(x) for x in forest.edge_arc[e])
            for parts in itertools.product(*(by_vertex[t] for t in tails)):
                arcs = {m: h} if m >= 0 else {}
                edges = {int(e)}
                score = float(forest.edge_score[e])
                for s, es, a in parts:
                    score += s
                    edges |= es
                    assert not arcs.keys() & a.keys(), "a word gets two heads"
                    arcs.update(a)
                out.append((score, frozenset(edges), arcs))
        by_vertex[v] = out
    result = []
    for score, edges, arcs in by_vertex[forest.goal]:
        heads = [-1] + [arcs[m] for m in range(1, forest.n + 1)]
        result.append((score, edges, tuple(heads)))
    return result


def forests(rng: np.random.Generator, kind: str, count: int = 12, labeled: bool = False):
    """Random forests of 1..5 words small enough to enumerate, with their derivations."""
    made = 0
    while made < count:
        n = int(rng.integers(1, 6))
        forest = random_forest(rng, n, kind, keep=0.5 if n < 5 else 0.3, labeled=labeled)
        if Hypergraph(forest).count_derivations() > 3000:
            continue
        made += 1
        yield forest, enumerate_derivations(forest)


# ---------------------------------------------------------------- the Forest class


def test_forest_validate_accepts_random_forests_and_every_tree_is_projective(rng):
    for _, derivs in forests(rng, "normal"):
        for _, _, heads in derivs:
            check_tree(np.array(heads), single_root=True, projective=True)


def _tiny() -> Forest:
    """Two words, both trees: 1 -> 2 (score 1) and 2 -> 1 (score 2)."""
    i32 = lambda *rows: np.array(rows, dtype=np.int32)  # noqa: E731
    return Forest(n=2, vertex_span=i32([1, 1], [2, 2], [1, 2], [1, 2], [0, 2]),
                  vertex_head=i32(1, 2, 1, 2, 0), edge_head=i32(0, 1, 2, 3, 4, 4),
                  edge_tails=i32([-1, -1], [-1, -1], [0, 1], [0, 1], [2, -1], [3, -1]),
                  edge_arc=i32([-1, -1], [-1, -1], [1, 2], [2, 1], [0, 1], [0, 2]),
                  edge_score=np.array([0.0, 0.0, 1.0, 2.0, 0.0, 0.0]), goal=4)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("n", 0, "positive"),
    ("goal", 3, "goal vertex 3"),
    ("edge_head", np.array([0, 1, 3, 2, 4, 4], np.int32), "decreases"),
    ("edge_head", np.array([0, 0, 2, 3, 4, 4], np.int32), "vertex 1 has no hyperedge"),
    ("edge_tails", np.array([[-1, -1], [-1, -1], [0, 1], [1, 0], [2, -1], [3, -1]], np.int32),
     "overlap"),
    ("edge_tails", np.array([[-1, -1], [-1, -1], [0, 1], [0, 1], [-1, 2], [3, -1]], np.int32),
     "padded"),
    ("edge_tails", np.array([[-1, -1], [-1, -1], [0, 1], [0, 1], [4, -1], [3, -1]], np.int32),
     "topological"),
    ("edge_arc", np.array([[-1, -1], [-1, -1], [1, 2], [1, 2], [0, 1], [0, 2]], np.int32),
     "arc must go"),
    ("edge_arc", np.array([[-1, -1], [-1, -1], [1, 2], [2, 1], [0, 1], [-1, -1]], np.int32),
     "neither"),
    ("edge_score", np.array([0, 0, np.nan, 0, 0, 0.0]), "score nan"),
    ("edge_score", np.zeros(6, np.float32), "float64"),
    ("vertex_span", np.array([[1, 1], [2, 2], [1, 2], [1, 2], [0, 1]], np.int32), "goal"),
    ("vertex_span", np.array([[1, 1], [2, 2], [1, 2], [1, 2], [1, 2]], np.int32), "span"),
    ("vertex_span", np.array([[1, 1], [2, 2], [1, 1], [1, 2], [0, 2]], np.int32), "outside"),
    ("edge_tails", np.array([[-1, -1], [-1, -1], [0, 1], [0, 1], [0, -1], [3, -1]], np.int32),
     "cover"),
    ("edge_label", np.array([-1, -1, 0, 1, 2, 3], np.int32), None),
    ("edge_label", np.array([-1, -1, 0, -1, 2, 3], np.int32), "label"),
    ("edge_label", np.array([-1, -1, 0, 1], np.int32), "shape"),
])
def test_forest_validate_names_the_broken_invariant(field, value, message):
    forest = Forest(**{**_tiny().__dict__, field: value})
    if message is None:
        forest.validate()
        return
    with pytest.raises(DparseError, match=message):
        forest.validate()


def test_forests_that_pass_validate_derive_only_projective_trees(rng):
    """Random one-entry mutations of valid forests: whatever validate accepts must still derive
    only complete projective trees (and the algorithms run on it)."""
    accepted = rejected = 0
    for forest, _ in forests(rng, "ties", count=30):
        for _ in range(8):
            field = ["vertex_span", "vertex_head", "edge_tails", "edge_arc"][rng.integers(4)]
            value = getattr(forest, field).copy()
            flat = value.reshape(-1)
            flat[rng.integers(flat.size)] = rng.integers(-1, forest.n + 2)
            mutant = Forest(**{**forest.__dict__, field: value})
            try:
                mutant.validate()
            except DparseError:
                rejected += 1
                continue
            accepted += 1
            derivs = enumerate_derivations(mutant)
            for _, _, heads in derivs:
                check_tree(np.array(heads), single_root=True, projective=True)
            assert Hypergraph(mutant).count_derivations() == len(derivs)
    assert accepted and rejected


# ---------------------------------------------------------------- algorithms vs enumeration


@pytest.mark.parametrize("kind", KINDS)
def test_viterbi_and_count_against_enumeration(rng, kind):
    for forest, derivs in forests(rng, kind):
        graph = Hypergraph(forest)
        best = max(s for s, _, _ in derivs)
        score, heads, labels = graph.viterbi()
        assert labels is None
        assert score == pytest.approx(best)
        assert any(abs(s - best) < 1e-9 and h == tuple(heads) for s, _, h in derivs)
        assert graph.count_derivations() == len(derivs)


@pytest.mark.parametrize("kind", KINDS)
def test_kbest_against_enumeration(rng, kind):
    for forest, derivs in forests(rng, kind):
        graph = Hypergraph(forest)
        total = len(derivs)
        scores = sorted((s for s, _, _ in derivs), reverse=True)
        by_edges = {edges: (s, heads) for s, edges, heads in derivs}
        for k in (1, 3, total, total + 5):
            got, heads, labels = graph.kbest(k)
            assert labels is None
            K = min(k, total)
            assert got.shape == (K,) and heads.shape == (K, forest.n + 1)
            np.testing.assert_allclose(got, scores[:K], atol=1e-9)
            assert np.all(np.diff(got) <= 0)
        lazy = graph.lazy_kbest()
        assert lazy.extend(total + 5) == total
        seen = set()
        for r in range(total):
            edges = frozenset(lazy.edges(r).tolist())
            assert edges in by_edges, "not a derivation of the forest"
            assert edges not in seen, "a derivation listed twice"
            seen.add(edges)
            assert lazy.score(r) == pytest.approx(by_edges[edges][0])
            assert tuple(lazy.tree(r)[0]) == by_edges[edges][1]


def test_kbest_is_lazy_and_extends_consistently(rng):
    for forest, _ in forests(rng, "ties", count=6):
        graph = Hypergraph(forest)
        full = graph.kbest(50)
        lazy = graph.lazy_kbest()
        for k in (1, 2, 5, 50):
            lazy.extend(k)
        np.testing.assert_array_equal(lazy.kbest(50)[0], full[0])
        np.testing.assert_array_equal(lazy.kbest(50)[1], full[1])
        with pytest.raises(IndexError):
            lazy.score(len(full[0]))


@pytest.mark.parametrize("kind", KINDS)
def test_forest_oracle_against_enumeration(rng, kind):
    for forest, derivs in forests(rng, kind):
        graph = Hypergraph(forest)
        trees = sorted({h for _, _, h in derivs})
        golds = [trees[int(rng.integers(len(trees)))]]  # a gold tree in the forest
        golds.append(tuple(rng.permutation([-1, *range(forest.n)])))  # any heads at all
        for gold in golds:
            g = np.array(gold)

            def correct(heads, g=g):
                return int(np.sum(np.array(heads[1:]) == g[1:]))

            best = max(correct(h) for _, _, h in derivs)
            top = max(s for s, _, h in derivs if correct(h) == best)
            matches, score, heads, _ = graph.oracle(g)
            assert matches == best == correct(heads)
            assert score == pytest.approx(top)
            assert any(tuple(heads) == h for _, _, h in derivs)
        assert graph.oracle(np.array(trees[0]))[0] == forest.n


def test_labeled_forests_give_the_labels_of_the_arcs_used(rng):
    for forest, derivs in forests(rng, "normal", count=6, labeled=True):
        graph = Hypergraph(forest)
        label_of = {(int(h), int(m)): set() for h, m in forest.edge_arc if m >= 0}
        for (h, m), lab in zip(forest.edge_arc, forest.edge_label, strict=True):
            if m >= 0:
                label_of[(int(h), int(m))].add(int(lab))
        _, heads, labels = graph.kbest(len(derivs))
        _, vheads, vlabels = graph.viterbi()
        for h, lab in [*zip(heads, labels, strict=True), (vheads, vlabels)]:
            assert lab[0] == -1
            for m in range(1, forest.n + 1):
                assert lab[m] in label_of[(h[m], m)]


def test_replacement_scores(rng):
    for forest, _ in forests(rng, "normal", count=4):
        graph = Hypergraph(forest)
        other = random_scores(rng, forest.num_edges, "ties")
        same = Hypergraph(Forest(**{**forest.__dict__, "edge_score": other}))
        assert graph.viterbi(other)[0] == same.viterbi()[0]
        np.testing.assert_array_equal(graph.kbest(10, other)[0], same.kbest(10)[0])
        with pytest.raises(ValueError, match="shape"):
            graph.viterbi(other[:-1])
        with pytest.raises(ValueError, match="NaN"):
            graph.kbest(3, np.full(forest.num_edges, np.nan))


@pytest.mark.parametrize("kind", KINDS)
def test_cube_pruning_without_nonlocal_scores_is_exact_kbest(rng, kind):
    for forest, derivs in forests(rng, kind, count=8):
        graph = Hypergraph(forest)
        cube = ForestCube(graph)
        scores = sorted((s for s, _, _ in derivs), reverse=True)
        for k in (1, 2, 7, len(derivs) + 3):
            got, heads, _ = cube.kbest(k)
            K = min(k, len(derivs))
            np.testing.assert_allclose(got, scores[:K], atol=1e-9)
            lazy = graph.kbest(k)[0]
            np.testing.assert_allclose(got, lazy, atol=1e-9)
            by_tree = {}
            for s, _, h in derivs:
                by_tree.setdefault(h, []).append(s)
            for s, h in zip(got, heads, strict=True):
                assert any(abs(s - x) < 1e-9 for x in by_tree[tuple(h)])
        # one signature for all: recombination keeps only the best item of each vertex
        got, heads, _ = cube.kbest(5, recombination=True, n_fields=0)
        assert len(got) == 1 and got[0] == pytest.approx(scores[0])


def test_cube_pruning_passes_the_hyperedge_to_the_combiner(rng):
    for forest, _ in forests(rng, "normal", count=6, labeled=True):
        graph = Hypergraph(forest)
        bonus = random_scores(rng, forest.num_edges, "ties")
        got, heads, labels = ForestCube(graph).kbest(3, EdgeBonusCombiner(bonus))
        best, vheads, _ = graph.viterbi(forest.edge_score + bonus)
        assert got[0] == pytest.approx(best)
        np.testing.assert_allclose(got, graph.kbest(3, forest.edge_score + bonus)[0], atol=1e-9)
        assert labels is not None and labels.shape == heads.shape
        with pytest.raises(ValueError, match="n_fields"):
            ForestCube(graph).kbest(3, n_fields=9)


# ---------------------------------------------------------------- the file format


def test_round_trip_is_exact(rng, tmp_path):
    items = []
    for idx, (forest, _) in enumerate(forests(rng, "normal", count=8, labeled=True)):
        if idx % 2:  # odd ones unlabeled, with awkward floats
            scores = forest.edge_score * 1e-300
            scores[0] = -0.0
            forest = Forest(**{**forest.__dict__, "edge_label": None, "edge_score": scores})
        items.append((f"s-{idx}", forest))
    for name in ("f.forest", "f.forest.gz"):
        path = tmp_path / name
        assert write_forests(path, items) == len(items)
        back = list(read_forests(path))
        assert [sid for sid, _ in back] == [sid for sid, _ in items]
        for (_, a), (_, b) in zip(items, back, strict=True):
            assert a.same_as(b)
            assert np.signbit(a.edge_score).tolist() == np.signbit(b.edge_score).tolist()
    with gzip.open(tmp_path / "f.forest.gz", "rt") as f:
        assert f.readline() == MAGIC + "\n"
    crlf = tmp_path / "crlf.forest"
    crlf.write_bytes((tmp_path / "f.forest").read_bytes().replace(b"\n", b"\r\n"))
    for (_, a), (_, b) in zip(items, read_forests(crlf), strict=True):
        assert a.same_as(b)
    write_forests(tmp_path / "ids.forest", [_tiny(), _tiny()])
    assert [sid for sid, _ in read_forests(tmp_path / "ids.forest")] == ["1", "2"]


def test_writer_is_whole_or_nothing_and_validates(tmp_path):
    path = tmp_path / "f.forest"
    write_forests(path, [_tiny()])
    before = path.read_bytes()
    broken = Forest(**{**_tiny().__dict__, "goal": 2})
    with pytest.raises(DparseError, match="goal"):
        write_forests(path, [_tiny(), broken])
    assert path.read_bytes() == before
    with pytest.raises(DparseError, match="whitespace"):
        write_forests(path, [("a b", _tiny())])


def _corrupt(text: str, line: int, new: str | None) -> str:
    lines = text.splitlines(keepends=True)
    if new is None:
        return "".join(lines[:line - 1])
    lines[line - 1] = new + "\n"
    return "".join(lines)


@pytest.mark.parametrize(("line", "new", "where", "message"), [
    (1, "dparse-forest 2", 1, "not a forest file"),
    (2, "sentence 1 2 5 6 4", 2, "expected 'sentence"),
    (2, "sentence 1 2 5 six 4 0", 2, "expected integers"),
    (4, "v 2 2", 4, "expected a vertex line"),
    (9, "e 1 -1 -1 -1 -1 zero", 9, "bad score"),
    (10, "e 2 0 1 1 2 1.0 extra", 10, "expected an edge line"),
    (12, "e 4 2 -1 0 2 0.0", 2, "sentence 1: forest: hyperedge"),
    (12, None, 12, "ends inside sentence 1"),
    (14, "e 4 3 -1 0 2 0.0", 14, "expected 'sentence"),
    (4, "v 2 2 99999999999", 4, "out of range"),
    (5, "v 1 x 1", 5, "'x' is not an integer"),
    (5, "v 1 +1 1", 5, "'\\+1' is not an integer"),
    (8, "e 0 -1 -1 -1 -1 1_0", 8, "bad score"),
    (3, "v 1 1 1 1", 3, "expected a vertex line"),
    (11, "v 4 2 -1 0 1 0.0", 11, "expected an edge line"),
])
def test_corrupted_files_name_file_line_and_problem(tmp_path, line, new, where, message):
    path = tmp_path / "f.forest"
    write_forests(path, [_tiny(), _tiny()])
    bad = tmp_path / "bad.forest"
    bad.write_text(_corrupt(path.read_text(), line, new))
    with pytest.raises(InputError, match=message) as info:
        list(read_forests(bad))
    assert str(info.value).startswith(f"{bad}:{where}: ")
    assert info.value.path == str(bad) and info.value.line == where


def test_truncated_gzip_and_empty_files(tmp_path):
    path = tmp_path / "f.forest.gz"
    write_forests(path, [_tiny()] * 50)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="gzip|ends inside"):
        list(read_forests(path))
    empty = tmp_path / "empty.forest"
    empty.write_text("")
    with pytest.raises(InputError, match="empty file"):
        list(read_forests(empty))
    only_magic = tmp_path / "none.forest"
    only_magic.write_text(MAGIC + "\n")
    assert list(read_forests(only_magic)) == []


# ---------------------------------------------------------------- dparse forest


def _gold_file(path: Path, trees: list[tuple[int, ...]]) -> None:
    blocks = []
    for heads in trees:
        rows = [f"{m}\tw{m}\tw\tX\tX\t_\t{heads[m]}\tdep\t_\t_" for m in range(1, len(heads))]
        blocks.append("\n".join(rows) + "\n\n")
    path.write_text("".join(blocks))


def test_cli_statistics_and_oracles(rng, tmp_path):
    made = list(forests(rng, "ties", count=5))
    path = tmp_path / "f.forest"
    write_forests(path, [f for f, _ in made])
    golds = []
    for forest, _ in made:
        heads = [-1, *rng.integers(0, forest.n + 1, size=forest.n).tolist()]
        golds.append(tuple(heads))
    gold = tmp_path / "gold.conllu"
    _gold_file(gold, golds)
    result = CliRunner().invoke(forest_command, [str(path), "--gold", str(gold), "--kbest", "3",
                                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    tokens = sum(f.n for f, _ in made)
    forest_hits = kbest_hits = best_hits = extracted = distinct = 0
    for (forest, derivs), g in zip(made, golds, strict=True):
        def correct(h, g=g):
            return sum(a == b for a, b in zip(h[1:], g[1:], strict=True))
        forest_hits += max(correct(h) for _, _, h in derivs)
        ranked = sorted(derivs, key=lambda d: -d[0])
        top = Hypergraph(forest).kbest(3)[1]
        assert all(any(tuple(t) == h for _, _, h in ranked) for t in top)
        kbest_hits += max(correct(t) for t in top)
        best_hits += correct(Hypergraph(forest).viterbi()[1])
        extracted += len(top)
        distinct += len({tuple(t) for t in top})
    assert report["sentences"] == len(made) and report["tokens"] == tokens
    assert report["vertices"] == sum(f.num_vertices for f, _ in made)
    assert report["hyperedges"] == sum(f.num_edges for f, _ in made)
    assert report["derivations"] == sum(len(d) for _, d in made)
    assert report["forest_oracle_uas"] == pytest.approx(100 * forest_hits / tokens)
    assert report["kbest_oracle_uas"] == pytest.approx(100 * kbest_hits / tokens)
    assert report["onebest_uas"] == pytest.approx(100 * best_hits / tokens)
    assert report["kbest_distinct_trees_pct"] == pytest.approx(100 * distinct / extracted)
    assert report["forest_oracle_uas"] >= report["kbest_oracle_uas"] >= report["onebest_uas"]
    text = CliRunner().invoke(forest_command, [str(path), "--gold", str(gold)])
    assert text.exit_code == 0 and "forest oracle UAS" in text.output


def test_cli_uas_is_na_without_scored_words(tmp_path):
    path = tmp_path / "f.forest"
    write_forests(path, [_tiny()])
    gold = tmp_path / "gold.conllu"
    gold.write_text("1\t.\t.\tPUNCT\t.\t_\t0\tpunct\t_\t_\n"
                    "2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n")
    args = [str(path), "--gold", str(gold), "--punct", "upos"]
    report = json.loads(CliRunner().invoke(forest_command, [*args, "--json"]).output)
    assert report["tokens"] == 0 and report["forest_oracle_uas"] is None
    assert "n/a" in CliRunner().invoke(forest_command, args).output
    report = json.loads(CliRunner().invoke(forest_command, [str(path), "--gold", str(gold),
                                                            "--json"]).output)
    assert report["tokens"] == 2 and report["forest_oracle_uas"] == 100.0
    assert report["onebest_uas"] == 0.0  # the best tree is 2 -> 1


def test_cli_errors_exit_2(tmp_path):
    path = tmp_path / "f.forest"
    write_forests(path, [_tiny()])
    gold = tmp_path / "gold.conllu"
    _gold_file(gold, [(-1, 0, 1, 1)])
    result = CliRunner().invoke(forest_command, [str(path), "--gold", str(gold)])
    assert isinstance(result.exception, InputError) and "3 words" in str(result.exception)
    _gold_file(gold, [(-1, 0, 1), (-1, 0, 1)])
    result = CliRunner().invoke(forest_command, [str(path), "--gold", str(gold)])
    assert isinstance(result.exception, InputError) and "more sentences" in str(result.exception)
    bad = tmp_path / "bad.forest"
    bad.write_text("hello\n")
    path_var = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path_var}
    env.pop("DPARSE_DEBUG", None)
    run = subprocess.run([sys.executable, "-m", "dparse", "forest", str(bad)], capture_output=True,
                         text=True, env=env, cwd=REPO, timeout=60)
    assert run.returncode == 2 and f"{bad}:1: not a forest file" in run.stderr
