"""The registry of parser families: one :class:`ParserFamily` record per value of a config's
``parser`` key, each registered in its own subpackage.

A record says everything the rest of dparse needs of a family: the config sections it owns
and its check of the config, its trainer and loader, the ``--set`` keys that a trained model's
commands accept, whether it trains on several workers, the extra ``dparse train`` options it
takes, the settings that name other config files, the modules that register its decoders, and
what it can do (ensembles, search errors, parsing at all). :mod:`dparse.config` reads and
checks the families' sections through it, :mod:`dparse.parsers` trains and loads through it,
:mod:`dparse.decoders` finds its decoders through it, and the commands ask it what a model can
do: no other module lists the families.

:data:`FAMILY_MODULES` lists one module per family subpackage; each defines ``FAMILIES``, a
tuple of its records, and is imported on the first use of the registry (by
:func:`families`), so that this module stays cheap to import and imports no family module
itself (tests/test_layout.py). A family module keeps the record cheap too: its ``train`` and
``load`` import the family's heavy modules inside the function. A check imports
:mod:`dparse.sections`, :mod:`dparse.errors`, the family's own sections and the extensions it
needs (the graph family's, inside the function, :func:`dparse.decoders.check_decoder`), never
:mod:`dparse.config` (which imports this module: tests/test_layout.py finds any cycle).

A new family needs its subpackage and one line here. The tagger is the worked example
(``parser: tagger``, its keys in a section ``tagging``, and a ``tagger`` section that a parser
config fills to carry one):

1. its section dataclasses in ``dparse/tagging/sections.py`` (``TaggingConfig``,
   ``TaggerConfig``); keys, types and defaults are then read and checked like every section's,
   and each is an attribute of a loaded config (``cfg.tagging``);
2. its check, ``check_tagging(cfg, source)`` in ``dparse/tagging/checks.py``, raising
   :class:`~dparse.errors.ConfigError` with ``f"{source}: tagging.KEY ..."``; it runs on every
   config, whatever its ``parser`` (a section left at its defaults passes; it may check the
   ``tagger`` section of any parser's config, as ``check_rerank`` returns early for other
   parsers when its section only means something to its own);
3. its record in ``dparse/tagging/family.py``: ``TAGGER = ParserFamily(name="tagger",
   sections={"tagging": TaggingConfig, "tagger": TaggerConfig}, check=check_tagging,
   train=..., load=..., trains_on_workers=False, parses=False,
   config_references=("tagger.config",), ...)`` and ``FAMILIES = (TAGGER,)``;
4. ``"dparse.tagging.family"`` in :data:`FAMILY_MODULES` here.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dparse.errors import ConfigError
from dparse.sections import CORE_SECTIONS, SectionCheck

# The modules that register the families, one per family subpackage, in registry order: the
# order of the families' checks, of their sections in a saved config and of the names in
# messages.
FAMILY_MODULES = (
    "dparse.graph.family",
    "dparse.undirected.family",
    "dparse.transition.family",
    "dparse.rerank.family",
    "dparse.tagging.family",
    "dparse.tokenizing.family",
    "dparse.neural.family",
)


@dataclass(frozen=True, eq=False)
class ParserFamily:
    """One parser family: what the config, the trainers, the loaders and the commands need.

    - ``name``: the config's ``parser`` value; ``summary``: one line, a plural noun phrase
      ("forest rerankers ..."), as messages name the family;
    - ``train(cfg, progress, on_epoch, workers=None, **options) -> TrainResult``
      (:class:`dparse.epochs.TrainResult`): ``workers`` (only where ``trains_on_workers``)
      the :class:`~dparse.batch.engines.WorkerOptions` of ``--workers`` (None: one worker),
      ``options`` the keyword options it takes (``jobs`` where ``takes_jobs``);
    - ``load(directory, cfg, decoder_name) -> LoadedParser``
      (:class:`dparse.parsers.LoadedParser`): the model saved in ``directory`` ready to
      parse with ``decoder_name`` (ConfigError for a decoder it cannot use);
    - ``sections``: the config sections it owns, key -> dataclass; ``check(cfg, source)``:
      its check of the config, run on every config (None: none);
    - ``parse_time_keys``: the ``--set`` keys (with their sub-keys) that a trained model's
      ``dparse parse``, ``tag`` and ``search-errors`` accept, the values parsing reads;
      ``ensemble_keys``: those ``dparse ensemble`` accepts, empty for a family whose models
      it cannot use;
    - ``trains_on_workers``: ``--workers`` (iterative parameter mixing) trains it;
    - the extra ``dparse train`` options (:meth:`train_options`): ``takes_jobs`` (its trainer
      takes ``jobs``, the processes its jackknife folds run in), ``work_key`` (the
      ``section.key`` of its work directory, which ``--work`` sets and which defaults to
      ``<out>.work`` when the config leaves it null) and ``make_fold(cfg, fold, progress)``
      (``--fold K``: make fold K of its jackknife alone, returning the line to report);
    - ``config_references``: the ``section.key`` settings that name another config file,
      resolved relative to the naming config;
    - ``decoders``: the modules that register its decoders in :mod:`dparse.decoders`;
    - ``scores_parts``: its models score part arrays that registered decoders decode
      (``dparse search-errors``); ``parses``: False for a family whose models only tag
      (``dparse tag``; a grid cell scores their tags).
    """

    name: str
    summary: str
    train: Callable[..., Any]
    load: Callable[..., Any]
    sections: Mapping[str, type] = field(default_factory=dict)
    check: SectionCheck | None = None
    parse_time_keys: tuple[str, ...] = ()
    ensemble_keys: tuple[str, ...] = ()
    trains_on_workers: bool = True
    takes_jobs: bool = False
    work_key: str | None = None
    make_fold: Callable[[Any, int, bool], str] | None = None
    config_references: tuple[str, ...] = ()
    decoders: tuple[str, ...] = ()
    scores_parts: bool = False
    parses: bool = True

    def train_options(self) -> tuple[str, ...]:
        """The extra ``dparse train`` options it takes, of ``jobs``, ``work`` and ``fold``."""
        return tuple(name for name, taken in (("jobs", self.takes_jobs),
                                              ("work", self.work_key is not None),
                                              ("fold", self.make_fold is not None)) if taken)


def families() -> tuple[ParserFamily, ...]:
    """Every registered family, in registry order (:data:`FAMILY_MODULES`)."""
    return _collect(FAMILY_MODULES)


@functools.lru_cache(maxsize=4)
def _collect(modules: tuple[str, ...]) -> tuple[ParserFamily, ...]:
    """The records of ``modules``' ``FAMILIES`` (cached by the tuple, so that a test that
    registers another module sees it); ValueError for two families of one name or two owners
    of one section."""
    found: list[ParserFamily] = []
    owners = dict.fromkeys(CORE_SECTIONS, "the core")
    for module in modules:
        for record in importlib.import_module(module).FAMILIES:
            if any(record.name == other.name for other in found):
                raise ValueError(f"{module}: a parser family named {record.name!r} is "
                                 "registered already")
            for key in record.sections:
                if key in owners:
                    raise ValueError(f"{module}: section {key!r} of {record.name} belongs to "
                                     f"{owners[key]} already")
                owners[key] = record.name
            found.append(record)
    return tuple(found)


def family_names() -> tuple[str, ...]:
    """The registered ``parser`` values, in registry order."""
    return tuple(record.name for record in families())


def family(name: str) -> ParserFamily:
    """The family registered as ``name``; ConfigError naming the known ones otherwise."""
    for record in families():
        if record.name == name:
            return record
    raise ConfigError(f"parser type {name!r} cannot be trained or loaded here "
                      f"(known: {', '.join(sorted(family_names()))})")


def family_sections() -> dict[str, type]:
    """Every family's sections, key -> dataclass, in registry order."""
    return {key: cls for record in families() for key, cls in record.sections.items()}


def config_references() -> tuple[tuple[str, str], ...]:
    """(section, key) of every setting that names another config file, relative to the naming
    config's file (resolved by :func:`dparse.config.load_config` when it has the file's
    path)."""
    return tuple((ref.partition(".")[0], ref.partition(".")[2]) for record in families()
                 for ref in record.config_references)
