"""A trained neural network as a graph model: its arc scores (and of a second-order network its
sibling and grandparent arrays) go to the graph decoders through
:meth:`dparse.graph.model.GraphModel.score_parts`, so every graph decoder, k-best list,
marginal and constraint works on it unchanged.

``score_parts`` gives the biaffine arc scores (float64 [n+1, n+1]; -inf outside the arcs a
constrained parse allows) and each arc's best label by the biaffine label scorer (int32
[n+1, n+1]), so the decoded tree's labels are the label scorer's best for its heads. A plain
parse (:meth:`NeuralModel.predict`) decodes the arc scores and then labels only its tree's
arcs (:mod:`dparse.neural.labels`: the matrix's labels, but where two labels' scores agree
to float32 rounding). A second-order network (:mod:`dparse.neural.secondorder`) scores only
the arcs its first-order scores keep (:meth:`NeuralModel.allowed`; -inf elsewhere) and gives
the decoder the part arrays it reads, scored over them (0 elsewhere). A
network with tag heads (``neural.tag_heads``) writes its predicted UPOS, XPOS or FEATS into
the columns a sentence leaves empty (every value ``_``: words alone), as a pipeline's tagger
does by default (``--tags auto``); a column the input fills is kept. Parsing
scores sentences in batches of :data:`PARSE_BATCH` (each sentence's scores do not depend on
its batch: :mod:`dparse.neural.encoder`), by length in batches of similar lengths, each
distinct spelling's character vector computed once (:mod:`dparse.neural.charcache`).

A saved model is a directory: ``weights.bin`` (every tensor of the network as a float32 array
named by its parameter, :func:`dparse.modeldir.save_arrays`: no pickled code; with pretrained
vectors their frozen table ``encoder.pretrained`` too, so that the model parses without the
vectors file), ``vocab.json``
(:class:`dparse.neural.vocab.NeuralVocabulary`), ``network.json`` (the format version and the
``neural`` section the network was built from), ``config.yaml`` and ``manifest.json``. It
loads on any device; a model of another format version is refused with "retrain it".
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import torch

from dparse.conll import Sentence
from dparse.constraints import Constraints
from dparse.decoders import Decoder
from dparse.errors import DparseError
from dparse.graph.model import GraphModel, PartScratch
from dparse.modeldir import VOCAB_FILE, WEIGHTS_FILE, load_arrays, require_model_files, save_arrays
from dparse.neural.charcache import CharVectorCache
from dparse.neural.labels import LabelFeatures, flat_weight
from dparse.neural.network import Batch, ParserNetwork
from dparse.neural.secondorder import KINDS, fill_parts
from dparse.neural.sections import NeuralConfig
from dparse.neural.vocab import NeuralSentence, NeuralVocabulary
from dparse.outputs import write_text
from dparse.timer import ParseTimer

FORMAT_VERSION = 1
NETWORK_FILE = "network.json"
PARSE_BATCH = 256  # sentences read ahead and scored together when parsing
BATCH_NODES = 2048  # padded nodes of a batch the network scores at once


def select_device(name: str) -> torch.device:
    """The torch device of ``neural.device``; DparseError for ``cuda`` without a GPU."""
    if name == "cuda" and not torch.cuda.is_available():
        raise DparseError("neural.device: cuda asked for, but torch sees no CUDA GPU here "
                          "(use --device cpu)")
    return torch.device(name)


class NeuralModel(GraphModel):
    """The network (:class:`dparse.neural.network.ParserNetwork`) with its vocabulary and the
    ``neural`` section it was built from; ``weights`` is its tensors as a dict of arrays
    (what :class:`dparse.epochs.BestEpoch` keeps)."""

    pruner = None

    def __init__(self, vocab: NeuralVocabulary, settings: NeuralConfig,
                 network: ParserNetwork) -> None:
        self.vocab = vocab
        self.settings = settings
        self.network = network
        self.device = next(network.parameters()).device
        self.char_cache = CharVectorCache()

    @property
    def weights(self) -> dict[str, np.ndarray]:  # type: ignore[override]
        """Copies of the network's tensors, float32 arrays by parameter name."""
        return {name: t.detach().cpu().numpy().astype(np.float32, copy=True)
                for name, t in self.network.state_dict().items()}

    @weights.setter
    def weights(self, arrays: dict[str, np.ndarray]) -> None:
        state = {name: torch.from_numpy(np.array(a, dtype=np.float32)) for name, a in
                 arrays.items()}
        self.network.load_state_dict(state)

    def score_batch(self, sentences: Sequence[NeuralSentence]) -> None:
        """Score ``sentences``, keeping each one's arc scores float64 [n+1, n+1] and label
        features (:class:`LabelFeatures`) in its ``scores``: sorted by length and cut into
        batches of at most :data:`BATCH_NODES` padded nodes, so that little is spent on
        padding."""
        self.network.eval()
        flat = flat_weight(self.network.labels.weight.detach().cpu().numpy())
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        start = 0
        while start < len(order):
            end = start + 1
            while (end < len(order)
                   and (end + 1 - start) * (len(sentences[order[end]]) + 1) <= BATCH_NODES):
                end += 1
            self._score_group([sentences[i] for i in order[start:end]], flat)
            start = end

    def _score_group(self, sentences: Sequence[NeuralSentence], flat: np.ndarray) -> None:
        """:meth:`score_batch` of one batch (with the predicted tags of the tag heads);
        ``flat``: the label weights as :func:`flat_weight` gives them."""
        with torch.inference_mode():
            batch = Batch.of(sentences, self.device)
            batch.char_vectors = self.char_cache.vectors(self.network.encoder.chars, sentences,
                                                         batch.words.shape[1], self.device)
            x, arcs = self.network(batch)
            dep, head = (f.cpu().numpy() for f in self.network.labels.features(x))
            tags = {column: scores.argmax(dim=2).cpu().numpy()
                    for column, scores in self.network.tag_scores(x).items()}
            parts = self.network.batch_parts(x)
            factors = {} if parts is None else {kind: p.cpu().numpy()
                                                for kind, p in parts.factors.items()}
        arcs_np = arcs.double().cpu().numpy()
        for i, enc in enumerate(sentences):
            n1 = len(enc) + 1
            enc.scores = (np.ascontiguousarray(arcs_np[i, :n1, :n1]),
                          LabelFeatures(np.ascontiguousarray(dep[i, :n1]),
                                        np.ascontiguousarray(head[i, :n1]), flat))
            enc.predicted = {column: [self.vocab.predicts[column][t] for t in ids[i, 1:n1].tolist()]
                             for column, ids in tags.items()}
            enc.factors = {kind: np.ascontiguousarray(p[:, i, :n1])
                           for kind, p in factors.items()}

    def _scores(self, enc: NeuralSentence, weights: np.ndarray | None, cost_augmented: bool
                ) -> tuple[np.ndarray, LabelFeatures]:
        """The arc scores (-inf outside ``enc.allowed`` when set) and label features, scored
        now unless its batch was. ``weights`` and cost augmentation are the linear models'
        (a network trains by :mod:`dparse.neural.training`): DparseError."""
        if weights is not None or cost_augmented:
            raise DparseError("a neural model scores with its own network, without cost "
                              "augmentation")
        if enc.scores is None:
            self.score_batch([enc])
        assert enc.scores is not None
        arc, features = enc.scores
        if enc.allowed is not None:
            arc = np.where(enc.allowed > 0, arc, -np.inf)
        return arc, features

    def allowed(self, enc: NeuralSentence) -> np.ndarray | None:  # type: ignore[override]
        """uint8 [n+1, n+1]: the arcs the model scores: ``enc.allowed`` when set, else (second
        order) those its first-order scores keep (:func:`dparse.neural.secondorder.kept_arcs`);
        None: every arc (first order)."""
        if enc.allowed is not None or self.network.second_order is None:
            return enc.allowed
        return self._kept(enc, self._scores(enc, None, False)[0])

    def _kept(self, enc: NeuralSentence, arc: np.ndarray) -> np.ndarray:
        """:meth:`allowed` of a second-order network, from the sentence's arc scores."""
        assert self.network.second_order is not None
        return enc.allowed if enc.allowed is not None else self.network.second_order.kept_arcs(arc)

    def _decoder_inputs(self, enc: NeuralSentence, kinds: Sequence[str],
                        scratch: PartScratch | None, weights: np.ndarray | None = None,
                        cost_augmented: bool = False
                        ) -> tuple[np.ndarray, LabelFeatures, dict[str, np.ndarray]]:
        """The arc scores and label features (:meth:`_scores`) and (second order) the part
        arrays of ``kinds`` (in ``scratch`` when given), over the arcs :meth:`allowed` keeps
        (-inf elsewhere, and no part holding one scored)."""
        arc, features = self._scores(enc, weights, cost_augmented)
        if self.network.second_order is None or not kinds:
            return arc, features, {}
        allowed = self._kept(enc, arc)
        arc = np.where(allowed > 0, arc, -np.inf)
        arrays = (scratch or PartScratch()).take(len(arc), len(kinds))
        parts = dict(zip(kinds, arrays, strict=True))
        fill_parts(enc.factors, allowed, parts)
        return arc, features, parts

    def score_parts(
        self, enc: NeuralSentence, weights: np.ndarray | None, cost_augmented: bool,  # type: ignore[override]
        scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """The arc scores and every arc's best label, and of a second-order network its
        sibling and grandparent arrays ({"sib": [n+1]^3, "grand": [n+1]^3}, over the arcs
        it keeps: :meth:`allowed`; in ``scratch`` when given)."""
        arc, features, parts = self._decoder_inputs(enc, KINDS, scratch, weights,
                                                    cost_augmented)
        return arc, features.matrix(), parts

    def predict(
        self, enc: NeuralSentence, decoder: Decoder, single_root: bool = True,  # type: ignore[override]
        weights: np.ndarray | None = None, cost_augmented: bool = False,
        timer: ParseTimer | None = None, scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Heads int32 [n+1] decoded from the arc scores (and, of a second-order network, the
        part arrays the decoder reads), then the labels of their arcs only (:meth:`score_parts`'
        matrix's, but where two labels tie to float32 rounding)."""
        t0 = time.perf_counter()
        kinds = [kind for kind in KINDS if kind in decoder.parts]
        arc, features, parts = self._decoder_inputs(enc, kinds, scratch, weights,
                                                    cost_augmented)
        t1 = time.perf_counter()
        heads = decoder.decode(arc, single_root=single_root, **parts)
        t2 = time.perf_counter()
        labels = features.at_heads(heads)
        if timer is not None:
            timer.score += t1 - t0 + time.perf_counter() - t2
            timer.decode += t2 - t1
        return heads, labels

    def encoded(self, items: Iterable[tuple[Sentence, Constraints | None]],
                 timer: ParseTimer) -> Iterator[tuple[Sentence, Constraints | None,
                                                      NeuralSentence]]:
        """Each item with its sentence's encoding, the sentences encoded and scored
        :data:`PARSE_BATCH` at a time (the parse of a batch then reads its scores); a
        sentence with the tag heads' predictions in the columns it leaves empty."""
        iterator = iter(items)
        while chunk := list(itertools.islice(iterator, PARSE_BATCH)):
            encoded = [self._encode(sent, timer) for sent, _ in chunk]
            nonempty = [enc for enc in encoded if len(enc)]
            if nonempty:
                t0 = time.perf_counter()
                self.score_batch(nonempty)
                timer.score += time.perf_counter() - t0
            for (sent, given), enc in zip(chunk, encoded, strict=True):
                empty = {column: tags for column, tags in enc.predicted.items()
                         if all(value == "_" for value in getattr(sent, column))}
                yield (sent.with_tags(**empty) if empty else sent), given, enc

    def write_files(self, directory: Path) -> None:
        """Write the network's tensors, the vocabulary and ``network.json``."""
        directory.mkdir(parents=True, exist_ok=True)
        save_arrays(directory / WEIGHTS_FILE, **self.weights)
        self.vocab.save(directory / VOCAB_FILE)
        record = {"format_version": FORMAT_VERSION,
                  "neural": dataclasses.asdict(self.settings)}
        write_text(directory / NETWORK_FILE, json.dumps(record, indent=1, sort_keys=True) + "\n")

    @classmethod
    def read_files(cls, directory: Path, device: str = "cpu") -> NeuralModel:  # type: ignore[override]
        """Read what :meth:`write_files` wrote, onto ``device``; DparseError (retrain it) for
        another format version or tensors that do not fit the recorded network."""
        require_model_files(directory, VOCAB_FILE, NETWORK_FILE)
        try:
            record = json.loads((directory / NETWORK_FILE).read_text(encoding="utf-8"))
            version = record["format_version"]
            settings = NeuralConfig(**record["neural"])
        except (ValueError, KeyError, TypeError) as exc:
            raise DparseError(f"{directory / NETWORK_FILE}: damaged ({exc}); retrain the "
                              "model") from None
        if version != FORMAT_VERSION:
            raise DparseError(f"{directory}: a neural model of format version {version}; this "
                              f"dparse reads version {FORMAT_VERSION}: retrain it")
        vocab = NeuralVocabulary.load(directory / VOCAB_FILE)
        model = cls(vocab, settings, ParserNetwork(settings, vocab))
        try:
            model.weights = dict(load_arrays(directory / WEIGHTS_FILE))
        except RuntimeError as exc:  # missing, unexpected or misshapen tensors
            raise DparseError(f"{directory / WEIGHTS_FILE}: does not fit the network "
                              f"({str(exc).splitlines()[0]}); retrain the model") from None
        model.network.to(select_device(device))
        model.device = torch.device(device)
        return model
