"""The tagging family's config sections: ``tagging`` (a tagger's config) and ``tagger`` (the
tagger a parser trained on predicted tags carries). Data only, as :mod:`dparse.sections`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass
class TaggingConfig:
    """A tagger (``parser: tagger``, dparse.tagging): a word type seen at least
    ``dictionary_min_count`` times in training may take only the classes it took there; types
    seen fewer than ``ambiguity_min_count`` times read the unknown ambiguity class, as new
    words do; with ``ambiguity_folds`` k >= 2 a training word reads the ambiguity class that
    the other folds of a k-fold jackknife give its form; ``lexicon``: a (form, UPOS) pair
    lemmatized in training takes its most frequent lemma there instead of a predicted rule;
    ``draft_folds`` k >= 2: a draft UPOS pass first, whose tags of the words to the right the
    UPOS pass reads, jackknifed in k folds on the training data (0: no draft). The weights are
    exact, one per feature and class that training updated (dparse.tagging.tagger)."""

    dictionary_min_count: int = 1000000
    ambiguity_min_count: int = 1
    ambiguity_folds: int = 5
    lexicon: bool = True
    draft_folds: int = 5
    # Keys this section once had: key -> (the old default, what became of the key). A config
    # that gives the old default (every model saved before, which stores its whole config)
    # loads as if the key were absent; another value is an error that says why
    # (dparse.config reads ``retired_keys`` of every section).
    retired_keys: ClassVar[dict[str, tuple[Any, str]]] = {
        "bits": (22, "the tagger's weights are exact (one per feature and class seen in "
                     "training) since tagger format 2: delete the key"),
    }


@dataclass
class TaggerConfig:
    """The tagger of a parser trained on predicted tags (a pipeline model): ``config`` (a
    tagger config, relative to this config's file) or ``model`` (a trained tagger's directory,
    whose config trains the folds); the training file is tagged by a ``folds``-fold jackknife,
    dev by the whole tagger, which the parser's model directory then carries. Empty: gold tags
    (no tagger)."""

    config: str = ""
    model: str = ""
    folds: int = 10
