"""The tokenizing family's config section: ``tokenizing`` (a tokenizer's config). Data only, as
:mod:`dparse.sections`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TokenizingConfig:
    """A tokenizer (``parser: tokenizer``, dparse.tokenizing): ``bits``, the weight vector's
    size as a power of two (each of its ``2 ** bits`` buckets holds three weights, one per
    character label); ``expander_min_count``, how often a suffix must end training tokens for
    the multiword-token expander to keep a rule for it (dparse.tokenizing.expander)."""

    bits: int = 20
    expander_min_count: int = 2
