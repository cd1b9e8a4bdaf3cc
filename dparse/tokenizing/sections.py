"""The tokenizing family's config sections: ``tokenizing`` (a tokenizer's config) and
``tokenizer`` (the tokenizer a parser or tagger model carries). Data only, as
:mod:`dparse.sections`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TokenizingConfig:
    """A tokenizer (``parser: tokenizer``, dparse.tokenizing): ``bits``, the weight vector's
    size as a power of two (each of its ``2 ** bits`` buckets holds three weights, one per
    character label); ``expander_min_count``, how often a suffix must end training tokens for
    the multiword-token expander to keep a rule for it (dparse.tokenizing.expander);
    ``vocab_folds``: in training, sentence k reads the vocabulary of the tokens of the
    sentences outside its fold k mod ``vocab_folds`` (a jackknife), so that it meets unknown
    tokens about as often as new text does."""

    bits: int = 20
    expander_min_count: int = 2
    vocab_folds: int = 10


@dataclass
class TokenizerConfig:
    """The tokenizer a parser (or tagger) model carries, for raw text (``--format raw`` of
    ``dparse parse`` and ``dparse tag``): ``model``, a trained tokenizer's directory (``parser:
    tokenizer``), copied into the model directory's ``tokenizer/``. Empty: none."""

    model: str = ""
