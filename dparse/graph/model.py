"""The labeled arc-factored (first-order) graph-based model: scoring, parsing, saving.

A model is a vocabulary, a ``FeatureSpace`` (the layout of the hashed weight vector) and the
weights. A saved model is a directory holding ``weights.bin``, ``vocab.json``, ``config.yaml``
(the resolved experiment config it was trained with), ``templates.json`` (the version of the
first-order arc templates, dparse/_ext/arcfeatures.pyx: a model of another version is refused,
:mod:`dparse.templates`) and ``manifest.json``, written whole and checked on load by
:mod:`dparse.modeldir`. :func:`dparse.graph.load.load_model` loads a model of any
order.
"""

from __future__ import annotations

import copy
import mmap
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np

from dparse._ext.arcfeatures import FeatureSpace, feature_delta, score_arcs
from dparse.aligned import LINE_BYTES, aligned_copy
from dparse.conll import Sentence
from dparse.constraints import Constraints, checked, fixed_deprels
from dparse.decoders import Decoder
from dparse.errors import DparseError
from dparse.modeldir import (
    PRUNER_DIR,
    VOCAB_FILE,
    WEIGHTS_FILE,
    SavedModel,
    load_arrays,
    require_model_files,
    save_arrays,
)
from dparse.templates import ARC, check_templates, write_templates
from dparse.timer import ParseTimer
from dparse.vocab import EncodedSentence, Vocabulary

if TYPE_CHECKING:
    from dparse.calibration import TemperatureFit
    from dparse.graph.distribution import PartScores


def best_labels(label: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """The label ids int32 [n+1] of a tree's arcs from a label matrix int32 [n+1, n+1]."""
    labels = np.full(len(heads), -1, dtype=np.int32)
    labels[1:] = label[heads[1:], np.arange(1, len(heads))]
    return labels


class ArcPruner(Protocol):
    """What a first-order model asks of its pruner (:class:`dparse.graph.pruner.Pruner`)."""

    def allowed(self, enc: EncodedSentence) -> np.ndarray:
        """uint8 [n+1, n+1]: the arcs h -> m kept."""
        ...

    def write_files(self, directory: Path) -> None:
        """Save the pruner into ``directory``."""
        ...


def sparse_zeros(shape: tuple[int, ...]) -> np.ndarray:
    """A float64 array of zeros in an anonymous memory map, whose pages take memory only once
    written: a large part array of which a pruned sentence writes a small share (numpy asks
    the kernel for 2 MB pages for its own large arrays, so that scattered writes into one
    would each take 2 MB)."""
    count = int(np.prod(shape))
    memory = mmap.mmap(-1, max(8 * count, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return np.frombuffer(memory, dtype=np.float64, count=count).reshape(shape)


class PartScratch:
    """Reused memory for the float64 [n+1]^3 part arrays of one sentence at a time.

    ``take(n1, count)`` returns ``count`` zero-filled [n1, n1, n1] arrays carved from one
    buffer that outlives the sentence: no fresh allocation (and no page faults on fresh
    memory) per sentence, and only what the previous sentence was handed is cleared. The
    arrays stay valid until the next ``take``; use one scratch per thread. Arrays larger than
    ``LIMIT`` entries in all are allocated for their sentence alone, in an anonymous memory
    map (:func:`sparse_zeros`: memory only where written). With ``zeroed=False``
    nothing is cleared: the arrays hold what the sentences before left, for scorers and
    decoders that read only the parts the scorer writes (``Decoder.reads_pruned_parts``).

    >>> scratch = PartScratch()
    >>> sib, grand = scratch.take(3, 2)
    >>> sib.shape, float(grand.sum())
    ((3, 3, 3), 0.0)
    """

    LIMIT = 1 << 23  # entries kept at most (64 MB)

    def __init__(self, zeroed: bool = True) -> None:
        self._buffer = np.zeros(0)
        self._used = 0  # entries handed out by the last take (zeroed: all others are zero)
        self.zeroed = zeroed

    def take(self, n1: int, count: int) -> list[np.ndarray]:
        size = n1 ** 3
        need = size * count
        if need > self.LIMIT:
            return [sparse_zeros((n1, n1, n1)) for _ in range(count)]
        if need > self._buffer.size:
            self._buffer = np.zeros(min(self.LIMIT, max(need, 2 * self._buffer.size)))
        elif self.zeroed:
            self._buffer[: self._used].fill(0.0)
        self._used = need
        return [self._buffer[i * size : (i + 1) * size].reshape(n1, n1, n1)
                for i in range(count)]


class GraphModel(SavedModel):
    """Base of the graph-based models (first and second order): what parsing and training use.

    Subclasses have ``vocab`` and ``weights`` and implement ``size``, ``score_parts``,
    ``delta``, ``write_files`` and ``read_files``; ``predict``, ``parse``, ``save`` and
    ``load`` are shared.
    """

    vocab: Vocabulary
    weights: np.ndarray
    pruner: ArcPruner | None  # the first-order pruner, if the model prunes
    # whether score_parts' arc scores and its decoder make the model's tree (parse_marginals)
    gives_marginals: ClassVar[bool] = True
    # the temperature of its head probabilities fitted on dev at training (calibration.json)
    calibration: TemperatureFit | None = None

    @property
    def size(self) -> int:
        """Length of the weight vector."""
        raise NotImplementedError

    def allowed(self, enc: EncodedSentence) -> np.ndarray | None:
        """uint8 [n+1, n+1]: the arcs the model scores, those ``enc.allowed`` keeps (set in
        training, kept across epochs) or else its pruner's; None: every arc."""
        if enc.allowed is not None or self.pruner is None:
            return enc.allowed
        return self.pruner.allowed(enc)

    def score_parts(
        self, enc: EncodedSentence, weights: np.ndarray | None, cost_augmented: bool,
        scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Arc scores float64 [n+1, n+1] (best label included), best labels int32 [n+1, n+1]
        and the higher-order part arrays of the decoder contract (e.g. {"sib": [n+1]^3}),
        under ``weights`` (default: the model's), cost-augmented against the encoded gold tree
        if asked; part arrays come from ``scratch`` when given (valid until its next use)."""
        raise NotImplementedError

    def predict(
        self,
        enc: EncodedSentence,
        decoder: Decoder,
        single_root: bool = True,
        weights: np.ndarray | None = None,
        cost_augmented: bool = False,
        timer: ParseTimer | None = None,
        scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Heads int32 [n+1] (heads[0] == -1) and label ids int32 [n+1] (labels[0] == -1);
        the decoder gets the part arrays it accepts (a first-order decoder only the arc scores),
        made in ``scratch`` when given; ``timer`` accumulates scoring and decoding time."""
        _, label, _, heads = self.decode_parts(enc, decoder, single_root, weights,
                                               cost_augmented, timer, scratch)
        return heads, best_labels(label, heads)

    def decode_parts(
        self,
        enc: EncodedSentence,
        decoder: Decoder,
        single_root: bool = True,
        weights: np.ndarray | None = None,
        cost_augmented: bool = False,
        timer: ParseTimer | None = None,
        scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """What :meth:`predict` computes: the arc scores, best labels and the part arrays the
        decoder accepts (:meth:`score_parts`), and the decoded heads int32 [n+1]."""
        t0 = time.perf_counter()
        arc, label, parts = self.score_parts(enc, weights, cost_augmented, scratch)
        t1 = time.perf_counter()
        accepted = {k: v for k, v in parts.items() if k in decoder.parts}
        heads = decoder.decode(arc, single_root=single_root, **accepted)
        if timer is not None:
            timer.score += t1 - t0
            timer.decode += time.perf_counter() - t1
        return arc, label, accepted, heads

    def delta(
        self, enc: EncodedSentence, heads: np.ndarray, labels: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """phi(gold) - phi(predicted) as a sparse vector (indices int64, values float64)."""
        raise NotImplementedError

    def write_calibration(self, directory: Path) -> None:
        """Write the fitted temperature, if any, into the model directory being saved."""
        if self.calibration is not None:
            from dparse.calibration import write_calibration

            write_calibration(directory, self.calibration)

    def with_weights(self, weights: np.ndarray) -> GraphModel:
        """A copy with ``weights`` instead of the model's, sharing everything else (an empty
        vector: what a training worker is sent, scoring with its learner's weights)."""
        other = copy.copy(self)
        other.weights = weights
        return other

    def parse(
        self,
        sentences: Iterable[Sentence],
        decoder: Decoder,
        single_root: bool = True,
        timer: ParseTimer | None = None,
    ) -> Iterator[Sentence]:
        """Parse a stream of sentences, yielding copies with HEAD and DEPREL replaced;
        ``timer`` accumulates encoding, scoring and decoding time."""
        return self.parse_items(((sent, None) for sent in sentences), decoder, single_root,
                                timer)

    def parse_items(
        self,
        items: Iterable[tuple[Sentence, Constraints | None]],
        decoder: Decoder,
        single_root: bool = True,
        timer: ParseTimer | None = None,
        constrained: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> Iterator[Sentence]:
        """As :meth:`parse`, each sentence under its constraints (None: none): checked
        (InputError naming the sentence for a set that admits no tree of the decoder's kind),
        then decoded by ``constrained`` (:func:`dparse.graph.constrained.predict_constrained`,
        which :func:`~dparse.graph.constrained.parse_constrained` passes), the fixed labels
        written for their words; a sentence without constraints by :meth:`predict`."""
        timer = timer if timer is not None else ParseTimer()
        scratch = PartScratch(zeroed=decoder.reads_pruned_parts)
        for sent, given, enc in self.encoded(items, timer):
            constraints = checked(given, decoder.projective, single_root, decoder.name, sent)
            if constraints is None:
                heads, labels = self.predict(enc, decoder, single_root, timer=timer,
                                             scratch=scratch)
            elif constrained is None:
                raise ValueError("parse_items: constraints need the constrained predictor")
            else:
                heads, labels = constrained(self, enc, decoder, single_root, constraints,
                                            timer, scratch)
            yield self._parsed(sent, heads, labels, constraints, timer, time.perf_counter())

    def encoded(self, items: Iterable[tuple[Sentence, Constraints | None]], timer: ParseTimer
                 ) -> Iterator[tuple[Sentence, Constraints | None, EncodedSentence]]:
        """Each item with its sentence's encoding, one sentence at a time (a model that
        scores sentences in batches encodes and scores a batch here): what every loop over a
        stream of sentences reads them through (parse, marginals, k-best lists, the
        ensemble)."""
        for sent, given in items:
            yield sent, given, self._encode(sent, timer)

    def _encode(self, sent: Sentence, timer: ParseTimer) -> EncodedSentence:
        """The sentence encoded, the time added to ``timer.encode``."""
        t0 = time.perf_counter()
        enc = self.vocab.encode(sent)
        timer.encode += time.perf_counter() - t0
        return enc

    def _parsed(self, sent: Sentence, heads: np.ndarray, labels: np.ndarray,
                constraints: Constraints | None, timer: ParseTimer, t0: float) -> Sentence:
        """A copy of ``sent`` with ``heads`` and the label ids ``labels`` (the fixed labels of
        ``constraints`` kept); the time since ``t0`` added to ``timer.decode``, the sentence
        and its tokens counted."""
        names = self.vocab.labels
        deprels = [""] + [names[i] for i in labels[1:].tolist()]
        timer.decode += time.perf_counter() - t0
        timer.sentences += 1
        timer.tokens += len(sent)
        return sent.with_parse(heads, fixed_deprels(deprels, constraints))

    def fit_temperature(self, sentences: Iterable[Sentence], decoder: Decoder,
                        single_root: bool = True) -> TemperatureFit:
        """The temperature of :meth:`parse_marginals` under which the sentences' gold trees
        are most likely (:func:`dparse.calibration.fit_temperature` over the parts that the
        decoder's :class:`dparse.graph.distribution.TreeDistribution` reads)."""
        from dparse.calibration import fit_temperature
        from dparse.graph.distribution import TreeDistribution

        distribution = TreeDistribution.of(decoder, single_root)
        scratch = PartScratch()

        def scores(sentence: Sentence) -> PartScores:
            arc, _, parts = self.score_parts(self.vocab.encode(sentence), None, False, scratch)
            return distribution.parts(arc, parts)

        return fit_temperature(((scores(s), s.heads) for s in sentences),
                               distribution.log_partition, distribution.tree_score,
                               distribution.projective, distribution.single_root)

    def parse_marginals(
        self,
        sentences: Iterable[Sentence],
        decoder: Decoder,
        single_root: bool = True,
        timer: ParseTimer | None = None,
        temperature: float = 1.0,
    ) -> Iterator[tuple[Sentence, np.ndarray]]:
        """As :meth:`parse`, each parsed copy with its head probabilities float64 [n+1, n+1],
        ``probs[h, m] = P(h -> m)`` (column 0 and the diagonal 0), the marginals of p(tree) ∝
        exp(score(tree) / ``temperature``) over the parts the decoder reads
        (:class:`dparse.graph.distribution.TreeDistribution`: a first-order decoder's arcs over
        its kind of tree; a second-order decoder's arcs, siblings and grandparents over
        projective trees, exact for eisner2-*, an approximation for the non-projective dd2).
        Arcs its pruner removed have probability 0; a sentence where they leave no tree takes
        the decoded tree's arcs back (:meth:`TreeDistribution.marginals`)."""
        from dparse.graph.distribution import TreeDistribution

        if not self.gives_marginals:
            raise DparseError("arc marginals need a first- or second-order graph model")
        if not temperature > 0:
            raise DparseError(f"the temperature must be positive, got {temperature}")
        timer = timer if timer is not None else ParseTimer()
        distribution = TreeDistribution.of(decoder, single_root)
        # the distribution reads every part array entry that some tree holds
        scratch = PartScratch(zeroed=decoder.reads_pruned_parts or distribution.second_order)
        for sent, _, enc in self.encoded(((s, None) for s in sentences), timer):
            arc, label, parts, heads = self.decode_parts(enc, decoder, single_root, timer=timer,
                                                         scratch=scratch)
            t1 = time.perf_counter()
            try:
                probs = distribution.marginals(arc, parts, heads, temperature)
            except ArithmeticError as exc:  # ImpreciseMarginals
                raise DparseError(f"{sent.source}:{sent.lineno}: head probabilities at "
                                  f"temperature {temperature}: {exc}") from exc
            yield self._parsed(sent, heads, best_labels(label, heads), None, timer, t1), probs


@dataclass
class ArcFactoredModel(GraphModel):
    """Scores labeled arcs of a sentence with hashed first-order features (with a ``pruner``:
    only the arcs it keeps, as the second-order model does; ``pruner.first_order``)."""

    vocab: Vocabulary
    space: FeatureSpace
    weights: np.ndarray = field(repr=False)
    # scores and decodes only the arcs this pruner keeps (pruner.first_order); None: every arc
    pruner: ArcPruner | None = field(default=None, repr=False)

    def score(
        self,
        enc: EncodedSentence,
        weights: np.ndarray | None = None,
        cost_augmented: bool = False,
        allowed: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Arc scores float64 [n+1, n+1] (best label included) and best labels int32 [n+1, n+1].

        ``weights`` overrides the model's (training scores with the current float64 weights);
        ``cost_augmented`` adds the labeled Hamming cost against the encoded gold tree;
        ``allowed`` (uint8 [n+1, n+1]) scores only the arcs it marks, the others get -inf.
        """
        n = len(enc)
        arc = np.empty((n + 1, n + 1), dtype=np.float64)
        label = np.empty((n + 1, n + 1), dtype=np.int32)
        gold_heads = enc.heads if cost_augmented else None
        gold_labels = enc.labels if cost_augmented else None
        score_arcs(
            enc.tokens, enc.morph_ptr, enc.morph,
            self.weights if weights is None else weights, self.space,
            arc, label, gold_heads, gold_labels, allowed,
        )
        return arc, label

    @property
    def size(self) -> int:
        """Length of the weight vector."""
        return self.space.size

    def score_parts(
        self, enc: EncodedSentence, weights: np.ndarray | None, cost_augmented: bool,
        scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """``score`` with no higher-order parts, over the arcs ``enc.allowed`` keeps, or the
        model's pruner if it has one (-inf elsewhere)."""
        arc, label = self.score(enc, weights, cost_augmented, self.allowed(enc))
        return arc, label, {}

    def delta(
        self, enc: EncodedSentence, heads: np.ndarray, labels: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """phi(gold) - phi(predicted) as a sparse vector (indices int64, values float64)."""
        return feature_delta(enc.tokens, enc.morph_ptr, enc.morph, self.space,
                             enc.heads, enc.labels, heads, labels)

    def write_files(self, directory: Path) -> None:
        """Write the weights, the vocabulary and the templates' version into ``directory``
        (created if needed), and the pruner, if any, into its ``pruner/``."""
        directory.mkdir(parents=True, exist_ok=True)
        save_arrays(
            directory / WEIGHTS_FILE,
            weights=np.asarray(self.weights, dtype=np.float32),
            arc_bits=self.space.arc_bits,
            lab_bits=self.space.lab_bits,
            layout=self.space.layout,
        )
        self.vocab.save(directory / VOCAB_FILE)
        write_templates(directory, ARC)
        self.write_calibration(directory)
        if self.pruner is not None:
            self.pruner.write_files(directory / PRUNER_DIR)

    @classmethod
    def read_files(cls, directory: Path) -> ArcFactoredModel:
        """Read the files ``write_files`` wrote (a model without ``layout`` predates the
        blocked layout: hashed); the weights are float32, 64-byte aligned, memory-mapped
        read-only. The pruner, if any, is left to :func:`dparse.graph.load.load_model`."""
        require_model_files(directory, VOCAB_FILE)
        check_templates(directory, ARC)
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        data = load_arrays(directory / WEIGHTS_FILE)
        layout = str(data["layout"]) if "layout" in data else "hashed"
        space = FeatureSpace(int(data["arc_bits"]), int(data["lab_bits"]), len(vocab.labels),
                             layout)
        weights = data["weights"]
        if weights.dtype != np.float32 or weights.ctypes.data % LINE_BYTES:  # an older model
            weights = aligned_copy(weights, np.float32)
        if weights.shape[0] != space.size:
            raise DparseError(f"{directory}: weights do not match the feature space")
        return cls(vocab, space, weights)
