"""Undirected MST parsing (Levi, Reichart and Rappoport 2016): U-MST-uf and U-MST-uf-lep.

- Undirected features (section 4, "Undirected Encoding"): the edge {i, j}, i < j, is scored
  with the first-order feature set of the arc i -> j. Every edge is then read in the same
  direction, so the direction conjunctions carry no information and the head/modifier sides
  become left/right word: the feature set with the head/modifier distinction stripped.
  ``umst.edge_features: both`` adds the features of the arc j -> i (for j > 0), a larger
  feature vector that is still a function of the unordered pair.
  ``umst.edge_templates`` adds undirected-only templates of the pair (dparse/_ext/arcfeatures.pyx,
  ``edge_features``): counts of the POS between the two words, POS windows of both words,
  morphological-feature pairs; ``none`` (the default) keeps the first-order set alone.
  Only the edges the pruner keeps are scored (feature extraction is O(m), not O(n^2)).
- Training: cost-augmented passive-aggressive (or perceptron) updates against the undirected
  gold tree: delta = phi(gold edges) - phi(predicted edges), cost = the number of gold edges
  missed; inference is the KKT undirected MST (dparse/undirected/umst.pyx). The epoch with the best
  dev U-UAS is kept.
- Parsing: MST of the pruned graph, oriented from the root (BFS), then the local enhancement
  procedure (LEP, ``lep_steps`` moves) under a directed first-order model's scores, which
  also gives the labels (the paper uses the trained D-MST parser for LEP).

U-MST-df needs no code here: it is the directed first-order parser with the ``umst-df``
decoder (dparse/undirected/decoders.py). Configs say ``parser: umst`` and hold a ``umst`` section
(:class:`dparse.undirected.sections.UmstConfig`). A saved undirected model is a directory with
``weights.bin``, ``vocab.json``, ``prune.json`` (if pruned), ``templates.json`` (the versions of
the first-order arc templates and, with ``umst.edge_templates``, of the edge templates, both in
dparse/_ext/arcfeatures.pyx: a model of other versions is refused, :mod:`dparse.templates`) and
``config.yaml``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
from tqdm import tqdm

from dparse._ext.arcfeatures import (
    EDGE_GROUPS,
    FeatureSpace,
    arc_list_indices,
    arc_list_scores,
    edge_list_indices,
    edge_list_scores,
)
from dparse.batch.engines import WorkerOptions, training_engine
from dparse.config import ExperimentConfig
from dparse.conll import Sentence
from dparse.constraints import Constraints, checked, fixed_deprels
from dparse.decoders import get_decoder
from dparse.epochs import BestEpoch, EpochReport, TrainResult, read_split, training_vocabulary
from dparse.errors import DparseError
from dparse.graph.model import ArcFactoredModel
from dparse.learning import AveragedLearner
from dparse.metrics import evaluate
from dparse.mixing import MixedTraining, ModelShard, run_mixed_epochs, shards
from dparse.modeldir import (
    VOCAB_FILE,
    WEIGHTS_FILE,
    SavedModel,
    load_arrays,
    require_model_files,
    save_arrays,
)
from dparse.prune import LengthDictionary, undirected_edges
from dparse.templates import ARC, EDGE, TemplateSet, check_templates, write_templates
from dparse.timer import ParseTimer
from dparse.trees import root_words
from dparse.undirected.decoders import single_root_repair
from dparse.undirected.umst import local_enhancement, tree_from_edges
from dparse.vocab import EncodedSentence, Vocabulary

PRUNE_FILE = "prune.json"
LABEL_BITS = 8  # the undirected model has no label weights: a minimal label block


def template_sets(groups: int) -> tuple[TemplateSet, ...]:
    """The feature-template sets an undirected model of edge template ``groups`` reads."""
    return (ARC, EDGE) if groups else (ARC,)


@dataclass
class UndirectedModel(SavedModel):
    """Weights of undirected (left/right) first-order features, and the pruner of its graphs."""

    vocab: Vocabulary
    space: FeatureSpace
    weights: np.ndarray = field(repr=False)
    pruner: LengthDictionary | None = None
    both: bool = False  # also the features of the arc j -> i
    groups: int = 0  # undirected templates: a sum of EDGE_GROUPS values

    @property
    def size(self) -> int:
        """Length of the weight vector."""
        return self.space.size

    def edges(self, sent: Sentence) -> tuple[np.ndarray, np.ndarray]:
        """The edges {I[k], J[k]}, I < J (int32 [K]) of the sentence's graph after pruning."""
        n1 = len(sent) + 1
        if self.pruner is None:
            i, j = np.triu_indices(n1, 1)
            return i.astype(np.int32), j.astype(np.int32)
        return undirected_edges(self.pruner.allowed(sent))

    def edge_scores(
        self, enc: EncodedSentence, i: np.ndarray, j: np.ndarray, weights: np.ndarray | None = None
    ) -> np.ndarray:
        """Scores float64 [K] of the edges {i[k], j[k]}, i < j: the features of the arc i -> j
        (and of j -> i, if ``both``), plus the undirected templates ``groups``."""
        w = self.weights if weights is None else weights
        s = arc_list_scores(enc.tokens, enc.morph_ptr, enc.morph, w, self.space, i, j)
        if self.both:
            inner = i > 0
            s[inner] += arc_list_scores(enc.tokens, enc.morph_ptr, enc.morph, w, self.space,
                                        j[inner], i[inner])
        if self.groups:
            s += edge_list_scores(enc.tokens, enc.morph_ptr, enc.morph, w, self.space, i, j,
                                  self.groups)
        return s

    def edge_indices(self, enc: EncodedSentence, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Weight indices (int64, repeats possible) of the features of the edges {i[k], j[k]}."""
        parts = [arc_list_indices(enc.tokens, enc.morph_ptr, enc.morph, self.space, i, j)]
        if self.both:
            inner = i > 0
            parts.append(arc_list_indices(enc.tokens, enc.morph_ptr, enc.morph, self.space,
                                          j[inner], i[inner]))
        if self.groups:
            parts.append(edge_list_indices(enc.tokens, enc.morph_ptr, enc.morph, self.space,
                                           i, j, self.groups))
        return np.concatenate(parts)

    def write_files(self, directory: Path) -> None:
        """Write the weights, the vocabulary, the templates' versions and the length
        dictionary into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        save_arrays(directory / WEIGHTS_FILE, weights=np.asarray(self.weights, dtype=np.float32),
                    arc_bits=self.space.arc_bits, both=self.both, groups=self.groups)
        self.vocab.save(directory / VOCAB_FILE)
        write_templates(directory, *template_sets(self.groups))
        if self.pruner is not None:
            self.pruner.save(directory / PRUNE_FILE)

    @classmethod
    def read_files(cls, directory: Path) -> UndirectedModel:
        """Read what ``write_files`` wrote."""
        require_model_files(directory, VOCAB_FILE)
        vocab = Vocabulary.load(directory / VOCAB_FILE)
        data = load_arrays(directory / WEIGHTS_FILE)
        space = FeatureSpace(int(data["arc_bits"]), LABEL_BITS, 1)
        weights = np.ascontiguousarray(data["weights"], dtype=np.float32)
        both = bool(data["both"])
        groups = int(data["groups"])
        check_templates(directory, *template_sets(groups))
        if weights.shape[0] != space.size:
            raise DparseError(f"{directory}: weights do not match the feature space")
        pruner = (LengthDictionary.load(directory / PRUNE_FILE)
                  if (directory / PRUNE_FILE).is_file() else None)
        return cls(vocab, space, weights, pruner, both, groups)


def edge_mask(heads: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """bool [K]: whether the tree ``heads`` has the edge {i[k], j[k]} in either direction."""
    return (heads[j] == i) | (heads[i] == j)


@dataclass
class UndirectedParser:
    """U-MST-uf (``lep_steps`` 0) or U-MST-uf-lep: tree, orientation, enhancement, labels.

    ``directed`` (a first-order ArcFactoredModel) scores the enhancement moves and labels the
    arcs; without it every arc is labeled "dep" and LEP is off.
    """

    model: UndirectedModel
    directed: ArcFactoredModel | None = None
    lep_steps: int = 0
    single_root: bool = True
    method: str = "kkt"
    moves: int = 0  # LEP moves made so far

    def parse_sentence(self, sent: Sentence, timer: ParseTimer,
                       constraints: Constraints | None = None) -> Sentence:
        """The sentence parsed (under ``constraints``, checked already: :meth:`constrained`
        says how), oriented, enhanced and labeled."""
        t0 = time.perf_counter()
        enc = self.model.vocab.encode(sent)
        denc = self.directed.vocab.encode(sent) if self.directed is not None else None
        t1 = time.perf_counter()
        arc = label = None
        if self.directed is not None:
            arc, label = self.directed.score(denc)
        n1 = len(sent) + 1
        if constraints is None:
            i, j = self.model.edges(sent)
            s = self.model.edge_scores(enc, i, j)
            t2 = time.perf_counter()
            heads = tree_from_edges(n1, i, j, s, self.method)
            if self.single_root and root_words(heads) > 1:
                w = np.full((n1, n1), np.nan)
                w[i, j] = s
                heads = single_root_repair(heads, w)
        else:
            heads, t2 = self.constrained(sent, enc, constraints)
            if arc is not None:
                arc = np.where(constraints.allowed(), arc, -np.inf)
        if arc is not None and self.lep_steps:
            heads, done = local_enhancement(heads, arc, self.lep_steps)
            self.moves += done
        t3 = time.perf_counter()
        if label is not None:
            names = self.directed.vocab.labels
            deprels = [""] + [names[label[h, m]] for m, h in enumerate(heads.tolist()) if m]
        else:
            deprels = [""] + ["dep"] * len(sent)
        timer.encode += t1 - t0
        timer.score += t2 - t1
        timer.decode += t3 - t2
        timer.sentences += 1
        timer.tokens += len(sent)
        return sent.with_parse(heads, fixed_deprels(deprels, constraints))

    def constrained(self, sent: Sentence, enc: EncodedSentence, constraints: Constraints
                    ) -> tuple[np.ndarray, float]:
        """The best spanning tree whose orientation from the root has every fixed arc and no
        forbidden one (heads int32 [n+1]) and the time its edges were scored. An undirected
        tree oriented from node 0 is one arborescence, so this is the maximum arborescence
        (cle, single-rooted with ``single_root``) whose arcs h -> m weigh the edge {h, m}, the
        arcs the constraints rule out removed: exact, single root included. The edges are
        those the pruner keeps plus those of one tree keeping the constraints with the fewest
        pruned edges, so that one always exists."""
        n1 = len(sent) + 1
        permitted = constraints.allowed()
        i, j = self.model.edges(sent)
        kept = np.zeros((n1, n1), dtype=bool)
        kept[i, j] = kept[j, i] = True
        allowed = permitted & kept
        cle = get_decoder("cle")
        rescue = cle.decode(np.where(allowed, 0.0, np.where(permitted, -1.0, -np.inf)),
                            single_root=self.single_root)
        allowed[rescue[1:], np.arange(1, n1)] = True
        ei, ej = np.nonzero(np.triu(allowed | allowed.T, 1))
        ei, ej = ei.astype(np.int32), ej.astype(np.int32)
        weights = np.full((n1, n1), -np.inf)
        weights[ei, ej] = weights[ej, ei] = self.model.edge_scores(enc, ei, ej)
        t2 = time.perf_counter()
        heads = cle.decode(np.where(allowed, weights, -np.inf), single_root=self.single_root)
        return heads.astype(np.int32), t2

    def parse(
        self, sentences: Iterable[Sentence], timer: ParseTimer | None = None
    ) -> Iterator[Sentence]:
        timer = timer if timer is not None else ParseTimer()
        for sent in sentences:
            yield self.parse_sentence(sent, timer)

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints | None]],
                          timer: ParseTimer | None = None) -> Iterator[Sentence]:
        """As :meth:`parse`, each sentence under its constraints (None: none): checked
        (InputError naming the sentence for a set no tree satisfies), parsed by
        :meth:`constrained`, enhanced by LEP moves over allowed arcs only (a move that would
        make a ruled-out arc scores -inf), the fixed labels written for their words."""
        timer = timer if timer is not None else ParseTimer()
        for sent, given in items:
            constraints = checked(given, False, self.single_root, "umst", sent)
            yield self.parse_sentence(sent, timer, constraints)


@dataclass
class UndirectedEpoch(EpochReport):
    """One training epoch. The model is unlabeled and undirected: ``train_uas`` is the share of
    training words whose gold edge the (cost-augmented) tree has, ``dev_uas`` the directed dev
    UAS of the oriented tree without LEP, ``dev_u_uas`` the dev U-UAS (model selection); the
    LAS fields are None (n/a, ``las_note``)."""

    dev_u_uas: float | None = None
    las_note: ClassVar[str] = ("unlabeled: the undirected model labels every arc dep; "
                               "labels come from umst.directed_model when parsing")


Instance = tuple[EncodedSentence, np.ndarray, np.ndarray, np.ndarray]  # sentence, I, J, gold


def undirected_epoch(model: UndirectedModel, learner: AveragedLearner,
                     instances: list[Instance], order: Iterable[int], method: str,
                     desc: str = "", progress: bool = False) -> tuple[int, dict[str, float]]:
    """One online pass over ``instances`` (each a sentence, its graph's edges I < J and which
    are gold) in ``order``: the learner's weights score the edges (cost-augmented for pa), the
    tree is decoded by ``method`` and every missed gold edge learned from. Returns the gold
    edges found and the seconds of scoring, decoding and updating."""
    seconds = {"score": 0.0, "decode": 0.0, "update": 0.0}
    correct = 0
    bar = tqdm(order, desc=desc, unit="sent", disable=not progress, leave=False,
               dynamic_ncols=True)
    for step, k in enumerate(bar):
        enc, i, j, gold = instances[k]
        t0 = time.perf_counter()
        s = model.edge_scores(enc, i, j, learner.w)
        if learner.cost_augmented:
            s = s + (~gold)  # Hamming cost: 1 for every non-gold edge
        t1 = time.perf_counter()
        heads = tree_from_edges(len(enc) + 1, i, j, s, method, step)
        t2 = time.perf_counter()
        pred = edge_mask(heads, i, j)
        missed = gold & ~pred
        n_missed = int(missed.sum())
        correct += len(enc) - n_missed
        if n_missed:
            extra = pred & ~gold
            plus = model.edge_indices(enc, i[missed], j[missed])
            minus = model.edge_indices(enc, i[extra], j[extra])
            idx = np.concatenate([plus, minus])
            val = np.concatenate([np.ones(len(plus)), -np.ones(len(minus))])
            learner.update(idx, val, float(n_missed))
        learner.tick()
        seconds["score"] += t1 - t0
        seconds["decode"] += t2 - t1
        seconds["update"] += time.perf_counter() - t2
    bar.close()
    return correct, seconds


@dataclass
class UndirectedShard(ModelShard):
    """One shard of U-MST training (a :class:`dparse.mixing.ShardJob`): the model (its weights
    unused: the learner's are), the shard's instances and the tree method."""

    model: UndirectedModel
    instances: list[Instance]
    tree_method: str
    method: str
    C: float

    def epoch(self, learner: AveragedLearner, order: np.ndarray
              ) -> tuple[int, dict[str, float]]:
        return undirected_epoch(self.model, learner, self.instances, order, self.tree_method)


def train_undirected(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[UndirectedEpoch], None] | None = None,
    workers: WorkerOptions | None = None,
) -> TrainResult:
    """Trains U-MST-uf as the config says; returns the best epoch's averaged model. With
    ``workers`` the epochs are mixed from that many shards (:mod:`dparse.mixing`); None:
    serial training."""
    ucfg = cfg.umst
    start = time.perf_counter()
    train_sents = read_split(cfg, cfg.data.train)
    dev_sents = read_split(cfg, cfg.data.dev) if cfg.data.dev else []
    train_sents, vocab = training_vocabulary(cfg, train_sents, dev_sents)
    space = FeatureSpace(cfg.features.arc_bits, LABEL_BITS, 1)
    pruner = None
    if ucfg.prune == "length-dictionary":
        pruner = LengthDictionary.learn(train_sents, ucfg.prune_column, ucfg.prune_min_count,
                                        ucfg.prune_quantile)
    tc = cfg.training
    model = UndirectedModel(vocab, space, np.zeros(space.size, dtype=np.float32), pruner,
                            ucfg.edge_features == "both",
                            sum(EDGE_GROUPS[g] for g in ucfg.edge_template_names()))
    instances: list[Instance] = []
    for sent in train_sents:
        i, j = model.edges(sent)
        gold_i = np.minimum(sent.heads[1:], np.arange(1, len(sent) + 1)).astype(np.int32)
        gold_j = np.maximum(sent.heads[1:], np.arange(1, len(sent) + 1)).astype(np.int32)
        # the gold edges stay in the training graphs even where the pruner would drop them
        key = np.union1d(i.astype(np.int64) * (len(sent) + 1) + j,
                         gold_i.astype(np.int64) * (len(sent) + 1) + gold_j)
        i, j = (key // (len(sent) + 1)).astype(np.int32), (key % (len(sent) + 1)).astype(np.int32)
        instances.append((vocab.encode(sent), i, j, edge_mask(sent.heads, i, j)))
    result = TrainResult(model=model, best_epoch=0)
    best = BestEpoch()
    n_tokens = sum(len(s) for s in train_sents)
    parser = UndirectedParser(model, single_root=False, method=ucfg.method)

    def close_epoch(epoch: int, correct: int, seconds: dict[str, float],
                    weights: np.ndarray) -> None:
        model.weights = weights
        dev_u_uas = dev_uas = None
        if dev_sents:
            t0 = time.perf_counter()
            report = evaluate(dev_sents, list(parser.parse(dev_sents)), punct=tc.punct)
            dev_u_uas, dev_uas = report.u_uas, report.uas
            seconds["dev"] = time.perf_counter() - t0
        best.close_epoch(result, UndirectedEpoch(epoch, 100 * correct / n_tokens, None,
                                                 dev_uas, None, seconds, dev_u_uas),
                         model.weights, dev_u_uas, on_epoch)

    if workers is None:
        learner = AveragedLearner(space.size, tc.learner, tc.C)
        rng = np.random.default_rng(tc.seed)
        for epoch in range(1, tc.epochs + 1):
            order = rng.permutation(len(instances)) if tc.shuffle else np.arange(len(instances))
            correct, seconds = undirected_epoch(model, learner, instances, order, ucfg.method,
                                                f"epoch {epoch}/{tc.epochs}", progress)
            close_epoch(epoch, correct, seconds, learner.averaged())
        return best.finish(model, result, start)

    def close_mixed(epoch: int, parts: list[tuple[int, dict[str, float]]],
                    weights: np.ndarray) -> None:
        seconds = {key: sum(part[1][key] for part in parts) for key in parts[0][1]}
        close_epoch(epoch, sum(part[0] for part in parts), seconds, weights)

    shell = replace(model, weights=np.zeros(0, dtype=np.float32))  # the workers' copy
    jobs = [UndirectedShard(shell, [instances[k] for k in part], ucfg.method, tc.learner, tc.C)
            for part in shards(len(instances), workers.workers, tc.seed)]
    with training_engine(workers, warm_up=[__name__]) as engine:
        result.mixing = run_mixed_epochs(
            MixedTraining(engine, jobs, tc.seed if tc.shuffle else None, workers.mixing),
            tc.epochs, close_mixed, progress)
    return best.finish(model, result, start)


def load_parser(
    directory: Path,
    cfg: ExperimentConfig,
    lep_steps: int | None = None,
    directed_model: str | None = None,
) -> UndirectedParser:
    """An UndirectedParser from a model directory trained with ``cfg``; ``lep_steps`` and
    ``directed_model`` override the config's ``umst`` section."""
    steps = cfg.umst.lep_steps if lep_steps is None else lep_steps
    path = directed_model or cfg.umst.directed_model
    if path and not Path(path).is_dir():
        raise DparseError(f"{path}: directed model for LEP and labels not found "
                          "(umst.directed_model; relative to the working directory)")
    directed = ArcFactoredModel.load(Path(path)) if path else None
    return UndirectedParser(UndirectedModel.load(directory), directed, steps,
                            cfg.decoder.single_root, cfg.umst.method)
