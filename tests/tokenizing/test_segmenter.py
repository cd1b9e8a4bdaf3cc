"""The tokenizer's loops (dparse.tokenizing.segmenter) on hand-made and random arrays."""

from __future__ import annotations

import os

import numpy as np
import pytest
from dparse.tokenizing.segmenter import (
    INSIDE,
    NEWLINE,
    SENTENCE_END,
    SPACE,
    TOKEN_END,
    in_vocab,
    segment,
    token_hashes,
    train_epoch,
    vocab_table,
)

from dparse.tokenizing.chars import char_arrays, char_class

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
ALPHABET = list("aB1.,'-x") + [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2028", "\u4e2d", "\x00"]


def random_text(rng: np.random.Generator, size: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(size))


def reference_bounds(text: str) -> list[tuple[int, ...]]:
    """The labels each character may take: () for white space (module doc of the loops)."""
    out = []
    for i, c in enumerate(text):
        if char_class(c) in (SPACE, NEWLINE):
            out.append(())
            continue
        j = i + 1
        while j < len(text) and char_class(text[j]) in (SPACE, NEWLINE):
            j += 1
        run = text[i + 1:j]
        if j >= len(text) or any(char_class(w) == NEWLINE for w in run):
            out.append((SENTENCE_END,))
        elif run:
            out.append((TOKEN_END, SENTENCE_END))
        else:
            out.append((INSIDE, TOKEN_END, SENTENCE_END))
    return out


def test_every_label_keeps_to_the_constraints_of_white_space_and_line_breaks() -> None:
    rng = np.random.default_rng(SEED)
    empty = np.zeros(0, dtype=np.uint64)
    for trial in range(60):
        text = random_text(rng, int(rng.integers(0, 40)))
        arrays = char_arrays(text)
        weights = rng.normal(size=3 << 10).astype(np.float32)
        labels = segment(arrays.low, arrays.cls, weights, empty)
        allowed = reference_bounds(text)
        assert len(labels) == len(text)
        for i, label in enumerate(labels.tolist()):
            assert (label == -1) if not allowed[i] else (label in allowed[i]), (trial, text, i)
        # with zero weights every character takes the first label it may take
        zero = segment(arrays.low, arrays.cls, np.zeros(3 << 10, np.float32), empty)
        assert zero.tolist() == [a[0] if a else -1 for a in allowed]


def test_token_hashes_are_fnv_over_the_lowered_code_points() -> None:
    arrays = char_arrays("Don't STOP")
    h = token_hashes(arrays.low, np.array([0, 6, 0], np.int64), np.array([5, 10, 0], np.int64))

    def fnv(s: str) -> int:
        v = 0xCBF29CE484222325
        for c in s:
            v = ((v ^ ord(c)) * 0x100000001B3) % (1 << 64)
        return v

    assert h.tolist() == [fnv("don't"), fnv("stop"), fnv("")]


def test_the_vocabulary_table_holds_exactly_its_hashes() -> None:
    rng = np.random.default_rng(SEED)
    for size in (0, 1, 5, 300):
        words = rng.integers(0, 2**63, size=size, dtype=np.uint64) * np.uint64(2)
        words[: min(size, 2)] = [0, 7][: min(size, 2)]  # 0 is stored as 1
        table = vocab_table(np.unique(words))
        assert len(table) >= 2 * len(np.unique(words)) and not len(table) & (len(table) - 1)
        probes = np.concatenate([words, rng.integers(0, 2**63, size=50, dtype=np.uint64) * 2 + 3,
                                 np.array([1, 0], np.uint64)])
        member = set(words.tolist()) | ({1} if 0 in words.tolist() else set())
        assert in_vocab(table, probes).tolist() == [
            int(p) in member or (int(p) == 0 and 1 in member) for p in probes]
    with pytest.raises(ValueError, match="power of two"):
        in_vocab(np.zeros(3, np.uint64), np.zeros(1, np.uint64))


def test_the_loops_refuse_arrays_that_do_not_fit() -> None:
    arrays = char_arrays("ab cd")
    empty = np.zeros(0, dtype=np.uint64)
    with pytest.raises(ValueError, match="power of two"):
        segment(arrays.low, arrays.cls, np.zeros(3 * 5, np.float32), empty)
    with pytest.raises(ValueError, match="one entry per character"):
        segment(arrays.low[:3], arrays.cls, np.zeros(3 << 4, np.float32), empty)
    with pytest.raises(ValueError, match="outside the text"):
        token_hashes(arrays.low, np.array([3], np.int64), np.array([9], np.int64))
    w = np.zeros(3 << 4)
    gold, one = np.zeros(5, np.int8), np.zeros(1, np.int64)
    ptr = np.array([0, 0], np.int64)
    with pytest.raises(ValueError, match="outside the text"):
        train_epoch(arrays.low, arrays.cls, gold, np.array([[0, 6]], np.int64), one, one, w,
                    w.copy(), 1, empty, ptr)
    with pytest.raises(ValueError, match="one entry per unit"):
        train_epoch(arrays.low, arrays.cls, gold, np.array([[0, 5]], np.int64),
                    np.zeros(2, np.int64), one, w, w.copy(), 1, empty, ptr)
    with pytest.raises(ValueError, match="one entry per unit"):
        train_epoch(arrays.low, arrays.cls, gold, np.array([[0, 5]], np.int64),
                    one, np.zeros(2, np.int64), w, w.copy(), 1, empty, ptr)
    with pytest.raises(ValueError, match="no fold vocabulary"):
        train_epoch(arrays.low, arrays.cls, gold, np.array([[0, 5]], np.int64), one + 1, one,
                    w, w.copy(), 1, empty, ptr)
    with pytest.raises(ValueError, match="one or more folds"):
        train_epoch(arrays.low, arrays.cls, gold, np.array([[0, 5]], np.int64), one, one, w,
                    w.copy(), 1, empty, np.array([0, 3], np.int64))


def test_the_perceptron_learns_to_split_off_a_period_and_end_sentences() -> None:
    text = "ab. cd. ef, gh. " * 20
    arrays = char_arrays(text)
    gold = np.full(len(text), INSIDE, np.int8)
    for i, c in enumerate(text):
        if c == " ":
            gold[i] = -1
        elif c in ".,":
            gold[i - 1] = TOKEN_END
            gold[i] = SENTENCE_END if c == "." else TOKEN_END
    gold[-2] = SENTENCE_END
    units = np.array([[0, len(text)]], np.int64)
    w, totals, clock = np.zeros(3 << 12), np.zeros(3 << 12), 1
    empty = np.zeros(0, np.uint64)
    for _ in range(5):
        clock, seen, errors = train_epoch(arrays.low, arrays.cls, gold, units,
                                          np.zeros(1, np.int64), np.zeros(1, np.int64), w,
                                          totals, clock, empty, np.zeros(2, np.int64))
    assert seen == int((gold >= 0).sum()) and errors == 0
    # the last weights label the text as gold does; the averaged ones (which keep a share
    # of the first epoch's mistakes) all but a character or two
    assert segment(arrays.low, arrays.cls, w.astype(np.float32), empty).tolist() == gold.tolist()
    averaged = (w - totals / clock).astype(np.float32)
    assert (segment(arrays.low, arrays.cls, averaged, empty) != gold).sum() <= 2
