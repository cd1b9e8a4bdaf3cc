"""k-way jackknife POS tagging of a training set with a tagger the user supplies.

The training file is cut into ``folds`` contiguous parts; for each part the tagger is trained on
the other parts and tags this one, so every training sentence gets automatic tags from a model
that never saw it (as the PTB experiments of the papers do, with 10 folds). The tagger is two
command templates, run without a shell, with the placeholders filled in:

- ``train_cmd``: ``{train}`` (a CoNLL-X file with gold tags) and ``{model}`` (a path to write);
- ``tag_cmd``: ``{model}``, ``{input}`` (CoNLL-X, CPOSTAG and POSTAG ``_``) and ``{output}``
  (the same file with CPOSTAG and/or POSTAG filled in; a ``_`` CPOSTAG takes the POSTAG).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from dparse.conll import Sentence, read_conll, write_conll
from dparse.errors import DparseError


def fold_bounds(n: int, folds: int) -> list[tuple[int, int]]:
    """``folds`` contiguous [start, end) ranges covering 0..n-1, sizes differing by at most 1."""
    if not 2 <= folds <= n:
        raise DparseError(f"need 2 <= folds <= sentences, got {folds} folds for {n} sentences")
    cuts = [n * k // folds for k in range(folds + 1)]
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _untagged(sentence: Sentence) -> Sentence:
    blank = ["_"] * len(sentence)
    return Sentence.build(
        sentence.form,
        sentence.heads,
        sentence.deprels,
        upos=blank,
        xpos=blank,
        lemma=sentence.lemma,
        feats=sentence.feats,
        fmt="conllx",
    )


def _retagged(gold: Sentence, tagged: Sentence, where: str) -> Sentence:
    if tagged.form != gold.form:
        raise DparseError(
            f"{where}: the tagger changed the words of sentence {' '.join(gold.form[:8])!r}"
        )
    upos = [u if u != "_" else x for u, x in zip(tagged.upos, tagged.xpos, strict=True)]
    return Sentence.build(
        gold.form,
        gold.heads,
        gold.deprels,
        upos=upos,
        xpos=tagged.xpos,
        lemma=gold.lemma,
        feats=gold.feats,
        fmt="conllx",
    )


def _run(template: str, where: str, **paths: Path) -> None:
    try:
        argv = [
            part.format(**{k: str(v) for k, v in paths.items()}) for part in shlex.split(template)
        ]
    except (KeyError, IndexError, ValueError) as exc:
        raise DparseError(f"bad command template {template!r}: {exc}") from None
    try:
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise DparseError(f"{where}: cannot run {argv[0]!r}: {exc}") from None
    if result.returncode != 0:
        raise DparseError(
            f"{where}: {shlex.join(argv)} exited with status {result.returncode}:"
            f" {result.stderr.strip()[-500:]}"
        )


def jackknife(
    sentences: Sequence[Sentence],
    train_cmd: str,
    tag_cmd: str,
    workdir: Path,
    folds: int = 10,
    progress: Callable[[int], None] | None = None,
) -> list[Sentence]:
    """The sentences with POS tags from ``folds``-way jackknifing (see the module doc)."""
    tagged: list[Sentence] = []
    for k, (start, end) in enumerate(fold_bounds(len(sentences), folds)):
        fold_dir = workdir / f"fold-{k:02d}"
        fold_dir.mkdir(parents=True, exist_ok=True)
        train, model = fold_dir / "train.conll", fold_dir / "model"
        given, output = fold_dir / "input.conll", fold_dir / "output.conll"
        write_conll([*sentences[:start], *sentences[end:]], train)
        write_conll((_untagged(s) for s in sentences[start:end]), given)
        where = f"fold {k}"
        _run(train_cmd, where, train=train, model=model)
        _run(tag_cmd, where, model=model, input=given, output=output)
        if not output.is_file():
            raise DparseError(f"{where}: the tagger wrote no {output}")
        result = list(read_conll(output, fmt="conllx", require_heads=False))
        if len(result) != end - start:
            raise DparseError(
                f"{where}: the tagger returned {len(result)} sentences, expected {end - start}"
            )
        tagged.extend(
            _retagged(g, t, where) for g, t in zip(sentences[start:end], result, strict=True)
        )
        if progress:
            progress(k)
    return tagged
