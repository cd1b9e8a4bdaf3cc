"""Undirected MST inference (dparse/undirected: umst.pyx, decoders.py) against Kruskal.

Boruvka and Karger-Klein-Tarjan must return exactly the maximum spanning forest that Kruskal's
algorithm finds under the same total order (weight, then lower edge index), on thousands of
random graphs: dense and sparse, with ties, multigraphs, disconnected. Runs under another seed
with DPARSE_TEST_SEED=<int>.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from dparse.undirected.umst import (
    local_enhancement,
    orient_edges,
    spanning_forest_edges,
    tree_from_edges,
    undirected_mst,
)

from dparse.decoders import available_decoders, get_decoder, score_tree
from dparse.trees import check_tree
from dparse.undirected.decoders import combine, single_root_repair

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
METHODS = ["boruvka", "kkt"]


def kruskal(nv: int, u: np.ndarray, v: np.ndarray, w: np.ndarray) -> list[int]:
    """Reference maximum spanning forest: edge indices, sorted (ties: lower index first)."""
    parent = list(range(nv))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    out = []
    for k in sorted(range(len(w)), key=lambda k: (-w[k], k)):
        a, b = find(int(u[k])), find(int(v[k]))
        if a != b:
            parent[a] = b
            out.append(k)
    return sorted(out)


def random_graph(rng: np.random.Generator, kind: str) -> tuple[int, np.ndarray, ...]:
    nv = int(rng.integers(1, 31))
    if kind == "dense":
        u, v = np.triu_indices(nv, 1)
    else:  # sparse multigraph: repeated edges, often disconnected
        m = int(rng.integers(0, 2 * nv + 1)) if nv > 1 else 0
        u, v = rng.integers(0, nv, m), rng.integers(0, nv, m)
        keep = u != v
        u, v = u[keep], v[keep]
    if kind == "ties" or rng.random() < 0.3:
        w = rng.integers(-2, 3, len(u)).astype(np.float64)
    else:
        w = rng.normal(size=len(u))
    return nv, u.astype(np.int32), v.astype(np.int32), w


@pytest.mark.parametrize("kind", ["dense", "sparse", "ties"])
@pytest.mark.parametrize("method", METHODS)
def test_umst_forest_matches_kruskal(method: str, kind: str) -> None:
    rng = np.random.default_rng([SEED, 1, METHODS.index(method), len(kind)])
    for trial in range(1500):
        nv, u, v, w = random_graph(rng, kind)
        got = spanning_forest_edges(nv, u, v, w, method, trial).tolist()
        assert got == kruskal(nv, u, v, w), (nv, u.tolist(), v.tolist(), w.tolist())


def test_umst_kkt_independent_of_seed() -> None:
    rng = np.random.default_rng([SEED, 2])
    u, v = np.triu_indices(25, 1)
    w = rng.integers(0, 3, len(u)).astype(np.float64)
    u, v = u.astype(np.int32), v.astype(np.int32)
    first = spanning_forest_edges(25, u, v, w, "kkt", 0)
    for seed in range(1, 20):
        assert np.array_equal(spanning_forest_edges(25, u, v, w, "kkt", seed), first)


def symmetric(rng: np.random.Generator, n: int, missing: float = 0.0) -> np.ndarray:
    w = rng.normal(size=(n + 1, n + 1))
    w = w + w.T
    w[rng.random(w.shape) < missing] = np.nan
    w = np.triu(w, 1)
    return w + w.T


def tree_weight(heads: np.ndarray, w: np.ndarray) -> float:
    m = np.arange(1, len(heads))
    return float(w[np.minimum(heads[1:], m), np.maximum(heads[1:], m)].sum())


@pytest.mark.parametrize("method", METHODS)
def test_umst_matrix_tree_is_the_reference_mst(method: str) -> None:
    rng = np.random.default_rng([SEED, 3])
    for n in list(range(1, 25)) * 20:
        w = symmetric(rng, n, missing=0.3)
        w[0, 1:] = w[1:, 0] = rng.normal(size=n)  # the root reaches every word: connected
        heads = undirected_mst(w, method)
        check_tree(heads)
        u, v = np.triu_indices(n + 1, 1)
        ok = ~np.isnan(w[u, v])
        ref = kruskal(n + 1, u[ok], v[ok], w[u, v][ok])
        assert tree_weight(heads, w) == pytest.approx(w[u, v][ok][ref].sum())


def test_umst_disconnected_components_hang_from_the_root() -> None:
    w = np.full((6, 6), np.nan)
    for a, b, x in [(0, 1, 1.0), (2, 3, 2.0), (3, 4, 1.0), (4, 2, 0.5)]:
        w[a, b] = w[b, a] = x
    heads = undirected_mst(w)  # components {0, 1}, {2, 3, 4}, {5}
    assert heads.tolist() == [-1, 0, 0, 2, 3, 0]
    neg = np.where(np.isnan(w), -np.inf, w)
    assert np.array_equal(undirected_mst(neg), heads)


def test_umst_tree_from_edges_matches_matrix() -> None:
    rng = np.random.default_rng([SEED, 4])
    for n in range(1, 30):
        w = symmetric(rng, n)
        u, v = np.triu_indices(n + 1, 1)
        heads = tree_from_edges(n + 1, u.astype(np.int32), v.astype(np.int32), w[u, v])
        assert np.array_equal(heads, undirected_mst(w))


def test_umst_orientation_is_the_unique_rooted_direction() -> None:
    rng = np.random.default_rng([SEED, 5])
    for n in range(1, 40):
        # a random tree: word m attaches to a random earlier node, then shuffle the labels
        perm = np.concatenate([[0], 1 + rng.permutation(n)])
        parent = [int(rng.integers(0, m)) for m in range(1, n + 1)]
        u = np.array([perm[p] for p in parent], dtype=np.int32)
        v = perm[1:].astype(np.int32)
        swap = rng.random(n) < 0.5  # edge direction in the input does not matter
        u2, v2 = np.where(swap, v, u).astype(np.int32), np.where(swap, u, v).astype(np.int32)
        heads = orient_edges(n + 1, u2, v2)
        check_tree(heads)
        assert sorted(zip(np.minimum(u, v), np.maximum(u, v), strict=True)) == sorted(
            (min(h, m), max(h, m)) for m, h in enumerate(heads.tolist()) if m)


def test_umst_registered_and_decodes_per_contract() -> None:
    assert {"umst", "umst-df", "umst-df-max", "umst-df-min"} <= set(available_decoders())
    dec = get_decoder("umst")
    assert not dec.projective
    rng = np.random.default_rng([SEED, 6])
    for n in range(1, 20):
        w = symmetric(rng, n)
        heads = dec.decode(w, single_root=False)
        assert heads.dtype == np.int32 and heads.shape == (n + 1,) and heads[0] == -1
        check_tree(heads)
        assert np.array_equal(heads, undirected_mst(w))
        one = dec.decode(w)  # single_root=True by default
        check_tree(one, single_root=True)


def test_umst_rejects_positive_infinity() -> None:
    w = np.zeros((3, 3))
    w[0, 2] = w[2, 0] = np.inf
    with pytest.raises(ValueError, match=r"\+inf"):
        get_decoder("umst").decode(w)
    with pytest.raises(ValueError, match="method"):
        undirected_mst(np.zeros((3, 3)), "prim")
    with pytest.raises(ValueError, match="self edge"):
        spanning_forest_edges(3, np.array([1], np.int32), np.array([1], np.int32), np.ones(1))


def test_umst_single_root_repair_rehangs_extra_root_children() -> None:
    w = np.full((5, 5), np.nan)
    for a, b, x in [(0, 1, 5.0), (0, 3, 4.0), (3, 4, 3.0), (2, 1, 1.0), (4, 2, 0.5)]:
        w[a, b] = w[b, a] = x
    heads = undirected_mst(w)
    assert (heads[1:] == 0).sum() == 2
    fixed = single_root_repair(heads, w)
    check_tree(fixed, single_root=True)
    assert fixed.tolist() == [-1, 0, 1, 4, 2]  # {3, 4} re-rooted at 4, hung under 2


@pytest.mark.parametrize("f", ["mean", "max", "min"])
def test_umst_df_combines_directions(f: str) -> None:
    rng = np.random.default_rng([SEED, 7])
    name = "umst-df" if f == "mean" else f"umst-df-{f}"
    for n in range(1, 12):
        arc = rng.normal(size=(n + 1, n + 1))
        heads = get_decoder(name).decode(arc, single_root=False)
        check_tree(heads)
        w = combine(arc, f)
        assert np.allclose(w, w.T, equal_nan=True)
        assert w[0, 1] == arc[0, 1]  # a root edge has one direction
        assert np.array_equal(heads, undirected_mst(w))


def test_umst_local_enhancement_improves_and_keeps_trees() -> None:
    rng = np.random.default_rng([SEED, 8])
    for n in range(2, 30):
        arc = rng.normal(size=(n + 1, n + 1))
        heads = undirected_mst(symmetric(rng, n))
        before = score_tree(heads, arc)
        roots = int((heads[1:] == 0).sum())
        prev = before
        for steps in range(0, 6):
            out, done = local_enhancement(heads, arc, steps)
            check_tree(out)
            assert done <= steps and int((out[1:] == 0).sum()) == roots
            assert score_tree(out, arc) >= prev - 1e-9
            prev = score_tree(out, arc)
        assert np.array_equal(local_enhancement(heads, arc, 0)[0], heads)


def test_umst_local_enhancement_move() -> None:
    # 0 -> 1 -> 2: swapping 1 and 2 gains arc[0,2] + arc[2,1] - arc[0,1] - arc[1,2] = 3
    arc = np.zeros((3, 3))
    arc[0, 2] = 2.0
    arc[2, 1] = 1.0
    heads = np.array([-1, 0, 1], dtype=np.int32)
    out, done = local_enhancement(heads, arc, 5)
    assert out.tolist() == [-1, 2, 0] and done == 1
