"""Tokenizing: raw text into sentences, tokens and syntactic words, before tagging and parsing.

- :mod:`dparse.tokenizing.rawtext`: the raw text of a treebank file, its tokens' layout in it,
  UD's spacing marks;
- :mod:`dparse.tokenizing.chars`: a text as the loops read it (lowered code points, classes);
- :mod:`dparse.tokenizing.expander`: multiword tokens into words (dictionary, suffix rules);
- :mod:`dparse.tokenizing.model`: a trained tokenizer, how it tokenizes, its CoNLL-U (hot loops
  in :mod:`dparse.tokenizing.segmenter`);
- :mod:`dparse.tokenizing.training`: training it (``parser: tokenizer`` configs);
- :mod:`dparse.tokenizing.textfiles`: text files in, CoNLL-U out (``dparse tokenize``);
- :mod:`dparse.tokenizing.carried`: models that carry a tokenizer (a ``tokenizer:`` section),
  raw text read through it (``--format raw`` of ``dparse parse`` and ``dparse tag``);
- :mod:`dparse.tokenizing.sections`, :mod:`dparse.tokenizing.checks`: its config sections
  (``tokenizing``, ``tokenizer``) and their check; :mod:`dparse.tokenizing.family`: its
  record in the registry.
"""
