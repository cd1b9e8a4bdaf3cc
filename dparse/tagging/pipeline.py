"""Parsers trained on predicted tags, and the model directories that carry their tagger.

A parser config with a ``tagger`` section (:class:`dparse.tagging.sections.TaggerConfig`) names a
tagger config (``tagger.config``) or a trained tagger (``tagger.model``). Training it
(:func:`train_pipeline`):

1. the tagger: trained by its config on the parser's training and dev files, exactly as
   ``dparse train`` of that config on those files trains it (so the same bytes), or the trained
   one as it is;
2. the training file tagged by a ``tagger.folds``-fold jackknife (:mod:`dparse.folds`: fold k
   by a tagger trained the same way on the other folds), dev by the whole tagger; every column
   the tagger predicts is replaced (``predict``). The two tagged files are kept in the work
   directory (``train.tagged.conllu``, ``dev.tagged.conllu``; ``.conllx`` or ``.malt`` for a
   training file in that format, whose sentences the tagged files keep) with a stamp of what
   made them
   (the tagger's config, the sha256 of both files, the folds); a later run with the same stamp
   reuses them, e.g. a second parser config of the same treebank and tagger;
3. the parser: trained by its own trainer on the tagged files;
4. the model directory: the parser's files and the tagger's in :data:`TAGGER_DIR` (its
   ``tagger.json``, ``tagger.bin``, ``templates.json`` and ``config.yaml``), under one
   manifest.

``dparse parse`` of such a model tags first (:class:`TaggingParser`; ``--tags``: ``auto``
predicts the columns the input leaves empty, ``predict`` all, ``keep`` none); ``dparse tag``
of it, or of a tagger model (``parser: tagger``), only tags (:class:`TagOnly`).
"""

from __future__ import annotations

import copy
import json
import logging
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dparse.config import ExperimentConfig, load_config, save_config
from dparse.conll import FORMAT_EXTENSIONS, Sentence, read_conll, write_conll
from dparse.epochs import TrainResult, mixing_engine, read_unparsed
from dparse.errors import ConfigError, DparseError
from dparse.families import family
from dparse.folds import jackknife_splits
from dparse.modeldir import CONFIG_FILE, TAGGER_DIR, check_model_dir, file_sha256
from dparse.outputs import write_text
from dparse.sections import CORE_SECTIONS
from dparse.tagging.model import TAGGER_ARRAYS, TAGGER_JSON, TaggerModel
from dparse.tagging.training import train_tagger
from dparse.templates import TEMPLATES_FILE
from dparse.timer import ParseTimer

if TYPE_CHECKING:
    from dparse.batch.engines import WorkerOptions
    from dparse.constraints import Constraints
    from dparse.hypergraph.forest import OnForest
    from dparse.mixing import Engine

log = logging.getLogger(__name__)

STAMP_FILE = "tagged.stamp.json"
STAMP_FORMAT = "dparse-tag-jackknife 1"


def has_tagger(cfg: ExperimentConfig) -> bool:
    """Whether the parser config trains on predicted tags (names a tagger)."""
    return bool(cfg.tagger.config or cfg.tagger.model)


def tagger_config(cfg: ExperimentConfig) -> ExperimentConfig:
    """The config that trains the parser's tagger: ``tagger.config``, or the saved config of
    ``tagger.model``; its data files are the parser's."""
    source = cfg.tagger.config or str(Path(cfg.tagger.model) / CONFIG_FILE)
    tcfg = load_config(source, data_root=cfg.data_root)
    if tcfg.parser != "tagger":
        raise ConfigError(f"{source}: tagger.{'config' if cfg.tagger.config else 'model'} must "
                          f"be a tagger (parser: tagger), not a {tcfg.parser} config")
    for key in ("train", "dev", "format", "encoding"):
        setattr(tcfg.data, key, getattr(cfg.data, key))
    return tcfg


def _jackknife_task(tcfg: ExperimentConfig, train: list[Sentence], dev: list[Sentence],
                    folds: int, fold: int) -> Any:
    """One task of the jackknife: the tag columns (lemma, upos, xpos, feats per sentence) of
    fold ``fold`` (from 0) by a tagger trained on the other folds (dev: ``dev``), or for
    ``fold`` -1 the tagger trained on the whole of ``train``."""
    if fold < 0:
        return train_tagger(tcfg, train, dev).model
    rest, held_out = jackknife_splits(train, folds)[fold]
    model = train_tagger(tcfg, rest, dev).model
    return [(s.lemma, s.upos, s.xpos, s.feats) for s in model.tag(held_out, mode="predict")]


def jackknife_tags(tcfg: ExperimentConfig, train: list[Sentence], dev: list[Sentence],
                   folds: int, jobs: int = 1, engine: Engine | None = None,
                   whole: bool = False) -> tuple[list[Sentence], TaggerModel | None]:
    """``train`` with every column the tagger predicts replaced by a ``folds``-fold
    jackknife (see the module docstring) and, with ``whole``, the tagger trained on all of
    ``train`` (else None): the tasks run one after another, ``jobs`` at a time (forked
    processes), or on the workers of an ``engine`` (:mod:`dparse.batch.engines`)."""
    calls = [(tcfg, train, dev, folds, k) for k in range(-1 if whole else 0, folds)]
    if engine is not None:
        log.info("tagger jackknife: %d folds%s as tasks on the training engine", folds,
                 " and the whole tagger" if whole else "")
        shared = [engine.share(value) for value in (tcfg, train, dev)]
        results = engine.run_tasks(_jackknife_task, [(*shared, *call[3:]) for call in calls])
    elif jobs > 1:
        import multiprocessing  # only here: a parse loads no process machinery

        with multiprocessing.get_context("fork").Pool(min(jobs, len(calls))) as pool:
            results = pool.starmap(_jackknife_task, calls, chunksize=1)
    else:
        results = [_jackknife_task(*call) for call in calls]
    model = results.pop(0) if whole else None
    tagged: list[Sentence] = []
    for k, ((_, held), columns) in enumerate(zip(jackknife_splits(train, folds), results,
                                                 strict=True), start=1):
        log.info("tagger jackknife: fold %d of %d tagged (%d sentences)", k, folds, len(held))
        for sent, (lemma, upos, xpos, feats) in zip(held, columns, strict=True):
            tagged.append(sent.with_tags(lemma=lemma, upos=upos, xpos=xpos, feats=feats))
    return tagged, model


def _stamp(tcfg: ExperimentConfig, cfg: ExperimentConfig) -> dict[str, Any]:
    """What the tagged files are made from: the tagger config's name, core sections and its
    own family's sections (another family's sections, which a new key of that family changes,
    do not tag anything), the folds and the sha256 of the training and dev files."""
    files = {key: file_sha256(cfg.data_path(getattr(cfg.data, key)))
             for key in ("train", "dev") if getattr(cfg.data, key)}
    read = {"name", "parser", *CORE_SECTIONS, *family(tcfg.parser).sections}
    tagger = {key: value for key, value in tcfg.to_dict().items() if key in read}
    return {"format": STAMP_FORMAT, "tagger": tagger, "folds": cfg.tagger.folds,
            "files": files}


def _tagged_paths(cfg: ExperimentConfig, work: Path) -> tuple[Path, Path | None]:
    """The tagged training and dev files in ``work``, named for the format of the training
    file (which they are written in: a CoNLL-X file may have several root words, which a
    ``.conllu`` name would have read as CoNLL-U refuse)."""
    fmt = cfg.data.format
    if fmt not in FORMAT_EXTENSIONS:  # detected, or words alone (made into CoNLL-U)
        first = next(iter(read_conll(cfg.data_path(cfg.data.train), fmt=fmt,
                                     encoding=cfg.data.encoding, require_heads=False)), None)
        fmt = first.fmt if first is not None else "conllu"
    ext = FORMAT_EXTENSIONS[fmt]
    return work / f"train.tagged{ext}", (work / f"dev.tagged{ext}" if cfg.data.dev else None)


def _training_files(tcfg: ExperimentConfig, cfg: ExperimentConfig
                    ) -> tuple[list[Sentence], list[Sentence]]:
    """The parser's training and dev sentences as the tagger reads them (dev: [] without)."""
    return (read_unparsed(tcfg, cfg.data.train),
            read_unparsed(tcfg, cfg.data.dev) if cfg.data.dev else [])


def tagged_files(cfg: ExperimentConfig, tcfg: ExperimentConfig, tagger: TaggerModel | None,
                 work: Path, jobs: int, engine: Engine | None = None
                 ) -> tuple[TaggerModel, Path, Path | None]:
    """The tagger (``tagger``, or the one :func:`jackknife_tags` trains on the parser's
    training and dev files), the jackknife-tagged training file and the tagged dev file in
    ``work``, made unless a stamp there says they were made from the same tagger config, files
    and folds."""
    stamp = _stamp(tcfg, cfg)
    stamp_path = work / STAMP_FILE
    train_path, dev_path = _tagged_paths(cfg, work)
    try:
        done = json.loads(stamp_path.read_text(encoding="utf-8")) == stamp
    except (OSError, ValueError):
        done = False
    if done and train_path.exists() and (dev_path is None or dev_path.exists()):
        log.info("tagged training and dev files reused from %s", work)
        if tagger is None:
            tagger = train_tagger(tcfg, *_training_files(tcfg, cfg)).model
        return tagger, train_path, dev_path
    work.mkdir(parents=True, exist_ok=True)
    stamp_path.unlink(missing_ok=True)
    train, dev = _training_files(tcfg, cfg)
    tagged, whole = jackknife_tags(tcfg, train, dev, cfg.tagger.folds, jobs, engine,
                                   whole=tagger is None)
    tagger = tagger or whole
    assert tagger is not None
    write_conll(tagged, train_path, encoding=cfg.data.encoding)
    if dev_path is not None:
        write_conll(tagger.tag(dev, mode="predict"), dev_path, encoding=cfg.data.encoding)
    write_text(stamp_path, json.dumps(stamp, indent=1, sort_keys=True))
    return tagger, train_path, dev_path


class PipelineModel:
    """A trained parser with the tagger that tagged its training data: ``write_files``
    writes both (the tagger into :data:`TAGGER_DIR`)."""

    def __init__(self, parser: Any, tagger: TaggerModel, tagger_cfg: ExperimentConfig,
                 tagger_source: Path | None) -> None:
        self.parser = parser
        self.tagger = tagger
        self.tagger_cfg = tagger_cfg
        self.tagger_source = tagger_source  # a trained tagger's directory, copied as it is

    def write_files(self, directory: Path) -> None:
        self.parser.write_files(directory)
        target = directory / TAGGER_DIR
        target.mkdir()
        if self.tagger_source is not None:
            names = [TAGGER_JSON, TAGGER_ARRAYS, CONFIG_FILE]
            if (self.tagger_source / TEMPLATES_FILE).is_file():  # none: saved before versions
                names.append(TEMPLATES_FILE)
            for name in names:
                shutil.copyfile(self.tagger_source / name, target / name)
            return
        self.tagger.write_files(target)
        save_config(self.tagger_cfg, target / CONFIG_FILE)


def train_pipeline(cfg: ExperimentConfig,
                   train_parser: Callable[[ExperimentConfig, WorkerOptions | None], TrainResult],
                   work: Path, jobs: int = 1, workers: WorkerOptions | None = None
                   ) -> TrainResult:
    """Train the tagger of ``cfg``, tag its training files (see the module docstring) in
    ``work`` and train the parser on them with ``train_parser(config, workers)``; the result's
    model is a :class:`PipelineModel`, its seconds those of the whole run. With ``workers``
    (None: all in this process) the tagger and its jackknife folds run as tasks on their
    engine, which the parser's training then uses too (:mod:`dparse.batch.engines`)."""
    with mixing_engine(workers, __name__) as engine:
        return _train_pipeline(cfg, train_parser, work, jobs,
                               None if workers is None else replace(workers, engine=engine))


def _train_pipeline(cfg: ExperimentConfig,
                    train_parser: Callable[[ExperimentConfig, WorkerOptions | None],
                                           TrainResult],
                    work: Path, jobs: int, workers: WorkerOptions | None) -> TrainResult:
    """:func:`train_pipeline` with ``workers`` holding their open engine (None: all here)."""
    start = time.perf_counter()
    tcfg = tagger_config(cfg)
    source: Path | None = None
    tagger = None
    if cfg.tagger.model:
        source = Path(cfg.tagger.model)
        check_model_dir(source)
        tagger = TaggerModel.load(source, checked=True)
    tagger, train_path, dev_path = tagged_files(
        cfg, tcfg, tagger, work, jobs, workers.engine if workers is not None else None)
    pcfg = copy.deepcopy(cfg)
    pcfg.data.train = str(train_path.resolve())
    pcfg.data.dev = str(dev_path.resolve()) if dev_path is not None else None
    result = train_parser(pcfg, workers)
    result.model = PipelineModel(result.model, tagger, tcfg, source)
    result.seconds = time.perf_counter() - start  # the tagger and the jackknife too
    return result


def load_tagger(directory: Path, cfg: ExperimentConfig) -> TaggerModel:
    """The tagger of a model directory (checked already): a tagger model's own, or a
    pipeline model's; DparseError for a parser that carries none."""
    if cfg.parser == "tagger":
        return TaggerModel.load(directory, checked=True)
    if (directory / TAGGER_DIR).is_dir():
        return TaggerModel.load(directory / TAGGER_DIR, checked=True)
    raise DparseError(f"{directory}: this {cfg.parser} parser carries no tagger (it was "
                      "trained on the treebank's own tags): there is nothing to tag with")


class TaggingParser:
    """A pipeline model: its tagger, then ``parser`` (a :class:`dparse.parsers.LoadedParser`,
    not named here: dparse.parsers imports this module), whose decoder and forests it has.
    The tagging time goes to the timer's ``tag``."""

    def __init__(self, tagger: TaggerModel, mode: str, parser: Any) -> None:
        self.tagger = tagger
        self.mode = mode  # how the input's tags are treated: TaggerModel.tag_batch
        self.parser = parser
        self.decoder_name = parser.decoder_name
        self.builds_forests = parser.builds_forests
        self.projective = parser.projective

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """The sentences tagged, then parsed (``on_forest``: the parser's forests)."""
        tagged = self.tagger.tag(sentences, timer, self.mode, count=False)
        return self.parser.parse(tagged, timer, on_forest)

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints]],
                          timer: ParseTimer) -> Iterator[Sentence]:
        """The sentences tagged, then parsed under their constraints (dparse.constraints)."""
        from dparse.constraints import constrained_parse

        pending: deque[Constraints] = deque()  # the tagger reads ahead by batches

        def sentences() -> Iterator[Sentence]:
            for sentence, constraints in items:
                pending.append(constraints)
                yield sentence

        tagged = self.tagger.tag(sentences(), timer, self.mode, count=False)
        return constrained_parse(self.parser, ((s, pending.popleft()) for s in tagged), timer,
                                 "the pipeline's parser")

    @property
    def fitted_temperature(self) -> float | None:
        """The parser's temperature fitted at training (a graph model's), or None."""
        return getattr(self.parser, "fitted_temperature", None)

    def parse_marginals(self, sentences: Iterable[Sentence], timer: ParseTimer,
                        temperature: float | None = None) -> Iterator[tuple[Sentence, Any]]:
        """The sentences tagged, then parsed with their head probabilities by the parser's
        ``parse_marginals`` (a graph model's); ConfigError for a parser without it."""
        if not hasattr(self.parser, "parse_marginals"):
            raise ConfigError("arc marginals need a graph model (parser: graph); this "
                              "pipeline's parser is not one")
        tagged = self.tagger.tag(sentences, timer, self.mode, count=False)
        return self.parser.parse_marginals(tagged, timer, temperature)

    def fit_temperature(self, sentences: Iterable[Sentence]) -> Any:
        """The parser's ``fit_temperature`` (a graph model's) on the sentences as tagged."""
        if not hasattr(self.parser, "fit_temperature"):
            raise ConfigError("fitting a temperature needs a graph model (parser: graph); "
                              "this pipeline's parser is not one")
        return self.parser.fit_temperature(self.tagger.tag(sentences, ParseTimer(), self.mode,
                                                           count=False))


class TagOnly:
    """A model's tagger alone, as a :class:`dparse.parsers.LoadedParser` whose ``parse``
    tags (what ``dparse tag`` and :func:`dparse.load_tagger` run, in worker processes too)."""

    decoder_name = "tagger"
    builds_forests = False

    def __init__(self, tagger: TaggerModel, mode: str) -> None:
        self.tagger = tagger
        self.mode = mode  # how the input's tags are treated: TaggerModel.tag_batch

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """The sentences tagged (LEMMA, UPOS, XPOS and FEATS as ``mode`` says)."""
        return self.tagger.tag(sentences, timer, self.mode)
