"""Multiword tokens: which tokens are several syntactic words, and which words.

Learned from the training tokens (:func:`learn_expander`):

- a dictionary of forms: a form (exact, then lowercased) that training split into words more
  often than it left it whole is split as training split it most often (``exact``: the words
  as they were; ``lowered``: lowercased, given the token's casing back by :func:`_recase`); a
  lowercased form that training left whole more often is left whole;
- for forms training never saw, suffix rules: a rule rewrites a form into words as "cut ``cut``
  characters from the end, append ``add``: the first word; then the words ``rest``" (German
  ``zum`` -> ``zu dem``: cut 1, add "", rest ``dem``; Portuguese ``pelo`` -> ``por o``: cut 3,
  add "or", rest ``o``). Every training token votes, for each of its suffixes of 1 to
  ``MAX_SUFFIX`` characters (shorter than itself), for its own rule or for "whole"; a suffix
  seen at least ``min_count`` times keeps its winning vote where the winner has at least half
  of them. An unseen form takes the decision of its longest suffix that has one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from dparse.tokenizing.rawtext import Token

MAX_SUFFIX = 6
Rule = tuple[int, str, tuple[str, ...]]  # (cut, add, rest)


def rule_of(form: str, words: list[str]) -> Rule:
    """The rule that rewrites the lowercased ``form`` into the lowercased ``words``."""
    form, first = form.lower(), words[0].lower()
    shared = 0
    while shared < min(len(form), len(first)) and form[shared] == first[shared]:
        shared += 1
    return len(form) - shared, first[shared:], tuple(w.lower() for w in words[1:])


def _recase(form: str, words: list[str]) -> list[str]:
    """Lowercased ``words`` given the casing of ``form``: all upper, first upper, or as they
    are."""
    if len(form) > 1 and form.isupper():
        return [w.upper() for w in words]
    if form[:1].isupper():
        return [words[0][:1].upper() + words[0][1:], *words[1:]]
    return words


@dataclass
class Expander:
    """A learned expander (module doc); :meth:`words` applies it."""

    exact: dict[str, list[str]] = field(default_factory=dict)
    lowered: dict[str, list[str]] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)
    rules: dict[str, Rule | None] = field(default_factory=dict)

    def words(self, form: str) -> list[str]:
        """The syntactic words of the token ``form`` (``[form]`` when it is one word)."""
        if form in self.exact:
            return self.exact[form]
        low = form.lower()
        if low in self.lowered:
            return _recase(form, self.lowered[low])
        if low in self.whole:
            return [form]
        for size in range(min(MAX_SUFFIX, len(low) - 1), 0, -1):
            suffix = low[-size:]
            if suffix in self.rules:
                rule = self.rules[suffix]
                if rule is None or rule[0] >= len(low):
                    return [form]
                cut, add, rest = rule
                return _recase(form, [low[:len(low) - cut] + add, *rest])
        return [form]

    def as_dict(self) -> dict:
        """JSON-ready: what :meth:`from_dict` reads back."""
        return {"exact": self.exact, "lowered": self.lowered, "whole": sorted(self.whole),
                "rules": {s: None if r is None else [r[0], r[1], list(r[2])]
                          for s, r in sorted(self.rules.items())}}

    @classmethod
    def from_dict(cls, data: dict) -> Expander:
        return cls(dict(data["exact"]), dict(data["lowered"]), set(data["whole"]),
                   {s: None if r is None else (r[0], r[1], tuple(r[2]))
                    for s, r in data["rules"].items()})


def _majority_split(counts: Counter) -> list[str] | None:
    """The most frequent analysis (ties: the first in sorted order) where splits outnumber
    whole tokens; None otherwise. Keys: tuples of words, () for whole."""
    split = sum(c for k, c in counts.items() if k)
    if split <= counts.get((), 0):
        return None
    best = max(sorted(k for k in counts if k), key=lambda k: counts[k])
    return list(best)


def learn_expander(tokens: Iterable[Token], min_count: int = 2) -> Expander:
    """The expander of a training file's tokens (module doc)."""
    by_form: dict[str, Counter] = defaultdict(Counter)
    by_lower: dict[str, Counter] = defaultdict(Counter)
    votes: dict[str, Counter] = defaultdict(Counter)
    for token in tokens:
        split = len(token.words) > 1
        by_form[token.form][tuple(token.words) if split else ()] += 1
        low = token.form.lower()
        by_lower[low][tuple(w.lower() for w in token.words) if split else ()] += 1
        vote = rule_of(token.form, token.words) if split else None
        for size in range(1, min(MAX_SUFFIX, len(low) - 1) + 1):
            votes[low[-size:]][vote] += 1
    out = Expander()
    for form in sorted(by_form):
        words = _majority_split(by_form[form])
        if words is not None:
            out.exact[form] = words
    for low in sorted(by_lower):
        words = _majority_split(by_lower[low])
        if words is None:
            out.whole.add(low)
        else:
            out.lowered[low] = words
    for suffix in sorted(votes):
        counts = votes[suffix]
        total = sum(counts.values())
        winner = max(sorted(counts, key=repr), key=lambda k: counts[k])
        if winner is not None and total < min_count:
            continue
        if 2 * counts[winner] >= total:
            out.rules[suffix] = winner
    # a suffix whose decision is "whole" needs no entry unless a shorter suffix has a rule
    return _pruned(out)


def _pruned(expander: Expander) -> Expander:
    """Drop suffix decisions that change nothing: a "whole" whose every shorter suffix also
    decides "whole" or has no decision."""
    kept: dict[str, Rule | None] = {}
    for suffix, rule in expander.rules.items():
        if rule is not None or any(expander.rules.get(suffix[-k:]) is not None
                                   for k in range(1, len(suffix))):
            kept[suffix] = rule
    expander.rules = kept
    return expander
