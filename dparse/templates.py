"""Feature-template versions: saved with every model, checked when a model loads.

A model's weights mean something only under the feature templates that trained them: another
template, hash seed or attribute moves the weight indices, and a model trained before would
parse without an error, badly. So every set of templates has a version, declared once beside
the templates: ``TEMPLATES_VERSION`` in the module that defines them (``EDGE_TEMPLATES_VERSION``
for the undirected edge templates, which share arcfeatures.pyx with the first-order ones). A
change that gives any input other features takes the next version. A model saves the version
of each set it reads, and its loader refuses a model whose saved version of a set is not the
code's: a :class:`DparseError` naming the model directory, the set, both versions and asking
to retrain it.

The sets and the models that read them:

- :data:`ARC`, first-order arc features: first-order models (and every pruner, ``pruner/``),
  second- and third-order models, undirected models, forest rerankers;
- :data:`EDGE`, undirected edge templates: undirected models with ``umst.edge_templates``;
- :data:`O2`, second-order features: second-order models;
- :data:`O3`, third-order features: third-order models, forest rerankers (their sibling,
  grandchild and label templates);
- :data:`EASYFIRST`, easy-first features: easy-first models;
- :data:`SHIFTREDUCE`, shift-reduce features: shift-reduce models (and a reranker's
  ``first-stage/``);
- :data:`RERANK`, forest reranker features: forest rerankers;
- :data:`TAGGER`, tagger features: taggers (and a pipeline model's ``tagger/``);
- :data:`TOKENIZER`, tokenizer features: tokenizers.

Saving format: ``templates.json`` in the model directory (and in each model directory inside
it), one JSON object of set keys and versions, e.g. ``{"arc": 1, "o2": 1}``, written by the
model's ``write_files`` (:func:`write_templates`) and listed in the manifest like its other
files; the weights file keeps its bytes (the same training gives the same ``weights.bin``).
A model saved without the file, or without a set in it, was trained with version 1 of that
set (:data:`UNVERSIONED`, every set's version before versions were saved). The shift-reduce
model alone keeps its version where it saved it before: the ``templates`` entry of its
``weights.bin`` (version 1 where absent), checked by :func:`check_version`.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from dparse.errors import DparseError
from dparse.outputs import write_text

TEMPLATES_FILE = "templates.json"
UNVERSIONED = 1  # the version of a set that a model saved without it was trained with


@dataclass(frozen=True)
class TemplateSet:
    """A set of feature templates: its ``key`` in templates.json, its ``title`` and its
    ``source``, the file that defines the templates and their version, the constant named
    ``constant``."""

    key: str
    title: str
    source: str
    constant: str = "TEMPLATES_VERSION"

    @property
    def name(self) -> str:
        """What errors call the set: its title and source file."""
        return f"{self.title} ({self.source})"

    @property
    def version(self) -> int:
        """The code's version of the set. Its module is imported when the version is asked
        for, not with this module: a model loads only the extensions of its own family."""
        module = importlib.import_module(self.source.rpartition(".")[0].replace("/", "."))
        return int(getattr(module, self.constant))


ARC = TemplateSet("arc", "first-order arc features", "dparse/_ext/arcfeatures.pyx")
EDGE = TemplateSet("edge", "undirected edge templates", "dparse/_ext/arcfeatures.pyx",
                   "EDGE_TEMPLATES_VERSION")
O2 = TemplateSet("o2", "second-order features", "dparse/graph/o2features.pyx")
O3 = TemplateSet("o3", "third-order features", "dparse/graph/o3features.pyx")
EASYFIRST = TemplateSet("easyfirst", "easy-first features",
                        "dparse/transition/easyfirst_core.pyx")
SHIFTREDUCE = TemplateSet("shiftreduce", "shift-reduce features",
                          "dparse/transition/shiftreduce_templates.pyx")
RERANK = TemplateSet("rerank", "forest reranker features", "dparse/rerank/reranker.pyx")
TAGGER = TemplateSet("tagger", "tagger features", "dparse/tagging/features.py")
TOKENIZER = TemplateSet("tokenizer", "tokenizer features", "dparse/tokenizing/segmenter.pyx")
SETS = (ARC, EDGE, O2, O3, EASYFIRST, SHIFTREDUCE, RERANK, TAGGER, TOKENIZER)


def write_templates(directory: Path, *sets: TemplateSet) -> None:
    """Write the code's version of each of ``sets`` into ``directory``'s templates.json."""
    versions = {templates.key: templates.version for templates in sets}
    write_text(directory / TEMPLATES_FILE, json.dumps(versions, sort_keys=True) + "\n")


def saved_versions(directory: Path) -> dict[str, int]:
    """The set keys and versions of ``directory``'s templates.json ({} without the file);
    DparseError naming the file if it is not such an object."""
    path = directory / TEMPLATES_FILE
    if not path.is_file():
        return {}
    try:
        versions = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DparseError(f"{path}: cannot read the feature-template versions ({exc}); "
                          "retrain the model") from None
    if not isinstance(versions, dict) or not all(
            type(version) is int for version in versions.values()):
        raise DparseError(f"{path}: not an object of feature-template versions; retrain the "
                          "model")
    return versions


def check_version(directory: Path, templates: TemplateSet, saved: int) -> None:
    """DparseError unless ``saved``, the version of ``templates`` that the model in
    ``directory`` was trained with, is the code's."""
    if saved != templates.version:
        raise DparseError(f"{directory}: trained with feature templates version {saved} of "
                          f"the {templates.name}, this dparse has version "
                          f"{templates.version}: retrain it")


def check_templates(directory: Path, *sets: TemplateSet) -> None:
    """DparseError unless the model in ``directory`` was trained with the code's version of
    each of ``sets`` (by its templates.json; a set missing there: :data:`UNVERSIONED`)."""
    saved = saved_versions(directory)
    for templates in sets:
        check_version(directory, templates, saved.get(templates.key, UNVERSIONED))
