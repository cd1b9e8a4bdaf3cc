"""The shift-reduce parser's config section ``shiftreduce`` (the easy-first parser reads only
the core sections). Data only, as :mod:`dparse.sections`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ShiftReduceConfig:
    """The beam shift-reduce parser (``parser: shiftreduce``, dparse.transition): transition
    ``system`` (nonspurious: Hayashi et al. 2013's arc-standard without spurious ambiguity, or
    spurious: plain arc-standard), ``beam`` width, perceptron ``update`` (early or
    max-violation), ``force_gold``: keep the gold state in the beam when parsing (the
    input's heads; for training forests that must contain the gold tree), and ``upos_pair``:
    with ``features.tag`` xpos, the templates read the pair (XPOS, UPOS) as the tag."""

    system: str = "nonspurious"
    beam: int = 12
    update: str = "early"
    force_gold: bool = False
    upos_pair: bool = False
