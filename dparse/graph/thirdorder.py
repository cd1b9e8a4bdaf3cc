"""The third-order graph-based model (Zhang and McDonald 2012): labeled arcs plus the
higher-order feature groups of Section 5.1, scored on the fly as the ``cube`` chart combines
items (config ``features.order: 3``; features in dparse/graph/o3features.pyx).

Parts: the labeled arc (the first-order unlabeled arc features of arcfeatures.pyx plus the
label rows of o3features.pyx; with ``features.first_order_labels`` the pruner's best label of
the arc is a stacked label feature: arcfeatures.pyx gives a first-order model's best label but
not its per-label scores), and the groups named in ``features.groups`` (sib, grand, trisib,
gsib, sibgrand, valency, position), with label tuples in them if ``features.label_tuples``. A
first-order pruner (:class:`dparse.graph.pruner.Pruner`) limits the arcs; each kept arc carries
its ``features.labels_per_arc`` best labels (by labeled arc score) into the chart.

Decoders: ``cube`` (options k, recombination), labeled, every group; or ``eisner3-outermost``,
exact, unlabeled higher-order parts (groups sib, grand, trisib, gsib without label tuples: the
exact baseline of the paper), each arc then taking its best label.

Weights, one flat vector: the first-order space (arc features; its own label rows are the
minimum and unused), then 2**label_bits rows of L label weights, then 2**ho_bits higher-order
weights. A saved model directory holds them, the vocabulary, the resolved config, the versions
of the first-order and third-order templates (``templates.json``: dparse/_ext/arcfeatures.pyx
and dparse/graph/o3features.pyx; a model of other versions is refused, :mod:`dparse.templates`)
and the pruner (``pruner/``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from dparse._ext.arcfeatures import FeatureSpace, arc_list_indices, arc_list_scores
from dparse.config import ExperimentConfig
from dparse.decoders import ConfiguredDecoder, Decoder
from dparse.errors import DparseError
from dparse.graph.decoders import CubePruning
from dparse.graph.eisner import eisner
from dparse.graph.eisner3 import eisner3_scorer
from dparse.graph.model import GraphModel, PartScratch
from dparse.graph.o3features import (
    O3ChartScorer,
    O3PartScorer,
    O3Sentence,
    tree_feature_indices,
)
from dparse.graph.pruner import Pruner
from dparse.graph.thirdorder_settings import ThirdOrderSettings, check_decoder_fits, parse_groups
from dparse.modeldir import (
    PRUNER_DIR,
    PRUNER_FILE,
    VOCAB_FILE,
    WEIGHTS_FILE,
    load_arrays,
    require_model_files,
    save_arrays,
)
from dparse.templates import ARC, O3, check_templates, write_templates
from dparse.timer import ParseTimer
from dparse.vocab import EncodedSentence, Vocabulary

FIRST_LABEL_BITS = 8  # the first-order space's own label rows: unused, kept minimal


def cube_of(decoder: Decoder) -> CubePruning:
    """The configured ``cube`` decoder as a CubePruning with its options applied."""
    if isinstance(decoder, ConfiguredDecoder):
        base = decoder.decoder
        assert isinstance(base, CubePruning)
        return CubePruning(int(decoder.options.get("k", base.k)),
                           bool(decoder.options.get("recombination", base.recombination)))
    assert isinstance(decoder, CubePruning)
    return decoder


class ThirdOrderModel(GraphModel):
    """Labeled arcs and third-order feature groups over one hashed weight vector."""

    gives_marginals = False  # its tree comes from predict, not from score_parts' arcs

    def __init__(self, vocab: Vocabulary, first: FeatureSpace, weights: np.ndarray,
                 pruner: Pruner, settings: ThirdOrderSettings) -> None:
        self.vocab = vocab
        self.first = first
        self.pruner = pruner
        self.settings = settings
        self.label_offset = int(first.size)
        self.ho_offset = self.label_offset + (1 << settings.label_bits) * len(vocab.labels)
        if weights.shape[0] != self.size:
            raise DparseError("third-order weights do not match the feature space")
        self.weights = weights
        self._last: tuple[EncodedSentence | None, O3Sentence | None] = (None, None)

    @classmethod
    def untrained(cls, vocab: Vocabulary, cfg: ExperimentConfig,
                  pruner: Pruner) -> ThirdOrderModel:
        first = FeatureSpace(cfg.features.arc_bits, FIRST_LABEL_BITS, len(vocab.labels))
        settings = ThirdOrderSettings.from_config(cfg)
        size = (first.size + (1 << settings.label_bits) * len(vocab.labels)
                + (1 << settings.ho_bits))
        return cls(vocab, first, np.zeros(size, dtype=np.float32), pruner, settings)

    @property
    def size(self) -> int:
        return self.ho_offset + (1 << self.settings.ho_bits)

    @property
    def part_names(self) -> tuple[str, ...]:
        """The kinds of parts it scores besides arcs (for reports)."""
        return ("label", *self.settings.groups)

    # -- scoring ------------------------------------------------------------------------------

    def sentence(self, enc: EncodedSentence, weights: np.ndarray | None = None,
                 cost_augmented: bool = False, arcs: bool = True,
                 single_root: bool = True) -> O3Sentence:
        """The sentence under ``weights`` (default the model's): labeled scores of the arcs the
        pruner keeps (``enc.allowed`` if set), plus the arcs of one projective tree with the
        fewest pruned arcs (so that the charts always have a tree of the asked root kind),
        cost-augmented against the encoded gold tree if asked; ``arcs=False`` scores no arc
        (for feature extraction only)."""
        w = self.weights if weights is None else weights
        n1 = len(enc) + 1
        unlabeled = np.full((n1, n1), -np.inf)
        s = self.settings
        first = None
        if s.first_order_labels or (arcs and enc.allowed is None):
            first_arc, first = self.pruner.model.score(enc)
        if arcs:
            allowed = (enc.allowed if enc.allowed is not None
                       else self.pruner.allowed_from_scores(first_arc))
            rescue = eisner(np.where(allowed > 0, 0.0, -1.0), single_root)
            allowed = allowed.astype(bool)
            allowed[rescue[1:], np.arange(1, n1)] = True
            heads, mods = np.nonzero(allowed)
            keep = heads != mods
            heads = heads[keep].astype(np.int32)
            mods = mods[keep].astype(np.int32)
            unlabeled[heads, mods] = arc_list_scores(enc.tokens, enc.morph_ptr, enc.morph,
                                                     w[: self.first.size], self.first, heads,
                                                     mods)
        gold = (enc.heads, enc.labels) if cost_augmented else (None, None)
        if not s.first_order_labels:
            first = None
        return O3Sentence(enc.tokens, w, unlabeled, self.label_offset, s.label_bits,
                          self.ho_offset, s.ho_bits, len(self.vocab.labels), s.groups,
                          s.label_tuples, s.labels_per_arc, *gold, first)

    def decode(self, sent: O3Sentence, decoder: Decoder,
               single_root: bool) -> tuple[np.ndarray, np.ndarray, float]:
        """Heads int32 [n+1], label ids int32 [n+1] and the tree's score under ``sent``."""
        check_decoder_fits(self.settings, decoder.name)
        if decoder.name == "cube":
            return cube_of(decoder).parse(sent.arc, O3ChartScorer(sent), sent.candidates,
                                          single_root=single_root)
        scorer = O3PartScorer(sent)
        heads = eisner3_scorer(scorer, single_root, True)
        return heads, self.best_labels(sent, heads), float("nan")

    @staticmethod
    def best_labels(sent: O3Sentence, heads: np.ndarray) -> np.ndarray:
        """Label ids int32 [n+1] (entry 0: -1): each arc's best candidate label by its labeled
        score (cost included if ``sent`` is cost-augmented), as ``O3Sentence.arc`` counts it."""
        mods = np.arange(1, len(heads))
        cands = sent.candidates[heads[1:], mods]
        scores = sent.labeled[heads[1:, None], mods[:, None], np.maximum(cands, 0)]
        scores[cands < 0] = -np.inf
        labels = np.full(len(heads), -1, dtype=np.int32)
        labels[1:] = cands[np.arange(len(mods)), np.argmax(scores, axis=1)]
        return labels

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
        """Heads int32 [n+1] and label ids int32 [n+1] (entry 0: -1) by ``cube`` or
        ``eisner3-outermost``; ``timer`` gets scoring (pruner, arcs, labels) and decoding time.
        ``scratch`` goes unused: the parts are scored on the fly, in no arrays."""
        t0 = time.perf_counter()
        sent = self.sentence(enc, weights, cost_augmented, single_root=single_root)
        self._last = (enc, sent)  # its feature core serves the training update (delta)
        t1 = time.perf_counter()
        heads, labels, _ = self.decode(sent, decoder, single_root)
        if timer is not None:
            timer.score += t1 - t0
            timer.decode += time.perf_counter() - t1
        return heads, labels

    def features(self, enc: EncodedSentence, heads: np.ndarray, labels: np.ndarray,
                 sent: O3Sentence | None = None) -> np.ndarray:
        """phi(tree) as weight indices int64 (repeats possible, each counting 1): the
        first-order unlabeled arc features, the label rows and the higher-order parts."""
        sent = sent if sent is not None else self.sentence(enc, arcs=False)
        heads = np.asarray(heads, dtype=np.int32)
        mods = np.arange(1, len(heads), dtype=np.int32)
        arc_idx = arc_list_indices(enc.tokens, enc.morph_ptr, enc.morph, self.first,
                                   heads[1:].copy(), mods)
        return np.concatenate([arc_idx, tree_feature_indices(sent, heads, labels)])

    def tree_score(self, enc: EncodedSentence, heads: np.ndarray, labels: np.ndarray,
                   weights: np.ndarray | None = None) -> float:
        """w . phi(tree) (arcs the pruner removed count like the others)."""
        w = self.weights if weights is None else weights
        return float(np.asarray(w, dtype=np.float64)[self.features(enc, heads, labels)].sum())

    def delta(
        self, enc: EncodedSentence, heads: np.ndarray, labels: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """phi(gold) - phi(predicted) (indices int64, values float64)."""
        last_enc, sent = self._last
        if last_enc is not enc:
            sent = self.sentence(enc, arcs=False)
        gold = self.features(enc, enc.heads, enc.labels, sent)
        pred = self.features(enc, heads, labels, sent)
        return (np.concatenate([gold, pred]),
                np.concatenate([np.ones(len(gold)), -np.ones(len(pred))]))

    def compares_labels(self, decoder: Decoder) -> bool:
        """Whether search errors compare labeled trees under ``decoder``: only the cube decoder
        with label-tuple features scores labels as part of the search."""
        return decoder.name == "cube" and bool(self.settings.label_tuples)

    def search_scores(self, enc: EncodedSentence, decoder: Decoder,
                      single_root: bool) -> tuple[np.ndarray, bool, float, float, float, bool]:
        """For dparse.search_errors: the predicted heads, whether the prediction is the gold
        tree (labels included for cube with label tuples; otherwise labels are each arc's best
        and heads are compared, gold taking each arc's best label too), the scores w . phi of
        gold and prediction, the sum of |score| of both trees' features (the tie tolerance's
        scale), and whether the chart could build gold at all (not if an arc was pruned or a
        label is not among its arc's candidates)."""
        sent = self.sentence(enc, single_root=single_root)
        heads, labels, score = self.decode(sent, decoder, single_root)
        n1 = len(heads)
        mods = np.arange(1, n1)
        gold_heads = enc.heads
        if self.compares_labels(decoder):
            gold_labels = enc.labels
            same = bool(np.array_equal(heads, gold_heads) and np.array_equal(labels, gold_labels))
            reachable = bool(np.all(gold_labels[1:] >= 0) and np.all(
                (sent.candidates[gold_heads[1:], mods] == gold_labels[1:, None]).any(axis=1)))
        else:
            gold_labels = self.best_labels(sent, gold_heads)
            same = bool(np.array_equal(heads, gold_heads))
            reachable = True
        reachable = reachable and bool(np.all(np.isfinite(sent.arc[gold_heads[1:], mods])))
        w = np.asarray(self.weights, dtype=np.float64)
        gold_feats = self.features(enc, gold_heads, np.maximum(gold_labels, 0), sent)
        pred_feats = self.features(enc, heads, labels, sent)
        if not np.isfinite(score):
            score = float(w[pred_feats].sum())
        scale = float(np.abs(w[gold_feats]).sum() + np.abs(w[pred_feats]).sum())
        return heads, same, float(w[gold_feats].sum()), score, scale, reachable

    def score_parts(
        self, enc: EncodedSentence, weights: np.ndarray | None, cost_augmented: bool,
        scratch: PartScratch | None = None,
    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Arc scores under each arc's best label and those labels; the higher-order parts are
        scored on the fly (no arrays): use :meth:`predict` and :meth:`tree_score`."""
        sent = self.sentence(enc, weights, cost_augmented)
        return sent.arc, np.ascontiguousarray(sent.candidates[:, :, 0]), {}

    # -- files --------------------------------------------------------------------------------

    def write_files(self, directory: Path) -> None:
        """Write the weights, the vocabulary, the templates' versions and the pruner
        (``pruner/``) into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        s = self.settings
        save_arrays(
            directory / WEIGHTS_FILE,
            weights=np.asarray(self.weights, dtype=np.float32),
            arc_bits=self.first.arc_bits,
            lab_bits=self.first.lab_bits,
            label_bits=s.label_bits,
            ho_bits=s.ho_bits,
            groups=",".join(s.groups) or "none",
            label_tuples=s.label_tuples,
            labels_per_arc=s.labels_per_arc,
            first_order_labels=s.first_order_labels,
        )
        self.vocab.save(directory / VOCAB_FILE)
        write_templates(directory, ARC, O3)
        self.pruner.write_files(directory / PRUNER_DIR)

    @classmethod
    def read_files(cls, directory: Path) -> ThirdOrderModel:
        """Read what ``write_files`` wrote."""
        require_model_files(directory, VOCAB_FILE)
        check_templates(directory, ARC, O3)
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        data = load_arrays(directory / WEIGHTS_FILE)
        first = FeatureSpace(int(data["arc_bits"]), int(data["lab_bits"]), len(vocab.labels))
        settings = ThirdOrderSettings(int(data["label_bits"]), int(data["ho_bits"]),
                                      parse_groups(str(data["groups"])),
                                      bool(data["label_tuples"]), int(data["labels_per_arc"]),
                                      "first_order_labels" in data
                                      and bool(data["first_order_labels"]))
        weights = np.ascontiguousarray(data["weights"], dtype=np.float32)
        if not (directory / PRUNER_DIR / PRUNER_FILE).is_file():
            raise DparseError(f"{directory}: third-order model without its pruner/")
        return cls(vocab, first, weights, Pruner.read_files(directory / PRUNER_DIR), settings)
