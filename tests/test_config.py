"""dparse.config: defaults, ``--set`` overrides, validation errors that name the key, data root."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dparse.config import (
    DEFAULT_DATA_ROOT,
    DecoderConfig,
    ExperimentConfig,
    FeatureConfig,
    TrainingConfig,
    load_config,
    save_config,
)
from dparse.errors import ConfigError, DparseError

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "configs").rglob("*.yaml"))
MINIMAL = "data:\n  train: en_ewt/train.conllu\n"


def _write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _raw(**sections: dict) -> dict:
    return {"data": {"train": "t.conllu"}, **sections}


def test_defaults(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, MINIMAL, "my-exp.yaml"))
    assert cfg.name == "my-exp"  # the file's stem when the config has no name
    assert cfg.data.train == "en_ewt/train.conllu"
    assert cfg.data.dev is None and cfg.data.test is None and cfg.data.format is None
    assert cfg.data.encoding == "utf-8"
    assert cfg.features == FeatureConfig() and (cfg.features.arc_bits, cfg.features.label_bits) == (
        23, 17)
    assert cfg.decoder == DecoderConfig() and cfg.decoder.name == "cle" and cfg.decoder.single_root
    assert cfg.training == TrainingConfig()
    t = cfg.training
    assert (t.learner, t.epochs, t.C, t.seed, t.shuffle, t.select_by, t.punct) == (
        "pa", 10, 0.05, 1, True, "las", "include")


def test_name_from_the_file_wins_over_the_stem(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, "name: fancy\n" + MINIMAL))
    assert cfg.name == "fancy"


def test_overrides(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL + "training:\n  epochs: 7\n")
    cfg = load_config(path, [
        "training.epochs=3",
        "training.C=0.5",
        "training.learner=perceptron",
        "decoder.single_root=false",
        "decoder.name=eisner",
        "features.arc_bits=20",  # a section the file does not have
        "data.dev=null",
        "data.test=en_ewt/test.conllu",
        "name=renamed",
    ])
    assert cfg.training.epochs == 3 and isinstance(cfg.training.epochs, int)
    assert cfg.training.C == 0.5 and cfg.training.learner == "perceptron"
    assert cfg.decoder.single_root is False and cfg.decoder.name == "eisner"
    assert cfg.features.arc_bits == 20 and cfg.features.label_bits == 17
    assert cfg.data.dev is None and cfg.data.test == "en_ewt/test.conllu"
    assert cfg.name == "renamed"


def test_later_overrides_win_and_ints_become_floats() -> None:
    cfg = load_config(raw=_raw(), overrides=["training.epochs=3", "training.epochs=4",
                                             "training.C=1"])
    assert cfg.training.epochs == 4
    assert cfg.training.C == 1.0 and isinstance(cfg.training.C, float)


@pytest.mark.parametrize("item", ["training.epochs", "=3", "training.epochs3"])
def test_override_of_bad_form(item: str) -> None:
    with pytest.raises(ConfigError, match="key.path=value"):
        load_config(raw=_raw(), overrides=[item])


def test_override_through_a_value_that_is_not_a_section() -> None:
    with pytest.raises(ConfigError, match="not a section"):
        load_config(raw=_raw(training={"epochs": 3}), overrides=["training.epochs.deep=3"])


def test_override_value_that_is_not_yaml() -> None:
    with pytest.raises(ConfigError, match="training.epochs"):
        load_config(raw=_raw(), overrides=["training.epochs=[1"])


def test_override_into_an_empty_section(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, MINIMAL + "training:\n"), ["training.epochs=3"])
    assert cfg.training.epochs == 3


@pytest.mark.parametrize("name", [{"x": 3}, 7, None])
def test_name_must_be_a_string(name: object) -> None:
    with pytest.raises(ConfigError, match="name must be a string"):
        load_config(raw={**_raw(), "name": name})


def test_empty_section_means_defaults(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, MINIMAL + "training:\nfeatures:\n"))
    assert cfg.training == TrainingConfig() and cfg.features == FeatureConfig()


def test_unknown_key_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL + "training:\n  epoch: 3\n")
    with pytest.raises(ConfigError, match="epoch") as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message and "training" in message and "epochs" in message  # known keys


def test_unknown_key_from_an_override_is_named() -> None:
    with pytest.raises(ConfigError, match="arc_bitz"):
        load_config(raw=_raw(), overrides=["features.arc_bitz=20"])


def test_unknown_section_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="trainig"):
        load_config(_write(tmp_path, MINIMAL + "trainig:\n  epochs: 3\n"))
    with pytest.raises(ConfigError, match="decoders"):
        load_config(raw=_raw(), overrides=["decoders.name=cle"])


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("training", "epochs", "three"),
        ("training", "epochs", 3.5),
        ("training", "epochs", True),
        ("training", "C", "big"),
        ("training", "shuffle", "yes"),
        ("training", "shuffle", 1),
        ("decoder", "single_root", "true"),
        ("features", "arc_bits", True),
        ("features", "label_bits", [17]),
        ("decoder", "name", 3),
        ("data", "train", 5),
    ],
)
def test_wrong_types_name_the_key(section: str, key: str, value: object) -> None:
    raw = _raw()
    raw.setdefault(section, {})[key] = value
    with pytest.raises(ConfigError, match=f"{section}.{key}"):
        load_config(raw=raw)


def test_a_section_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="training: expected a mapping"):
        load_config(raw=_raw(training=[1, 2]))


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("training.learner=sgd", "training.learner"),
        ("training.epochs=0", "training.epochs"),
        ("training.C=0", "training.C"),
        ("training.C=-1", "training.C"),
        ("training.select_by=f1", "training.select_by"),
        ("training.punct=all", "training.punct"),
        ("features.arc_bits=31", "arc_bits"),
        ("features.label_bits=7", "label_bits"),
        ("data.train=''", "data.train"),
    ],
)
def test_bad_values(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        load_config(raw=_raw(), overrides=[override])


def test_missing_train_file_is_an_error() -> None:
    with pytest.raises(ConfigError, match="data.train"):
        load_config(raw={"training": {"epochs": 2}})


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match="nope.yaml: cannot read"):
        load_config(missing)
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(_write(tmp_path, "data: [unclosed\n", "bad.yaml"))
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(_write(tmp_path, "- a\n- b\n", "list.yaml"))
    with pytest.raises(ConfigError, match="data.train"):
        load_config(_write(tmp_path, "", "empty.yaml"))
    with pytest.raises(ConfigError):
        load_config()
    assert issubclass(ConfigError, DparseError)


def test_data_root_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, MINIMAL)
    monkeypatch.delenv("DPARSE_DATA", raising=False)
    assert load_config(path).data_root == DEFAULT_DATA_ROOT == "../shared/data"
    monkeypatch.setenv("DPARSE_DATA", "/from/env")
    cfg = load_config(path)
    assert cfg.data_root == "/from/env"
    assert cfg.data_path(cfg.data.train) == Path("/from/env/en_ewt/train.conllu")
    explicit = load_config(path, data_root="/explicit")  # --data-root beats the environment
    assert explicit.data_path("en_ewt/dev.conllu") == Path("/explicit/en_ewt/dev.conllu")
    assert explicit.data_path("/abs/file.conllu") == Path("/abs/file.conllu")
    monkeypatch.setenv("DPARSE_DATA", "")
    assert load_config(path).data_root == DEFAULT_DATA_ROOT


def test_save_and_reload(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, MINIMAL), ["training.epochs=2", "decoder.name=eisner"],
                      data_root="/somewhere")
    saved = tmp_path / "saved.yaml"
    save_config(cfg, saved)
    assert "data_root" not in saved.read_text()  # a model does not remember where data was
    again = load_config(saved, data_root="/somewhere")
    assert again == cfg
    assert dataclasses.asdict(again) == dataclasses.asdict(cfg)


def test_shipped_configs_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DPARSE_DATA", raising=False)
    names = {p.name for p in SHIPPED}
    assert {"o1-cle.yaml", "o1-eisner.yaml"} <= names
    for path in SHIPPED:
        cfg = load_config(path)
        assert isinstance(cfg, ExperimentConfig) and cfg.data.train
    cle = load_config(REPO / "configs" / "en_ewt" / "o1-cle.yaml")
    eisner = load_config(REPO / "configs" / "en_ewt" / "o1-eisner.yaml")
    assert (cle.name, cle.decoder.name) == ("en_ewt-o1-cle", "cle")
    assert (eisner.name, eisner.decoder.name) == ("en_ewt-o1-eisner", "eisner")
    # the two differ only in the decoder (and the name)
    assert (cle.data, cle.features, cle.training) == (eisner.data, eisner.features,
                                                      eisner.training)


def test_shipped_configs_name_existing_treebanks(data: Path) -> None:
    for path in SHIPPED:
        cfg = load_config(path, data_root=str(data))
        for split in (cfg.data.train, cfg.data.dev, cfg.data.test):
            if split:
                assert cfg.data_path(split).is_file(), (path, split)
