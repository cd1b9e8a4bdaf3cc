"""The parser families as a config sees them: the ``parser`` types and each family's check of
its own config sections.

:func:`dparse.config.validate` checks the core sections (``data``, the shared keys of
``features``, ``decoder``, ``training``, ``ensemble``) itself and then calls every check in
:data:`CHECKS`, whatever the config's ``parser`` (a family's section left at its defaults always
passes), before it checks the decoders by name. It imports this module when it validates, so a
config read in a process that imported only :mod:`dparse.config` is checked in full. A check
module imports only :mod:`dparse.sections`, :mod:`dparse.errors` and the extensions it needs,
never :mod:`dparse.config` (which imports this module: tests/test_layout.py finds any cycle).

A new family registers in four places, as the tagger did (``parser: tagger``, its keys in a
section ``tagging``, and a ``tagger`` section that a parser config fills to carry one):

1. its section dataclasses in :mod:`dparse.sections` (``TaggingConfig``, ``TaggerConfig``): a
   field of :class:`~dparse.sections.ExperimentConfig` each and an entry each in
   :data:`~dparse.sections.SECTIONS` (keys, types and defaults are then read and checked like
   every section's);
2. its check, ``check_tagging(cfg, source)`` in ``dparse/tagging/checks.py``, raising
   :class:`~dparse.errors.ConfigError` with ``f"{source}: tagging.KEY ..."`` (it may check the
   ``tagger`` section of any parser's config, as ``check_rerank`` returns early for other
   parsers when its section only means something to its own);
3. ``"tagger"`` in :data:`PARSERS` and ``"tagger": check_tagging`` in :data:`CHECKS` here;
4. its trainer and loader in :data:`dparse.parsers.TRAINERS` and ``LOADERS`` (tests check that
   those tables and :data:`PARSERS` name the same types).
"""

from __future__ import annotations

from dparse.graph.checks import check_graph
from dparse.rerank.checks import check_rerank
from dparse.sections import SectionCheck
from dparse.tagging.checks import check_tagging
from dparse.transition.checks import check_shiftreduce
from dparse.undirected.checks import check_umst

# The values of the config's top-level ``parser`` key.
PARSERS = ("graph", "easyfirst", "umst", "shiftreduce", "rerank", "tagger")

# Each family's check of its sections, by parser type (easy-first reads only core sections),
# run in this order on every config.
CHECKS: dict[str, SectionCheck] = {
    "graph": check_graph,
    "umst": check_umst,
    "shiftreduce": check_shiftreduce,
    "rerank": check_rerank,
    "tagger": check_tagging,
}
