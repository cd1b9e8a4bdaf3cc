"""Python's cyclic garbage collector paused around work that allocates many containers.

Tagging or parsing a batch allocates tens of lists and objects per sentence, all of them freed
by reference counting. In a process that holds many objects (a benchmark's earlier runs, a
user's Docs), the collections that these allocations trigger scan everything the process holds,
a large share of the spaCy component's and the tagger's time (results/api-bench.md,
results/tagging-en_ewt.md).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside, back on after if it was on (nested uses are fine:
    only the outermost turns it back on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
