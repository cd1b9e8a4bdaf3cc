"""dparse.trees: the shared tree check, on tiny hand-made trees and against a naive reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from bruteforce import all_trees
from hypothesis import given
from hypothesis import strategies as st

from dparse.trees import check_tree, is_projective, is_tree, tree_mask

# name -> (heads, is a tree, is single-rooted, is projective)
CASES = {
    "one word": ([-1, 0], True, True, True),
    "chain": ([-1, 0, 1, 2], True, True, True),
    "head in the middle": ([-1, 2, 0, 2], True, True, True),
    "two root children": ([-1, 0, 0], True, False, True),
    "crossing arcs": ([-1, 0, 1, 1, 2], True, True, False),  # 1 -> 3 crosses 2 -> 4
    "crossing a root arc": ([-1, 3, 0, 2], True, True, False),  # 0 -> 2 crosses 3 -> 1
    "two-cycle": ([-1, 2, 1], False, False, False),
    "cycle beside a root arc": ([-1, 0, 3, 2], False, False, False),
    "self-loop": ([-1, 1, 0], False, False, False),
    "head out of range": ([-1, 3, 0], False, False, False),
    "negative head": ([-1, -1, 0], False, False, False),
    "root with a head": ([0, 0, 1], False, False, False),
}


@pytest.mark.parametrize("name", CASES)
def test_trees_hand_made(name: str) -> None:
    heads, tree, single, projective = CASES[name]
    assert is_tree(heads) == tree
    assert is_tree(np.array(heads, dtype=np.int32), single_root=True) == (tree and single)
    assert is_projective(heads) == projective
    assert tree_mask(heads, single_root=True, projective=True) == (tree and single and projective)


@pytest.mark.parametrize(
    ("heads", "kwargs", "reason"),
    [
        ([-1, 2, 1], {}, r"cycle through words \[[12], [12]\]"),
        ([-1, 0, 3, 4, 2], {}, r"cycle through words \[[234], [234], [234]\]"),
        ([-1, 1, 0], {}, "word 1 is its own head"),
        ([-1, 3, 0], {}, "head 3 of word 1 is outside 0..2"),
        ([0, 0, 1], {}, r"heads\[0\] must be -1"),
        ([-1, 0, 0], {"single_root": True}, r"2 words attached to the root \[1, 2\]"),
        ([-1, 0, 1, 1, 2], {"projective": True}, "arcs 1 -> 3 and 2 -> 4 cross"),
        ([[-1, 0]], {}, "1-D integer array"),
        ([-1.0, 0.0], {}, "1-D integer array"),
    ],
)
def test_trees_check_tree_names_the_problem(heads: list, kwargs: dict, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        check_tree(heads, **kwargs)


def test_trees_check_tree_accepts_valid() -> None:
    check_tree([-1, 2, 0, 2], single_root=True, projective=True)
    check_tree([-1, 0, 1, 1, 2])


def test_trees_not_arrays_of_heads() -> None:
    assert not is_tree(np.array([-1.0, 0.0]))  # floats are not heads
    assert not is_tree(np.array([[-1, 0]]))  # 2-D
    assert not is_tree(np.array([], dtype=int))
    assert not is_projective([[-1, 0]])
    assert is_tree([-1]) and not is_tree([-1], single_root=True)  # the empty sentence


def test_trees_long_chain_and_long_cycle() -> None:
    n = 300
    chain = np.arange(-1, n, dtype=np.int64)  # word m headed by m - 1: depth n
    assert is_tree(chain, single_root=True) and is_projective(chain)
    cycle = chain.copy()
    cycle[1] = n  # 1 <- n <- n-1 <- ... <- 1
    assert not is_tree(cycle)
    with pytest.raises(ValueError, match="cycle"):
        check_tree(cycle)


def test_trees_mask_keeps_leading_axes() -> None:
    batch = np.array([[[-1, 0, 1], [-1, 2, 1]], [[-1, 0, 0], [-1, 2, 0]]])
    assert tree_mask(batch).tolist() == [[True, False], [True, True]]
    assert tree_mask(batch, single_root=True).tolist() == [[True, False], [False, True]]


def naive_problem(heads: list[int], single_root: bool, projective: bool) -> bool:
    """Independent reference: True iff heads is a valid tree of the kind asked."""
    n = len(heads) - 1
    if heads[0] != -1 or any(not 0 <= h <= n or h == m for m, h in enumerate(heads) if m):
        return False
    for m in range(1, n + 1):
        seen, x = set(), m
        while x != 0:
            if x in seen:
                return False
            seen.add(x)
            x = heads[x]
    if single_root and heads.count(0) != 1:
        return False
    if projective:  # every word between a head and its dependent descends from the head
        for m in range(1, n + 1):
            h = heads[m]
            for w in range(min(h, m) + 1, max(h, m)):
                x = w
                while x not in (0, h):
                    x = heads[x]
                if x != h:
                    return False
    return True


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_trees_mask_matches_naive_reference(n: int) -> None:
    cand = np.array([(-1, *rest) for rest in itertools.product(range(-1, n + 2), repeat=n)])
    for single_root, projective in itertools.product([False, True], repeat=2):
        want = [naive_problem(list(row), single_root, projective) for row in cand.tolist()]
        got = tree_mask(cand, single_root=single_root, projective=projective)
        assert got.tolist() == want


@given(st.lists(st.integers(-2, 9), min_size=1, max_size=9), st.booleans(), st.booleans())
def test_trees_mask_matches_naive_reference_random(
    body: list[int], single_root: bool, projective: bool
) -> None:
    heads = [-1, *body]
    got = bool(tree_mask(heads, single_root=single_root, projective=projective))
    assert got == naive_problem(heads, single_root, projective)


def test_bruteforce_counts() -> None:
    """all_trees against known counts: Cayley's (n+1)^(n-1) and n^(n-1), and the projective
    counts (OEIS A001764 multi-root, A006013 single root)."""
    for n in range(1, 8):
        assert len(all_trees(n, False, False)) == (n + 1) ** (n - 1)
        assert len(all_trees(n, False, True)) == n ** (n - 1)
    assert [len(all_trees(n, True, False)) for n in range(1, 8)] == [1, 3, 12, 55, 273, 1428, 7752]
    assert [len(all_trees(n, True, True)) for n in range(1, 8)] == [1, 2, 7, 30, 143, 728, 3876]
    trees = all_trees(4, True, True)
    assert trees.dtype == np.int32 and not trees.flags.writeable
    assert len(np.unique(trees, axis=0)) == len(trees)
