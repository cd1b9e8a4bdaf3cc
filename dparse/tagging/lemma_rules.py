"""Lemmas as edit rules between a form and its lemma, chosen by a classifier.

A rule is ``(case, front_strip, front_add, back_strip, back_add)``: take the form (lower-cased
first when ``case`` is ``"lower"``), remove ``front_strip`` from its start and ``back_strip``
from its end, then put ``front_add`` before and ``back_add`` after what is left. The rule of a
(form, lemma) pair keeps their longest common substring and edits around it (so ``running`` ->
``run`` is ``("lower", "", "", "ning", "")`` and ``Went`` -> ``go`` is ``("lower", "", "",
"went", "go")``); of the two cases, the one with the shorter edit wins (on a tie ``lower`` if
the lemma has no upper-case letter, else ``keep``). A rule
applies to a form that starts with its front strip and ends with its back strip, without the two
overlapping. The tagger (:mod:`dparse.tagging.model`) picks among the rules that apply to a word
and that the training data used with its predicted UPOS.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import numpy as np

from dparse.tagging.tagger import applicable_rules

Rule = tuple[str, str, str, str, str]
CASES = ("keep", "lower")


def _common_substring(a: str, b: str) -> tuple[int, int, int]:
    """(i, j, length) of a longest common substring a[i:i+length] == b[j:j+length] (the first
    in a, then in b); length 0 when the strings share no character."""
    best = (0, 0, 0)
    previous = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        current = [0] * (len(b) + 1)
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            if ai == b[j - 1]:
                run = previous[j - 1] + 1
                current[j] = run
                if run > best[2]:
                    best = (i - run, j - run, run)
        previous = current
    return best


def _edit(source: str, lemma: str) -> tuple[str, str, str, str]:
    i, j, length = _common_substring(source, lemma)
    if length == 0:
        return "", "", source, lemma
    return source[:i], lemma[:j], source[i + length:], lemma[j + length:]


@functools.lru_cache(maxsize=1 << 18)
def rule_of(form: str, lemma: str) -> Rule:
    """The rule that turns ``form`` into ``lemma`` (see the module docstring)."""
    keep: Rule = ("keep", *_edit(form, lemma))
    lower: Rule = ("lower", *_edit(form.lower(), lemma))
    cost_keep, cost_lower = sum(map(len, keep[1:])), sum(map(len, lower[1:]))
    if cost_lower < cost_keep or cost_lower == cost_keep and lemma == lemma.lower():
        return lower
    return keep


def applies(rule: Rule, form: str) -> bool:
    """Whether ``rule`` can edit ``form``."""
    case, front_strip, _, back_strip, _ = rule
    source = form if case == "keep" else form.lower()
    return (len(source) >= len(front_strip) + len(back_strip) and source.startswith(front_strip)
            and source.endswith(back_strip))


def apply_rule(rule: Rule, form: str) -> str:
    """The lemma that ``rule`` makes of ``form`` (a rule that does not apply: the form)."""
    if not applies(rule, form):
        return form
    case, front_strip, front_add, back_strip, back_add = rule
    source = form if case == "keep" else form.lower()
    core = source[len(front_strip):len(source) - len(back_strip)]
    return front_add + core + back_add


class RuleIndex:
    """The rules of a model, indexed to find those that apply to forms quickly: per case, a
    trie of the front strips, each of whose nodes where front strips end leads to a trie of
    those rules' back strips (read from the end); a form's walk visits only the strips it
    carries (:func:`dparse.tagging.tagger.applicable_rules`, whose docstring gives the arrays)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules: list[Rule] = [tuple(r) for r in rules]  # type: ignore[misc]
        children: list[dict[str, int]] = [{}, {}]  # nodes 0 and 1: the cases' front roots
        back_root = [-1, -1]
        ends: list[list[int]] = [[], []]

        def new_node() -> int:
            children.append({})
            back_root.append(-1)
            ends.append([])
            return len(children) - 1

        def child(node: int, char: str) -> int:
            if char not in children[node]:
                children[node][char] = new_node()
            return children[node][char]

        for k, (case, front_strip, _, back_strip, _) in enumerate(self.rules):
            node = CASES.index(case)
            for char in front_strip:
                node = child(node, char)
            if back_root[node] < 0:
                back_root[node] = new_node()
            node = back_root[node]
            for char in reversed(back_strip):
                node = child(node, char)
            ends[node].append(k)
        edges = [sorted((ord(c), x) for c, x in kids.items()) for kids in children]
        self._tries = (
            _offsets(len(e) for e in edges),
            np.array([c for e in edges for c, _ in e], dtype=np.int32),
            np.array([x for e in edges for _, x in e], dtype=np.int32),
            np.array(back_root, dtype=np.int32),
            _offsets(len(e) for e in ends),
            np.array([k for e in ends for k in e], dtype=np.int32),
        )

    def applicable_many(self, forms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the rules that apply to each form, ascending, as CSR int32 arrays
        (ptr [len(forms) + 1], ids)."""
        return applicable_rules(list(forms), *self._tries, len(self.rules))


def _offsets(counts: Iterable[int]) -> np.ndarray:
    """int32 [len + 1]: where each of consecutive runs of the given lengths starts."""
    lengths = np.fromiter(counts, dtype=np.int32)
    out = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=out[1:])
    return out
