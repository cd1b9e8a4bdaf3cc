"""Which token columns (LEMMA, UPOS, XPOS, FEATS) a model reads, decided at training time.

A model must not learn from a column that the files it will parse leave empty: UD
Portuguese-Bosque's training file as rebuilt here fills XPOS on 94% of its tokens (fine tags with
syntactic-function marks such as ``PRP|@N<``), its dev and test files on none, and a first-order
model trained on that XPOS loses 4.4 UAS on test against one trained without it.

``data.columns`` says what to read: ``auto`` (the default) every column except those the dev
file fills on less than half the share of tokens the training file fills (:data:`MIN_DEV_SHARE`;
without a dev file, every column), ``all``, or a comma-separated list of the columns read. An
unread column is blanked (``_``) in the training sentences before anything learns from them (the
vocabulary, the POS-column choice of :mod:`dparse.postags`, pruners) and, through the model's
:class:`dparse.vocab.Vocabulary`, in every sentence the model encodes later; the files written
keep their columns as read. A model records the share of its training tokens that filled each
column; ``dparse parse`` warns when its input fills a column the model reads far less often
(:func:`input_gaps`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from dparse.conll import Sentence
from dparse.errors import ConfigError

COLUMNS = ("lemma", "upos", "xpos", "feats")  # Sentence attributes a model may read
AUTO = "auto"
ALL = "all"
MIN_DEV_SHARE = 0.5  # auto: a column is read if dev fills >= this times training's share
MIN_INPUT_TOKENS = 100  # parse: inputs shorter than this are not judged
INPUT_SAMPLE = 500  # parse --jobs N: sentences read ahead to judge the input


def filled_count(values: list[str]) -> int:
    """How many of ``values`` are not missing (``_`` or empty)."""
    return len(values) - values.count("_") - values.count("")


class ColumnCounter:
    """Counts the tokens of sentences and, per column of :data:`COLUMNS`, those that fill it."""

    def __init__(self) -> None:
        self.tokens = 0
        self.filled = dict.fromkeys(COLUMNS, 0)

    @classmethod
    def of(cls, sentences: Iterable[Sentence]) -> ColumnCounter:
        """A counter over all of ``sentences``."""
        counter = cls()
        for _ in counter.through(sentences):
            pass
        return counter

    def through(self, sentences: Iterable[Sentence]) -> Iterator[Sentence]:
        """Yield ``sentences``, counting each as it passes."""
        for s in sentences:
            self.tokens += len(s)
            for column in COLUMNS:
                self.filled[column] += filled_count(getattr(s, column))
            yield s

    def shares(self) -> dict[str, float]:
        """Column -> share (0..1) of the counted tokens that fill it (0.0 with no tokens)."""
        return {c: self.filled[c] / self.tokens if self.tokens else 0.0 for c in COLUMNS}


def parse_columns_setting(setting: str) -> tuple[str, ...] | None:
    """The columns an explicit ``data.columns`` list names (in :data:`COLUMNS` order), or None
    for ``auto``; ``all`` names every column. Raises ConfigError for anything else."""
    if setting == AUTO:
        return None
    if setting == ALL:
        return COLUMNS
    names = [c.strip() for c in setting.split(",") if c.strip()]
    unknown = sorted(set(names) - set(COLUMNS))
    if unknown:
        raise ConfigError(f"data.columns: unknown column(s) {', '.join(unknown)}; use auto, "
                          f"all or a comma-separated subset of {', '.join(COLUMNS)}")
    return tuple(c for c in COLUMNS if c in names)


def unread_columns(setting: str, train: Sequence[Sentence], dev: Sequence[Sentence]
                   ) -> tuple[tuple[str, ...], list[str]]:
    """(columns not read, one reason per column for the log) for a ``data.columns`` setting,
    ``auto`` decided on the training and dev sentences (module doc)."""
    read = parse_columns_setting(setting)
    if read is not None:
        unread = tuple(c for c in COLUMNS if c not in read)
        return unread, [f"{c.upper()} not read (data.columns: {setting})" for c in unread]
    if not dev:
        return (), []
    unread, reasons = [], []
    train_shares, dev_shares = ColumnCounter.of(train).shares(), ColumnCounter.of(dev).shares()
    for column in COLUMNS:
        in_train, in_dev = train_shares[column], dev_shares[column]
        if in_dev < MIN_DEV_SHARE * in_train:
            unread.append(column)
            reasons.append(f"{column.upper()} not read: filled on {100 * in_train:.1f}% of the "
                           f"training tokens but {100 * in_dev:.1f}% of the dev tokens "
                           "(data.columns: auto; set data.columns to read it anyway)")
    return tuple(unread), reasons


def blank_columns(sentences: Sequence[Sentence], columns: Sequence[str]) -> list[Sentence]:
    """Copies of ``sentences`` with every value of ``columns`` replaced by ``_`` (the same
    objects when ``columns`` is empty); the sentences' lines, as written out, are kept."""
    if not columns:
        return list(sentences)
    return [s.with_blanks(columns) for s in sentences]


def input_gaps(trained: dict[str, float] | None, unread: Sequence[str],
               counter: ColumnCounter, source: str) -> list[str]:
    """One warning per column the model reads that the input counted by ``counter`` fills on
    less than :data:`MIN_DEV_SHARE` times the share of training tokens that filled it (none
    for a model without recorded shares or an input under :data:`MIN_INPUT_TOKENS` tokens)."""
    if trained is None or counter.tokens < MIN_INPUT_TOKENS:
        return []
    gaps = []
    for column, share in counter.shares().items():
        if column not in unread and share < MIN_DEV_SHARE * trained.get(column, 0.0):
            gaps.append(f"{source}: {column.upper()} is filled on {100 * share:.1f}% of its "
                        f"tokens against {100 * trained[column]:.1f}% of the model's training "
                        "tokens, and the model reads it: expect lower accuracy (trained with "
                        "a dev file like this input, a model leaves the column out: "
                        "data.columns: auto)")
    return gaps
