"""Training and loading a parser of any family, through the family's record
(:mod:`dparse.families`), chosen by the config's top-level ``parser`` key (``graph`` by
default). A config with a ``tagger`` section trains on predicted tags and its model tags before
it parses (:mod:`dparse.tagging.pipeline`), whatever its family.

The command line and the API train through :func:`train_options` and :func:`train_model`,
and load through :class:`ParserSpec` (what a worker process needs to load the same parser);
every loaded model is a :class:`LoadedParser`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dparse.config import ExperimentConfig, load_config
from dparse.conll import Sentence
from dparse.errors import ConfigError
from dparse.families import families, family
from dparse.timer import ParseTimer

if TYPE_CHECKING:  # training's module: not imported to parse
    from dparse.batch.engines import WorkerOptions
    from dparse.epochs import EpochReport, TrainResult
    from dparse.hypergraph.forest import OnForest

# The options of ``dparse train`` that a parser trained on predicted tags (a tagger section)
# takes, whatever its family: the jackknife's processes and the tagged files' directory.
PIPELINE_OPTIONS = ("jobs", "work")


class LoadedParser(Protocol):
    """A trained model ready to parse, as a family's ``load`` gives it.

    ``decoder_name``: the decoder it parses with (its own name for a family with one way to
    decode); ``builds_forests``: whether it builds packed forests (shiftreduce, rerank).
    ``parse(sentences, timer)`` yields parsed copies of ``sentences`` in order (HEAD and
    DEPREL replaced; a model that tags also fills the tag columns), adding its times to
    ``timer``; ``on_forest``, given only to a model that builds forests, is called with each
    non-empty sentence's position and forest before the sentence is yielded.
    """

    decoder_name: str
    builds_forests: bool

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """Parsed copies of ``sentences``, in order."""
        ...


@dataclass(frozen=True)
class ParserSpec:
    """What a process needs to load a parser: the model directory, the ``--set`` overrides
    of its config, the decoder (None: the config's), how a model that tags treats the
    input's tags (:data:`dparse.tagging.TAG_MODES`), and ``tag_only``: load only its tagger
    (:func:`dparse.load_tagger`), as a LoadedParser whose ``parse`` tags."""

    model_dir: str
    overrides: tuple[str, ...] = ()
    decoder_name: str | None = None
    tags: str = "auto"
    tag_only: bool = False

    def load(self) -> LoadedParser:
        """Check the model directory and load the parser, as ``dparse parse`` does (the
        tagger, as ``dparse tag`` does, with ``tag_only``)."""
        from dparse.modeldir import CONFIG_FILE, check_model_dir

        directory = Path(self.model_dir)
        check_model_dir(directory)
        check_model_overrides(directory, self.overrides)
        cfg = load_config(directory / CONFIG_FILE, self.overrides)
        if self.tag_only:
            from dparse.tagging.pipeline import TagOnly, load_tagger

            return TagOnly(load_tagger(directory, cfg), self.tags)
        return load_parser(directory, cfg, self.decoder_name, self.tags)


def train_parser(
    cfg: ExperimentConfig,
    progress: bool = True,
    on_epoch: Callable[[EpochReport], None] | None = None,
    **options: Any,
) -> TrainResult:
    """Train the config's parser family (the model saved by :func:`dparse.epochs.save_model`);
    ``options`` (:func:`train_options`) go to the family's trainer: ``workers`` (the
    WorkerOptions of ``--workers``) and the options it takes (``jobs``). A config with a
    ``tagger`` section trains on predicted tags (:mod:`dparse.tagging.pipeline`: ``work``
    keeps the tagged files, ``jobs`` processes run the jackknife folds, or with ``workers``
    the tagger and its folds run as tasks on the parser's training engine). A config with a
    ``tokenizer`` section gives a model that carries that tokenizer
    (:mod:`dparse.tokenizing.carried`)."""
    from dparse.tagging.pipeline import has_tagger, train_pipeline
    from dparse.tokenizing.carried import carry_tokenizer, check_tokenizer

    record = family(cfg.parser)
    tokenizer = check_tokenizer(cfg)  # a model carrying a tokenizer (raw text): None without
    if not has_tagger(cfg):
        return carry_tokenizer(record.train(cfg, progress, on_epoch, **options), tokenizer)
    work = Path(options.pop("work", None) or Path("models") / f"{cfg.name}.work")
    jobs = options.get("jobs", 1) if record.takes_jobs else options.pop("jobs", 1)
    workers = options.pop("workers", None)

    def train_on_tags(pcfg: ExperimentConfig, on: WorkerOptions | None) -> TrainResult:
        return record.train(pcfg, progress, on_epoch, workers=on, **options)

    return carry_tokenizer(train_pipeline(cfg, train_on_tags, work, jobs, workers), tokenizer)


def train_options(cfg: ExperimentConfig, out_dir: Path, work: str | None, jobs: int,
                  fold: int | None = None, workers: WorkerOptions | None = None
                  ) -> dict[str, Any]:
    """The options of :func:`train_parser` for ``cfg`` from those of ``dparse train``:
    ``workers`` (WorkerOptions, or None for one worker) for a family that trains on workers;
    ``jobs`` (processes) for a family that takes it and for a tagging pipeline; ``work``: a
    family's work directory (its ``work_key`` set in ``cfg``: ``work``, else the config's,
    else ``<out_dir>.work``) or a tagging pipeline's (default ``<out_dir>.work``). ConfigError
    where an option does not apply (``fold`` is for :attr:`ParserFamily.make_fold`, which the
    command calls itself)."""
    from dparse.tagging.pipeline import has_tagger

    record = family(cfg.parser)
    pipeline = has_tagger(cfg)
    options: dict[str, Any] = {}
    if workers is not None:
        if not record.trains_on_workers:
            takers = [other.name for other in families() if other.trains_on_workers]
            raise ConfigError(f"--workers trains parsers ({', '.join(takers)}); a "
                              f"{cfg.parser} config trains on one core")
        options["workers"] = workers
    taken = set(record.train_options()) | (set(PIPELINE_OPTIONS) if pipeline else set())
    given = {"work": work is not None, "jobs": jobs != 1, "fold": fold is not None}
    refused = [name for name, on in given.items() if on and name not in taken]
    if refused:
        raise ConfigError(_refusal(cfg, refused, pipeline))
    if "jobs" in taken:
        options["jobs"] = jobs
    if record.work_key is not None:
        section, _, key = record.work_key.partition(".")
        holder = getattr(cfg, section)
        if work is not None or getattr(holder, key) is None:
            setattr(holder, key, work or f"{out_dir}.work")
    elif pipeline:
        options["work"] = work or f"{out_dir}.work"
    return options


def _refusal(cfg: ExperimentConfig, refused: Sequence[str], pipeline: bool) -> str:
    """Why the ``dparse train`` options ``refused`` do not apply to ``cfg``: the families (and
    the tagging pipeline) that take each."""
    parts = []
    for name in refused:
        takers = [f"{other.summary} (parser: {other.name})" for other in families()
                  if name in other.train_options()]
        if name in PIPELINE_OPTIONS:
            takers.append("parsers trained on predicted tags (a tagger section)")
        parts.append(f"--{name} applies to {' and '.join(takers) or 'no parser'}")
    return (f"{'; '.join(parts)}; this is a {cfg.parser} config"
            + ("" if pipeline else " without a tagger"))


def train_model(cfg: ExperimentConfig, out_dir: Path, options: dict[str, Any],
                progress: bool = False, on_epoch: Callable[[EpochReport], None] | None = None
                ) -> TrainResult:
    """Train the parser of the loaded config ``cfg`` (``options``: :func:`train_options`) and
    save it in ``out_dir``, as ``dparse train`` and :func:`dparse.train` do."""
    from dparse.epochs import save_model

    result = train_parser(cfg, progress=progress, on_epoch=on_epoch, **options)
    save_model(result, cfg, out_dir)
    return result


def load_parser(directory: Path, cfg: ExperimentConfig, decoder_name: str | None,
                tags: str = "auto") -> LoadedParser:
    """Load the model in ``directory`` (trained with ``cfg``), parsing with ``decoder_name``
    (default: the config's decoder). A pipeline model tags first (``tags``: the mode of
    :meth:`dparse.tagging.model.TaggerModel.tag_batch`)."""
    from dparse.modeldir import TAGGER_DIR

    parser = family(cfg.parser).load(directory, cfg, decoder_name or cfg.decoder.name)
    if (directory / TAGGER_DIR).is_dir():  # the pipeline's modules only for a model that tags
        from dparse.tagging.pipeline import TaggingParser, load_tagger

        return TaggingParser(load_tagger(directory, cfg), tags, parser)
    return parser


def check_model_overrides(model_dir: Path, overrides: Sequence[str],
                          ensemble: bool = False) -> None:
    """ConfigError naming the first ``--set`` of ``overrides`` whose key the family of the
    model in ``model_dir`` does not accept (a DparseError first if that is not a sound model
    directory): its ``parse_time_keys`` (``dparse parse``, ``tag``, ``search-errors``), or
    with ``ensemble`` its ``ensemble_keys``. Every other key (features, data, training, ...)
    was fixed by training: overriding it would change nothing."""
    if not overrides:
        return
    from dparse.modeldir import CONFIG_FILE, check_model_dir

    check_model_dir(model_dir)
    trained = load_config(model_dir / CONFIG_FILE)
    record = family(trained.parser)
    allowed = record.ensemble_keys if ensemble else record.parse_time_keys
    for item in overrides:
        key = item.partition("=")[0].strip()
        if not any(key == k or key.startswith(k + ".") for k in allowed):
            can = f"{', '.join(allowed)} and their sub-keys" if allowed else "no key"
            raise ConfigError(
                f"{model_dir}: --set {key} does not apply to this command with a trained model "
                f"(a {trained.parser} parser; training fixed the rest of its config): it takes "
                f"{can}"
            )
