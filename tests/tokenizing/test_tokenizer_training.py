"""Training inputs of the tokenizer (dparse.tokenizing.training)."""

from __future__ import annotations

import numpy as np

from dparse.tokenizing.chars import char_arrays
from dparse.tokenizing.training import line_places


def test_line_places_count_the_sentences_of_a_line_before_each() -> None:
    text = "A b. C d. E.\nF g.\n\nH. I.\n"
    starts = np.array([text.index(c) for c in "ACEFHI"], dtype=np.int64)
    places = line_places(starts, char_arrays(text).cls)
    assert places.tolist() == [0, 1, 2, 0, 0, 1]
    # brute force: the units that start on the same line, before it
    lines = [text.count("\n", 0, s) for s in starts.tolist()]
    assert places.tolist() == [lines[:k].count(lines[k]) for k in range(len(lines))]
    assert line_places(np.zeros(0, np.int64), char_arrays(text).cls).tolist() == []
