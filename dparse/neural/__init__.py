"""Neural scores for the graph decoders (``parser: neural``, the ``neural`` extra: PyTorch).

A BiLSTM over words, characters and (optionally) UPOS tags scores every arc with a biaffine
scorer and every arc's labels with a biaffine label scorer, and (``neural.order: 2``) sibling
and grandparent parts with triaffine scorers over the arcs its first-order scores keep; the
scores go, as a graph model's ``score_parts`` gives them, to the registered graph decoders
unchanged (cle, eisner, eisner2-*, dd2, bgi, cube, k-best, marginals, constraints).
Modules: ``sections`` (the ``neural`` config section),
``checks`` (its check), ``vocab`` (words, characters, tags, labels and the encoding of a
sentence), ``vectors`` (pretrained word vectors' files), ``encoder`` (the embeddings and the
BiLSTM), ``biaffine`` (the arc and label scorers), ``secondorder`` (the sibling and
grandparent scorers, their pruning and part arrays), ``network`` (the whole network), ``crf``
(the tree CRF: log-partition and marginals by the Matrix-Tree Theorem and the inside
algorithm), ``losses``, ``model`` (a trained network as a graph model, its files),
``training``, ``family`` (the registration). Only ``sections``, ``checks``, ``vectors`` and
``family`` import without torch.
"""

from __future__ import annotations

from dparse.errors import DparseError

EXTRA = "pip install 'dparse[neural]'"


def require_torch() -> None:
    """DparseError naming the ``dparse[neural]`` extra when PyTorch is missing."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise DparseError(f"neural parsers (parser: neural) need PyTorch, which is not "
                          f"installed: {EXTRA}") from None
