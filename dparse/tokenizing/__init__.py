"""Tokenizing: raw text into sentences, tokens and syntactic words, before tagging and parsing.

- :mod:`dparse.tokenizing.rawtext`: the raw text of a treebank file, its tokens' layout in it,
  UD's spacing marks;
- :mod:`dparse.tokenizing.chars`: a text as the loops read it (lowered code points, classes);
- :mod:`dparse.tokenizing.expander`: multiword tokens into words (dictionary, suffix rules);
- :mod:`dparse.tokenizing.model`: a trained tokenizer, how it tokenizes, its CoNLL-U (hot loops
  in :mod:`dparse.tokenizing.segmenter`);
- :mod:`dparse.tokenizing.training`: training it (``parser: tokenizer`` configs);
- :mod:`dparse.tokenizing.sections`, :mod:`dparse.tokenizing.checks`: its config section
  (``tokenizing``) and its check; :mod:`dparse.tokenizing.family`: its record in the registry.
"""
