"""The parser types of dparse, chosen by the config's top-level ``parser`` key.

``graph`` (the default) is the graph-based parser of :mod:`dparse.graph` (first, second and
third order); ``easyfirst`` is the easy-first parser of :mod:`dparse.transition.easyfirst`;
``umst`` the undirected MST parser of :mod:`dparse.undirected`; ``shiftreduce`` the beam
shift-reduce parser of :mod:`dparse.transition.shiftreduce`; ``rerank`` the forest reranker
over its forests (:mod:`dparse.rerank`). The
command line trains and loads every type through :func:`train_parser` and :func:`load_parser`;
a new type adds its two functions to ``TRAINERS`` and ``LOADERS``, and its name and config checks
to :mod:`dparse.families`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dparse.config import ExperimentConfig, load_config
from dparse.conll import Sentence
from dparse.errors import ConfigError
from dparse.timer import ParseTimer

if TYPE_CHECKING:  # training's module: not imported to parse
    from dparse.batch.engines import WorkerOptions
    from dparse.epochs import EpochReport, TrainResult


@dataclass
class LoadedParser:
    """A trained parser ready to parse: ``parse(sentences, timer)`` yields parsed copies.
    Parsers that build packed forests (shiftreduce) also have ``forest_fn(sentences, timer,
    on_forest)``, calling ``on_forest(position, forest)`` for each non-empty sentence."""

    decoder_name: str
    parse_fn: Callable[[Iterable[Sentence], ParseTimer], Iterator[Sentence]]
    forest_fn: Callable[..., Iterator[Sentence]] | None = None

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer) -> Iterator[Sentence]:
        return self.parse_fn(sentences, timer)


def _train_graph(cfg: ExperimentConfig, progress: bool,
                 on_epoch: Callable[[EpochReport], None] | None,
                 workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.graph.training import train

    return train(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load_graph(directory: Path, cfg: ExperimentConfig, name: str) -> LoadedParser:
    from dparse.decoders import configured_decoder
    from dparse.graph.load import load_model

    model = load_model(directory)
    # The config's decoder options go with the config's decoder, not with an override.
    decoder = configured_decoder(name, cfg.decoder.options if name == cfg.decoder.name else None)
    single_root = cfg.decoder.single_root
    return LoadedParser(decoder.name,
                        lambda sents, timer: model.parse(sents, decoder, single_root, timer))


def _train_easyfirst(cfg: ExperimentConfig, progress: bool,
                     on_epoch: Callable[[EpochReport], None] | None,
                     workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.transition.easyfirst import train

    return train(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load_easyfirst(directory: Path, cfg: ExperimentConfig, name: str) -> LoadedParser:
    from dparse.transition.easyfirst import EasyFirstModel, use_heap

    use_heap(name)  # a bad decoder name fails before loading
    model = EasyFirstModel.load(directory)
    single_root = cfg.decoder.single_root
    return LoadedParser(name, lambda sents, timer: model.parse(sents, name, single_root, timer))


def _train_umst(cfg: ExperimentConfig, progress: bool,
                on_epoch: Callable[[EpochReport], None] | None,
                workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.undirected.parser import train_undirected

    return train_undirected(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load_umst(directory: Path, cfg: ExperimentConfig, name: str) -> LoadedParser:
    from dparse.undirected.parser import load_parser as load_undirected

    if name != cfg.decoder.name:
        raise ConfigError(f"{directory}: an undirected MST model (parser: umst) decodes with its "
                          f"own {cfg.decoder.name!r} only; --decoder {name} does not apply")
    return LoadedParser("umst", load_undirected(directory, cfg).parse)


def _train_shiftreduce(cfg: ExperimentConfig, progress: bool,
                       on_epoch: Callable[[EpochReport], None] | None,
                       workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.transition.shiftreduce import train

    return train(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load_shiftreduce(directory: Path, cfg: ExperimentConfig, name: str) -> LoadedParser:
    from dparse.transition.shiftreduce import DECODER_NAME, ShiftReduceModel

    if name not in (DECODER_NAME, cfg.decoder.name):
        raise ConfigError(f"{directory}: a shift-reduce model (parser: shiftreduce) decodes "
                          f"with its own beam search only; --decoder {name} does not apply")
    model = ShiftReduceModel.load(directory).configure(cfg)
    sc = cfg.shiftreduce
    return LoadedParser(DECODER_NAME,
                        lambda sents, timer: model.parse(sents, timer, sc.force_gold),
                        lambda sents, timer, on_forest: model.parse(sents, timer, sc.force_gold,
                                                                    on_forest))


def _train_rerank(cfg: ExperimentConfig, progress: bool,
                  on_epoch: Callable[[EpochReport], None] | None, jobs: int = 1,
                  workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.rerank.model import train

    return train(cfg, progress=progress, on_epoch=on_epoch, jobs=jobs, workers=workers)


def _load_rerank(directory: Path, cfg: ExperimentConfig, name: str) -> LoadedParser:
    from dparse.rerank.model import DECODER_NAME, RerankModel

    if name not in (DECODER_NAME, cfg.decoder.name):
        raise ConfigError(f"{directory}: a forest reranker (parser: rerank) decodes with its "
                          f"own two stages only; --decoder {name} does not apply")
    model = RerankModel.load(directory)
    rc = cfg.rerank  # the parse-time keys (dparse.config.RerankConfig)
    model.k = rc.k
    model.beta = model.beta if rc.beta is None else rc.beta
    model.first.beam = rc.first_stage_beam or model.first.beam
    return LoadedParser(DECODER_NAME, model.parse,
                        lambda sents, timer, on_forest: model.parse(sents, timer, on_forest))


def _train_tagger(cfg: ExperimentConfig, progress: bool,
                  on_epoch: Callable[[EpochReport], None] | None) -> TrainResult:
    from dparse.tagging.training import train

    return train(cfg, progress=progress, on_epoch=on_epoch)


def _load_tagger(directory: Path, cfg: ExperimentConfig, name: str) -> LoadedParser:
    raise ConfigError(f"{directory} is a tagger (parser: tagger), not a parser: `dparse tag "
                      f"{directory}` tags with it; parsing needs a parser model (one trained "
                      "with a tagger section carries its tagger)")


TRAINERS = {"graph": _train_graph, "easyfirst": _train_easyfirst, "umst": _train_umst,
            "shiftreduce": _train_shiftreduce, "rerank": _train_rerank,
            "tagger": _train_tagger}
LOADERS = {"graph": _load_graph, "easyfirst": _load_easyfirst, "umst": _load_umst,
           "shiftreduce": _load_shiftreduce, "rerank": _load_rerank, "tagger": _load_tagger}


def _entry(table: dict[str, Any], cfg: ExperimentConfig) -> Any:
    if cfg.parser not in table:
        raise ConfigError(f"parser type {cfg.parser!r} cannot be trained or loaded here "
                          f"(known: {', '.join(sorted(table))})")
    return table[cfg.parser]


def train_parser(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[EpochReport], None] | None = None,
    **options: Any,
) -> TrainResult:
    """Train the config's parser type (the model saved by :func:`dparse.epochs.save_model`);
    ``options`` go to the trainers that take them (rerank: ``jobs``; every parser type:
    ``workers``). A config with a ``tagger`` section trains on predicted tags
    (:mod:`dparse.tagging.pipeline`: ``work`` keeps the tagged files, ``jobs`` jackknife folds
    at a time, or with ``workers`` the tagger and its folds as tasks on
    the parser's training engine)."""
    from dparse.tagging.pipeline import has_tagger, train_pipeline

    trainer = _entry(TRAINERS, cfg)
    if not has_tagger(cfg):
        options.pop("work", None)
        return trainer(cfg, progress, on_epoch, **options)
    work = Path(options.pop("work", None) or Path("models") / f"{cfg.name}.work")
    jobs = options.get("jobs", 1) if cfg.parser == "rerank" else options.pop("jobs", 1)
    workers = options.pop("workers", None)

    def train_on_tags(pcfg: ExperimentConfig, on: WorkerOptions | None) -> TrainResult:
        return trainer(pcfg, progress, on_epoch, workers=on, **options)

    return train_pipeline(cfg, train_on_tags, work, jobs, workers)


def load_parser(directory: Path, cfg: ExperimentConfig, decoder_name: str | None,
                tags: str = "auto", tag_only: bool = False) -> LoadedParser:
    """Load the model in ``directory`` (trained with ``cfg``), parsing with ``decoder_name``
    (default: the config's decoder). A pipeline model tags first (``tags``: the mode of
    :meth:`dparse.tagging.model.TaggerModel.tag_batch`); with ``tag_only`` the result only
    tags (a tagger model, or a pipeline model's tagger)."""
    from dparse.modeldir import TAGGER_DIR

    if tag_only:
        from dparse.tagging.pipeline import load_tagger

        tagger = load_tagger(directory, cfg)
        return LoadedParser("tagger", lambda sents, timer: tagger.tag(sents, timer, tags))
    parser = _entry(LOADERS, cfg)(directory, cfg, decoder_name or cfg.decoder.name)
    if (directory / TAGGER_DIR).is_dir():  # the pipeline's modules only for a model that tags
        from dparse.tagging.pipeline import load_tagger, tagging_wrapper

        tagger = load_tagger(directory, cfg)
        parser.parse_fn = tagging_wrapper(tagger, tags, parser.parse_fn)
        if parser.forest_fn is not None:
            parser.forest_fn = tagging_wrapper(tagger, tags, parser.forest_fn)
    return parser


# The --set keys that a trained model's commands accept, by parser type: the values read when
# parsing (the decoder, its options, LEP moves, ...), each with its sub-keys. Every other key
# (features, data, training, ...) was fixed by training: overriding it would change nothing.
PARSE_TIME_KEYS: Mapping[str, Sequence[str]] = {
    "graph": ("decoder.name", "decoder.single_root", "decoder.options"),
    "easyfirst": ("decoder.name", "decoder.single_root"),
    "umst": ("decoder.single_root", "umst.lep_steps", "umst.directed_model", "umst.method"),
    "shiftreduce": ("decoder.single_root", "shiftreduce.beam", "shiftreduce.force_gold"),
    "rerank": ("rerank.k", "rerank.beta", "rerank.first_stage_beam"),
    "tagger": (),
}
ENSEMBLE_KEYS: Mapping[str, Sequence[str]] = {"graph": ("decoder.single_root", "ensemble")}


def check_model_overrides(
    model_dir: Path, overrides: Sequence[str], keys: Mapping[str, Sequence[str]]
) -> None:
    """ConfigError naming the first ``--set`` of ``overrides`` whose key ``keys`` does not
    allow for the parser type of the model in ``model_dir`` (a DparseError first if that is
    not a sound model directory)."""
    if not overrides:
        return
    from dparse.modeldir import CONFIG_FILE, check_model_dir

    check_model_dir(model_dir)
    trained = load_config(model_dir / CONFIG_FILE)
    allowed = keys.get(trained.parser, ())
    for item in overrides:
        key = item.partition("=")[0].strip()
        if not any(key == k or key.startswith(k + ".") for k in allowed):
            can = f"{', '.join(allowed)} and their sub-keys" if allowed else "no key"
            raise ConfigError(
                f"{model_dir}: --set {key} does not apply to this command with a trained model "
                f"(a {trained.parser} parser; training fixed the rest of its config): it takes "
                f"{can}"
            )
