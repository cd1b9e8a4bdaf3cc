"""Tagging: UPOS, XPOS, FEATS and lemmas predicted from the words, before parsing.

- :mod:`dparse.tagging.features`: the word atoms and each column's feature templates;
- :mod:`dparse.tagging.lemma_rules`: lemmas as edit rules between form and lemma;
- :mod:`dparse.tagging.model`: a trained tagger and how it tags (hot loops in
  :mod:`dparse.tagging.tagger`);
- :mod:`dparse.tagging.training`: training it (``parser: tagger`` configs);
- :mod:`dparse.tagging.pipeline`: parsers trained on jackknifed predicted tags that carry
  their tagger (a ``tagger:`` section in a parser's config);
- :mod:`dparse.tagging.sections` and :mod:`dparse.tagging.checks`: the config sections of both
  (``tagging``, ``tagger``) and their checks;
- :mod:`dparse.tagging.family`: the family's record in the registry (:mod:`dparse.families`).
"""

# How a model that tags treats the input's LEMMA, UPOS, XPOS and FEATS (TaggerModel.tag_batch):
# auto predicts the columns the input leaves empty, predict all of them, keep none.
TAG_MODES = ("auto", "predict", "keep")
