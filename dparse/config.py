"""YAML experiment configs -> typed, validated objects.

A config has the core sections ``data``, ``features``, ``decoder`` and ``training`` (see
``configs/en_ewt/o1-cle.yaml`` for every key, commented), and optionally the sections of any
parser family (:func:`dparse.families.family_sections`; e.g. the graph family's ``pruner``,
``configs/en_ewt/o2-dd.yaml``). ``--set key.path=value`` overrides
patch the YAML before validation; values are parsed as YAML scalars (``--set
training.epochs=3``). Treebank paths are relative to the data root: ``--data-root``, else
``$DPARSE_DATA``, else ``../shared/data``.

The core sections' dataclasses are defined in :mod:`dparse.sections` and read from here; the
families' in their subpackages. This module knows no parser family: it checks the core
sections and reads, resolves and checks each family's own sections through the registry
:mod:`dparse.families`, which says how a new family registers.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from pathlib import Path
from typing import Any

import yaml

from dparse.columns import parse_columns_setting
from dparse.errors import ConfigError
from dparse.families import config_references, families, family_names, family_sections
from dparse.outputs import write_text
from dparse.sections import (
    CORE_SECTIONS,
    DEFAULT_DATA_ROOT,
    DataConfig,
    DecoderConfig,
    ExperimentConfig,
    FeatureConfig,
    TrainingConfig,
)

# The core dataclasses live in dparse.sections (which the families' checks import); read them
# here.
__all__ = [
    "CORE_SECTIONS", "DEFAULT_DATA_ROOT", "DataConfig", "DecoderConfig", "ExperimentConfig",
    "FeatureConfig", "TrainingConfig", "PUNCT_RULES", "YamlLoader", "apply_overrides",
    "load_config", "load_yaml", "read_yaml", "save_config", "validate",
]
PUNCT_RULES = ("include", "conll", "ptb", "upos")


class YamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader (libyaml's parser where PyYAML has it: several times faster, which a
    model's load feels), reading floats as YAML 1.2 does: ``1e-9`` and ``2E5`` are numbers
    (YAML 1.1, PyYAML's default, wants a dot, ``1.0e-9``, and reads ``1e-9`` as a string)."""


YamlLoader.yaml_implicit_resolvers = {
    key: list(resolvers) for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def load_yaml(text: Any) -> Any:
    """A YAML document (a string or a file) read by :class:`YamlLoader`."""
    return yaml.load(text, Loader=YamlLoader)


def apply_overrides(raw: dict[str, Any], overrides: list[str], source: str) -> None:
    """Patch ``raw`` in place with ``key.path=value`` strings."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{source}: override {item!r} is not of the form key.path=value")
        node = raw
        parts = key.split(".")
        for part in parts[:-1]:
            if node.get(part) is None:  # absent, or a section left empty in the YAML
                node[part] = {}
            node = node[part]
            if not isinstance(node, dict):
                raise ConfigError(f"{source}: override {item!r}: {part!r} is not a section")
        try:
            node[parts[-1]] = load_yaml(value)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{source}: override {key}: {value!r} is not a YAML value") from exc


def _build(cls: type, raw: Any, where: str) -> Any:
    """Instantiate a config dataclass from a mapping, checking keys and value types."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(raw).__name__}")
    # keys the section once had (its ``retired_keys``: key -> (old default, why)): a config
    # that gives the old default (a model saved before) loads as if the key were absent
    retired = getattr(cls, "retired_keys", {})
    for key in [k for k in raw if k in retired]:
        old_default, why = retired[key]
        if raw[key] != old_default:
            raise ConfigError(f"{where}.{key}: {why}")
        raw = {k: v for k, v in raw.items() if k != key}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}"
        )
    values = {}
    for name, value in raw.items():
        default = getattr(cls(), name)
        if fields[name].type == "bool | str":  # true, false or "auto"
            ok = isinstance(value, bool) or value == "auto"
        elif isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(default, float):
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif isinstance(default, dict):
            ok = isinstance(value, dict)
        elif fields[name].type == "float | None":
            ok = value is None or isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value) if ok and value is not None else value
        else:
            ok = value is None or isinstance(value, str)
        if not ok:
            raise ConfigError(f"{where}.{name}: bad value {value!r}")
        values[name] = value
    return cls(**values)


def validate(cfg: ExperimentConfig, source: str) -> None:
    """Check the values that have a fixed set of choices or ranges: the core sections here,
    then each family's sections (and the decoders it reads) by its registered check, in
    registry order (:mod:`dparse.families`)."""
    if not cfg.data.train:
        raise ConfigError(f"{source}: data.train is required")
    if cfg.parser not in family_names():
        raise ConfigError(f"{source}: parser must be one of {', '.join(family_names())}")
    try:
        parse_columns_setting(cfg.data.columns)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None
    if cfg.features.tag not in ("auto", "upos", "xpos"):
        raise ConfigError(f"{source}: features.tag must be auto, upos or xpos")
    if cfg.features.order not in (1, 2, 3):
        raise ConfigError(f"{source}: features.order must be 1, 2 or 3")
    if cfg.training.invalid_updates not in ("skip", "keep"):
        raise ConfigError(f"{source}: training.invalid_updates must be skip or keep")
    if not cfg.features.siblings and cfg.features.order != 2:
        raise ConfigError(f"{source}: features.siblings: false is for second-order models "
                          "(features.order: 2)")
    if not cfg.features.siblings and not cfg.features.grandparents:
        raise ConfigError(f"{source}: features.siblings and features.grandparents are both "
                          "false: a second-order model needs one of them")
    if cfg.training.learner not in ("perceptron", "pa"):
        raise ConfigError(f"{source}: training.learner must be 'perceptron' or 'pa'")
    if cfg.training.epochs < 1:
        raise ConfigError(f"{source}: training.epochs must be at least 1")
    if cfg.training.C <= 0:
        raise ConfigError(f"{source}: training.C must be positive")
    if cfg.training.select_by not in ("uas", "las"):
        raise ConfigError(f"{source}: training.select_by must be 'uas' or 'las'")
    if cfg.training.punct not in PUNCT_RULES:
        raise ConfigError(f"{source}: training.punct must be one of {', '.join(PUNCT_RULES)}")
    if not 10 <= cfg.features.arc_bits <= 30 or not 8 <= cfg.features.label_bits <= 26:
        raise ConfigError(f"{source}: features.arc_bits in 10..30 and label_bits in 8..26")
    if cfg.training.decoder is None and cfg.training.decoder_options:
        raise ConfigError(f"{source}: training.decoder_options needs training.decoder (with a "
                          "null training.decoder, training uses decoder.name and decoder.options)")
    for record in families():
        if record.check is not None:
            record.check(cfg, source)


def read_yaml(path: str | os.PathLike) -> Any:
    """The YAML document in ``path``; ConfigError naming the file if it cannot be read or
    parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return load_yaml(f)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None


def load_config(
    path: str | os.PathLike | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    data_root: str | None = None,
    raw: dict[str, Any] | None = None,
) -> ExperimentConfig:
    """Read a YAML config (or take an already-parsed mapping), apply overrides, validate."""
    source = str(path) if path is not None else "<config>"
    if raw is None:
        if path is None:
            raise ConfigError("no config given")
        raw = read_yaml(path) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a mapping")
    apply_overrides(raw, list(overrides), source)
    sections = family_sections()
    unknown = sorted(set(raw) - set(CORE_SECTIONS) - set(sections) - {"name", "parser"})
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(unknown)}")
    name = raw.get("name", Path(source).stem)
    if not isinstance(name, str):
        raise ConfigError(f"{source}: name must be a string, got {name!r}")
    cfg = ExperimentConfig(
        name=name,
        parser=str(raw.get("parser", "graph")),
        data_root=data_root or os.environ.get("DPARSE_DATA") or DEFAULT_DATA_ROOT,
        **{key: _build(cls, raw.get(key), f"{source}: {key}")
           for key, cls in CORE_SECTIONS.items()},
        family_sections={key: _build(cls, raw.get(key), f"{source}: {key}")
                         for key, cls in sections.items()},
    )
    for section, key in config_references():
        other = getattr(getattr(cfg, section), key)  # another config, named from this one
        if other and path is not None and not Path(other).is_absolute():
            setattr(getattr(cfg, section), key, os.path.normpath(Path(path).parent / other))
    validate(cfg, source)
    if cfg.decoder.single_root == "auto":
        train = str(cfg.data_path(cfg.data.train))
        try:
            st = os.stat(train)
        except OSError as exc:
            raise ConfigError(f"{source}: decoder.single_root auto reads the training file "
                              f"{train}: {exc.strerror}") from None
        cfg.decoder.single_root = _single_rooted_file(train, cfg.data.format,
                                                      cfg.data.encoding, st.st_mtime_ns,
                                                      st.st_size)
    return cfg


@functools.lru_cache(maxsize=64)
def _single_rooted_file(path: str, fmt: str | None, encoding: str, mtime_ns: int,
                        size: int) -> bool:
    """Whether every tree of the training file ``path`` has exactly one root word
    (``decoder.single_root: auto``); read once per process while the file is unchanged."""
    from dparse.conll import read_conll
    from dparse.trees import root_words

    return all(len(s.heads) < 2 or root_words(s.heads) == 1
               for s in read_conll(path, fmt=fmt, encoding=encoding))


def save_config(cfg: ExperimentConfig, path: Path) -> None:
    """Write the resolved config as YAML, whole or not at all (:mod:`dparse.outputs`)."""
    write_text(path, yaml.safe_dump(cfg.to_dict(), sort_keys=False))
