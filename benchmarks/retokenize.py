"""System files whose tokenization and sentence breaks differ from gold's, for checking the
CoNLL 2018 alignment of ``dparse eval`` against the official scorer (results/conll18-aligned.md,
``benchmarks/conll18_check.py --aligned``).

Each gold CoNLL-U file is re-tokenized at random (``--rate`` p, ``--seed``), its text kept:
each one-word token is split in two at a random character with probability p, or merged with
the next one-word token of its sentence (p); each multiword token is dropped (one word of its
text, p), re-expanded with one word fewer or more (p), or has a word's FORM changed (p); a
one-word token of three characters or more becomes a two-word multiword token whose FORMs
overlap by a character, as contractions do (p/2); each sentence break is removed (p), and a
sentence of more than four tokens is broken in two (p). A new word copies the tags and
relation of the word it comes from and attaches to it; a word merged into another hands it its
dependents; heads that leave their sentence go to its root, and each sentence is made a tree
again (one root; a cycle broken at the root). Then each word's UPOS, FEATS, LEMMA and DEPREL
are replaced by another of the file's (each with probability p), and its head is moved to
another word of its sentence that keeps a tree (p). Empty nodes and comments are left out.

    python3 benchmarks/retokenize.py ../shared/data/de_gsd/test.conllu \\
        -o scratch/de_gsd-retok15.test.conllu --rate 0.15 --seed 1
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass
class Word:
    """A word: its columns (FORM LEMMA UPOS XPOS FEATS DEPREL), its head (an id, 0: root)."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int
    deprel: str


@dataclass
class Token:
    """A token: its text and its words (several: a multiword token)."""

    form: str
    words: list[Word] = field(default_factory=list)


def read(path: Path) -> list[list[Token]]:
    """The sentences of a CoNLL-U file as tokens, words numbered over the whole file."""
    sentences: list[list[Token]] = []
    tokens: list[Token] = []
    base = 0  # the id of the sentence's word 0
    mwt_end = 0
    ids = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if tokens:
                sentences.append(tokens)
                tokens, base, mwt_end = [], ids, 0
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if "." in cols[0]:
            continue
        if "-" in cols[0]:
            mwt_end = int(cols[0].split("-")[1])
            tokens.append(Token(cols[1]))
            continue
        n = int(cols[0])
        ids = base + n
        word = Word(ids, cols[1], cols[2], cols[3], cols[4], cols[5],
                    0 if cols[6] == "0" else base + int(cols[6]), cols[7])
        if n <= mwt_end:
            tokens[-1].words.append(word)
        else:
            tokens.append(Token(cols[1], [word]))
    if tokens:
        sentences.append(tokens)
    return sentences


class Retokenizer:
    """The changes of the module doc, drawn from ``rng`` with probability ``rate``."""

    def __init__(self, rng: random.Random, rate: float, next_id: int) -> None:
        self.rng = rng
        self.rate = rate
        self.next_id = next_id
        self.merged: dict[int, int] = {}  # a removed word -> the word that took its place

    def chance(self, scale: float = 1.0) -> bool:
        return self.rng.random() < self.rate * scale

    def new_word(self, like: Word, form: str) -> Word:
        self.next_id += 1
        return replace(like, id=self.next_id, form=form, head=like.id, deprel=like.deprel)

    def merge(self, kept: Word, gone: Word) -> None:
        """``gone`` disappears into ``kept``."""
        self.merged[gone.id] = kept.id
        if kept.head == gone.id:
            kept.head = gone.head

    def tokens(self, sentence: list[Token]) -> list[Token]:
        out: list[Token] = []
        for token in sentence:
            prev = out[-1] if out else None
            if len(token.words) > 1:
                out.append(self.multiword(token))
            elif len(token.form) >= 2 and self.chance():
                c = self.rng.randrange(1, len(token.form))
                first = token.words[0]
                second = self.new_word(first, token.form[c:])
                first.form = token.form[:c]
                out += [Token(first.form, [first]), Token(second.form, [second])]
            elif prev is not None and len(prev.words) == 1 and self.chance():
                self.merge(prev.words[0], token.words[0])
                prev.form += token.form
                prev.words[0].form = prev.form
            elif len(token.form) >= 3 and self.chance(0.5):
                c = self.rng.randrange(2, len(token.form))
                first = token.words[0]
                second = self.new_word(first, token.form[c - 1:])
                first.form = token.form[:c]
                out.append(Token(token.form, [first, second]))
            else:
                out.append(token)
        return out

    def multiword(self, token: Token) -> Token:
        words = token.words
        if self.chance():  # dropped: one word of the token's text
            for gone in words[1:]:
                self.merge(words[0], gone)
            words[0].form = token.form
            return Token(token.form, [words[0]])
        if self.chance():  # one word fewer (two left at least) or more
            if len(words) > 2 and self.rng.random() < 0.5:
                self.merge(words[0], words[1])
                return Token(token.form, [words[0], *words[2:]])
            k = self.rng.randrange(len(words))
            extra = self.new_word(words[k], words[k].form[-1:] or "x")
            return Token(token.form, [*words[: k + 1], extra, *words[k + 1:]])
        if self.chance():  # a word's FORM changed
            k = self.rng.randrange(len(words))
            words[k].form = words[k].form.upper() if words[k].form.islower() else "X"
        return token


def _final(merged: dict[int, int], head: int) -> int:
    while head in merged:
        head = merged[head]
    return head


def write_sentence(tokens: list[Token], merged: dict[int, int], pool: dict[str, list[str]],
                   rng: random.Random, rate: float) -> str:
    """The CoNLL-U lines of a sentence, made a tree, its columns perturbed (module doc)."""
    words = [w for t in tokens for w in t.words]
    index = {w.id: i for i, w in enumerate(words, 1)}
    heads = [0] + [index.get(_final(merged, w.head), 0) for w in words]
    for i in range(1, len(heads)):
        heads[i] = 0 if heads[i] == i else heads[i]
    roots = [i for i in range(1, len(heads)) if heads[i] == 0]
    root = roots[0] if roots else 1
    for i in range(1, len(heads)):
        if heads[i] == 0 and i != root:
            heads[i] = root
    heads[root] = 0
    for i in range(1, len(heads)):  # break cycles: a word that reaches itself goes to the root
        seen, j = set(), i
        while j and j not in seen:
            seen.add(j)
            j = heads[j]
        if j:
            heads[j] = root if j != root else 0
    rels = [w.deprel if heads[i] else "root" for i, w in enumerate(words, 1)]
    for i, w in enumerate(words, 1):
        for column in ("upos", "feats", "lemma"):
            if rng.random() < rate:
                setattr(w, column, rng.choice(pool[column]))
        if heads[i] and rng.random() < rate:
            rels[i - 1] = rng.choice(pool["deprel"])
        if heads[i] and rng.random() < rate:
            h = rng.randrange(1, len(words) + 1)
            j = h
            while j and j != i:
                j = heads[j]
            if h != i and j != i:  # i is not an ancestor of h: still a tree
                heads[i] = h
    lines, i = [], 1
    for t in tokens:
        if len(t.words) > 1:
            lines.append(f"{i}-{i + len(t.words) - 1}\t{t.form}" + "\t_" * 8)
        for w in t.words:
            lines.append("\t".join((str(i), w.form, w.lemma, w.upos, w.xpos, w.feats,
                                    str(heads[i]), rels[i - 1], "_", "_")))
            i += 1
    return "\n".join(lines) + "\n\n"


def retokenize(gold: Path, rate: float, seed: int) -> str:
    """The re-tokenized, perturbed CoNLL-U text of ``gold`` (module doc)."""
    rng = random.Random(seed)
    sentences = read(gold)
    words = [w for s in sentences for t in s for w in t.words]
    pool = {c: [getattr(w, c) for w in words] for c in ("upos", "feats", "lemma", "deprel")}
    retok = Retokenizer(rng, rate, max((w.id for w in words), default=0))
    joined: list[list[Token]] = []
    for sentence in sentences:
        tokens = retok.tokens(sentence)
        if joined and retok.chance():
            joined[-1] += tokens
        elif len(tokens) > 4 and retok.chance():
            c = rng.randrange(2, len(tokens) - 1)
            joined += [tokens[:c], tokens[c:]]
        else:
            joined.append(tokens)
    return "".join(write_sentence(s, retok.merged, pool, rng, rate) for s in joined)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gold", type=Path, help="a CoNLL-U file")
    ap.add_argument("-o", "--out", type=Path, required=True, help="the system file to write")
    ap.add_argument("--rate", type=float, default=0.15, help="the probability of each change")
    ap.add_argument("--seed", type=int, default=1, help="the random seed")
    args = ap.parse_args()
    args.out.write_text(retokenize(args.gold, args.rate, args.seed), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
