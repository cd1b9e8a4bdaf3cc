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
from collections.abc import Iterable

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
    """The rules of a model, indexed to find those that apply to a form quickly: by case and
    front strip, then by back strip; strips of either side also by their outer character, so
    that only strips a form could carry are looked up."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules: list[Rule] = [tuple(r) for r in rules]  # type: ignore[misc]
        backs: dict[tuple[str, str], dict[str, list[int]]] = {}
        for k, (case, front_strip, _, back_strip, _) in enumerate(self.rules):
            backs.setdefault((case, front_strip), {}).setdefault(back_strip, []).append(k)
        # case -> first character -> the lengths of the front strips so starting, ascending,
        # after 0 when the case has rules without a front strip
        self._fronts: dict[str, dict[str, list[int]]] = {case: {} for case in CASES}
        for case, front in backs:
            if front:
                self._fronts[case].setdefault(front[0], []).append(len(front))
        for case, by_char in self._fronts.items():
            empty = [0] if (case, "") in backs else []
            for char, lengths in by_char.items():
                by_char[char] = empty + sorted(set(lengths))
            by_char[""] = empty  # (the key of a form no front strip of the case starts)
        # (case, front strip) -> (back strip -> ids, last character -> the lengths of the back
        # strips so ending, ascending, after 0 when there is a rule without a back strip)
        self._by_front: dict[tuple[str, str], tuple[dict[str, list[int]],
                                                    dict[str, list[int]]]] = {}
        for front, by_back in backs.items():
            lengths: dict[str, list[int]] = {}
            for back in by_back:
                if back:
                    lengths.setdefault(back[-1], []).append(len(back))
            empty = [0] if "" in by_back else []
            lengths = {char: empty + sorted(set(ls)) for char, ls in lengths.items()}
            lengths[""] = empty
            self._by_front[front] = (by_back, lengths)

    def applicable(self, form: str) -> list[int]:
        """The ids of the rules that apply to ``form``, ascending."""
        found: list[int] = []
        for case in CASES:
            source = form if case == "keep" else form.lower()
            n = len(source)
            fronts = self._fronts[case]
            last = source[-1:]
            for f in fronts.get(source[:1], fronts[""]):
                if f > n:
                    break
                entry = self._by_front.get((case, source[:f]))
                if entry is None:
                    continue
                by_back, lengths = entry
                for b in lengths.get(last, lengths[""]):
                    if f + b > n:
                        break
                    found.extend(by_back.get(source[n - b:], ()))
        found.sort()
        return found
