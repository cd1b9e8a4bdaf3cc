"""Gold trees: the one check that sentences read where a tree is required have tree heads.

Training and dev files, eval's and oracle's gold file, the treebank a prune dictionary is learnt
from and ensemble's ``--other`` parses must give every word a head such that the heads form a
tree (:func:`dparse.trees.tree_problem`: no self-loop, no cycle, a word attached to the root).

Single-rootedness is known from the format: CoNLL-U data is single-rooted (the UD guidelines
give every sentence exactly one word attached to the root), so a CoNLL-U sentence with several
root words is refused; CoNLL-X and Malt-TAB data may have several (in the CoNLL 2007 Basque
data, 1007 of 2595 training sentences do), so there one or more root words are accepted.

A sentence that is not a tree is an :class:`~dparse.errors.InputError` naming the file, the
sentence's first line and the problem; with ``skip_invalid`` (the commands'
``--skip-invalid-trees``, the config's ``data.skip_invalid_trees``) it is left out instead,
and the count is reported on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from dparse.conll import STDIN_NAME, Sentence, read_conll
from dparse.errors import InputError
from dparse.trees import tree_problem


def single_rooted(sent: Sentence) -> bool:
    """Whether ``sent``'s data needs exactly one word attached to the root (CoNLL-U)."""
    return sent.fmt == "conllu"


def check_trees(
    sentences: Iterable[Sentence], skip_invalid: bool = False, what: str = "gold"
) -> Iterator[tuple[Sentence, bool]]:
    """Yield (sentence, whether its heads form a tree) for each of ``sentences``.

    Without ``skip_invalid`` the first sentence that is not a tree raises InputError (its
    file, its first line, "``what`` sentence k" and the problem) and only True is yielded; with
    it, the count of the others is printed on stderr once the sentences are exhausted.
    """
    skipped = 0
    first = ""
    k = 0
    source = ""
    for k, sent in enumerate(sentences, 1):
        source = sent.source
        problem = tree_problem(sent.heads, single_root=single_rooted(sent))
        if problem is None:
            yield sent, True
            continue
        if single_rooted(sent) and tree_problem(sent.heads) is None:  # several root words
            problem += " (CoNLL-U sentences have a single root)"
        if not skip_invalid:
            raise InputError(sent.source, sent.lineno,
                             f"{what} sentence {k}: the heads are not a tree: {problem}")
        skipped += 1
        first = first or f"the first at line {sent.lineno}: {problem}"
        yield sent, False
    if skipped:
        print(f"dparse: {source}: skipped {skipped} of {k} {what} sentences whose heads are not "
              f"a tree ({first})", file=sys.stderr)


def read_gold(
    path: str | os.PathLike,
    needed_for: str,
    fmt: str | None = None,
    encoding: str = "utf-8",
    skip_invalid: bool = False,
) -> list[Sentence]:
    """The sentences of a gold treebank file whose heads form trees (:func:`check_trees`).

    A file without any (empty, or every sentence skipped) is an InputError saying the file is
    ``needed_for`` something (e.g. "training") and needs a sentence.
    """
    checked = check_trees(read_conll(path, fmt=fmt, encoding=encoding), skip_invalid)
    sentences = [sent for sent, ok in checked if ok]
    if not sentences:
        name = os.fspath(path)
        left = " left once the sentences that are not trees are skipped" if skip_invalid else ""
        raise InputError(STDIN_NAME if name == "-" else name, None,
                         f"no sentences{left}: {needed_for} needs at least one")
    return sentences


def keep_gold_trees(
    gold: Sequence[Sentence], aligned: Sequence[Sequence[Sentence]], skip_invalid: bool = False
) -> tuple[list[Sentence], list[list[Sentence]]]:
    """``gold``'s sentences whose heads form trees (:func:`check_trees`), and the sentences at
    the same positions of each of ``aligned`` (other parses of gold's sentences, as
    :func:`dparse.metrics.evaluate` and :func:`dparse.oracle.oracle` take them).

    A sequence of ``aligned`` whose length is not gold's is returned whole, so that the
    alignment check that follows reports the files' true sentence counts.
    """
    keep = [ok for _, ok in check_trees(gold, skip_invalid)]
    if all(keep) or any(len(other) != len(gold) for other in aligned):
        return list(gold), [list(other) for other in aligned]
    pick = [i for i, ok in enumerate(keep) if ok]
    return [gold[i] for i in pick], [[other[i] for i in pick] for other in aligned]


def vote_trees(sentences: Iterable[Sentence], skip_invalid: bool = False) -> Iterator[Sentence]:
    """Another parser's sentences for ``dparse ensemble`` (:func:`check_trees`, as "other
    parse"); with ``skip_invalid`` a sentence that is not a tree comes without heads (all -1),
    so that it keeps its place but gives no vote."""
    for sent, ok in check_trees(sentences, skip_invalid, "other parse"):
        if ok:
            yield sent
        else:
            yield sent.with_parse(np.full(len(sent) + 1, -1), sent.deprels)
