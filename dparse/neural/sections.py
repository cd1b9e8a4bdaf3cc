"""The ``neural`` config section (data only; checked by :mod:`dparse.neural.checks`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class NeuralConfig:
    """A neural parser's network, loss and optimizer (``parser: neural``).

    Encoder: word embeddings of ``word_dim`` (words seen fewer than ``min_count`` times in
    training are unknown; each training word is replaced by the unknown word with probability
    ``word_dropout``), a character CNN (``char_dim`` embeddings, ``char_filters`` filters of
    width ``char_kernel``, max-pooled), the input's tags as ``tag_dim`` embeddings of each
    column ``tags`` names (``none``: words alone; else ``upos``, ``xpos`` and ``feats`` joined
    by ``+``; a FEATS value is the sum of its features' embeddings), and ``lstm_layers``
    BiLSTM layers of ``lstm_dim`` units a direction. Scorers: a biaffine arc scorer over
    ``arc_dim`` MLP features and a biaffine label scorer over ``label_dim`` ones; ``dropout``
    everywhere.
    ``tag_heads``: the token columns the network also predicts from its BiLSTM (``none``, or
    ``upos``, ``xpos`` and ``feats`` joined by ``+``: a linear layer and a softmax each, their
    cross-entropy added to the loss); a parse writes them into the columns its input leaves
    empty.
    ``vectors``: a file of pretrained word vectors (word2vec or fastText, text or ``.bin``:
    :mod:`dparse.neural.vectors`; a relative path starts at the data root, as the ``data``
    section's), of which the first ``vectors_max`` distinct normalized words are kept in a
    frozen table, projected to ``word_dim`` and added to the trained word embeddings (Dozat
    and Manning 2017); the model holds them (the file is not read at parse time). None: none.
    Loss: ``local`` (head selection: each word's head by cross-entropy), ``crf`` (the tree
    CRF over the decoder's kind of tree: projective for a projective decoder) or ``hinge``
    (the structured hinge loss, cost-augmented decoding by the config's decoder: training
    with the decoder it parses with), plus the labels' cross-entropy at the gold heads.
    Optimizer: Adam (``lr``, ``beta2``), gradients clipped to norm ``clip``, batches of about
    ``batch_tokens`` words of sentences of similar length. ``schedule``: the learning rate
    over the run, ``constant`` or ``linear`` (from ``lr`` down to 0 at the last step).
    ``average``: 0 (off) or the decay of an exponential moving average of the weights,
    updated after every step (e.g. 0.999, an average over about the last thousand steps),
    which dev scores and the saved model use in place of the trained weights.
    Second order (``order: 2``; 1: arcs only): sibling and grandparent scorers, each a
    triaffine product of three MLP projections of ``part_dim`` units (and rank), for the
    second-order decoders (:mod:`dparse.neural.secondorder`), over the arcs the first-order
    scores keep (each word's heads of head-softmax probability at least ``prune_threshold``
    times its best head's, at most ``prune_top_k``); trained by the first-order head-selection
    loss plus the structured hinge loss of the whole score (``loss: hinge``).
    ``threads`` (torch's CPU threads) and ``device`` (``cpu`` or ``cuda``) are where training
    and parsing run (parse-time keys); the CPU is the reference.
    """

    word_dim: int = 100
    min_count: int = 2
    word_dropout: float = 0.25
    char_dim: int = 50
    char_filters: int = 100
    char_kernel: int = 3
    tags: str = "none"
    tag_dim: int = 50
    tag_heads: str = "none"
    vectors: str | None = None
    vectors_max: int = 200_000
    lstm_dim: int = 200
    lstm_layers: int = 2
    arc_dim: int = 400
    label_dim: int = 100
    dropout: float = 0.33
    loss: str = "local"
    lr: float = 0.002
    beta2: float = 0.9
    clip: float = 5.0
    schedule: str = "constant"
    average: float = 0.0
    batch_tokens: int = 2000
    order: int = 1
    part_dim: int = 100
    prune_top_k: int = 10
    prune_threshold: float = 0.001
    threads: int = 1
    device: str = "cpu"
