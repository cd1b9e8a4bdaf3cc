"""dparse.config: defaults, ``--set`` overrides, validation errors that name the key, data root;
the training decoder (training.decoder) and the ensemble section."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from paths import REPO

from dparse.config import (
    DEFAULT_DATA_ROOT,
    DecoderConfig,
    ExperimentConfig,
    FeatureConfig,
    TrainingConfig,
    load_config,
    load_yaml,
    save_config,
)
from dparse.conll import Sentence, write_conll
from dparse.errors import ConfigError, DparseError
from dparse.graph import training
from dparse.graph.model import ArcFactoredModel
from dparse.graph.sections import EnsembleConfig
from dparse.graph.training import parsing_decoder, training_decoder

# experiment configs; not decoder-tuning grids (*-grid.yaml) nor dparse grid files and their
# treebank lists (configs/grids/)
SHIPPED = sorted(p for p in (REPO / "configs").rglob("*.yaml")
                 if not p.name.endswith("-grid.yaml")
                 and "grids" not in p.relative_to(REPO / "configs").parts)
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


def test_exponent_floats_without_a_dot_are_numbers() -> None:
    """YAML 1.2 floats: 1e-9 is a number in --set values and in files, not the string PyYAML's
    YAML 1.1 rules make of it; words that only look alike stay strings."""
    cfg = load_config(raw=_raw(), overrides=["decoder.name=dd2", "decoder.options.tol=1e-9",
                                             "decoder.options.step=2E1"])
    assert cfg.decoder.options == {"tol": 1e-9, "step": 20.0}
    assert load_yaml("a: -3.5e+2\nb: 1e\nc: e5\nd: 7") == {"a": -350.0, "b": "1e", "c": "e5",
                                                            "d": 7}


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
        ("shiftreduce.upos_pair=true,features.tag=upos", "shiftreduce.upos_pair"),
    ],
)
def test_bad_values(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        load_config(raw=_raw(), overrides=override.split(","))


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


def _conllx(path: Path, root_words: list[int]) -> Path:
    """A CoNLL-X file of one sentence per entry, with that many words attached to the root
    (the rest attached to word 1)."""
    text = ""
    for k in root_words:
        for i in range(1, 4):
            head = 0 if i <= k else 1
            text += f"{i}\tw{i}\t_\tN\tNN\t_\t{head}\tdep\t_\t_\n"
        text += "\n"
    path.write_text(text, encoding="utf-8")
    return path


def test_single_root_auto_is_decided_by_the_training_trees(tmp_path: Path) -> None:
    single = _conllx(tmp_path / "single.conll", [1, 1])
    several = _conllx(tmp_path / "several.conll", [1, 2])
    auto = ["decoder.single_root=auto"]
    assert load_config(raw=_raw(), overrides=[*auto, f"data.train={single}"]
                       ).decoder.single_root is True
    cfg = load_config(raw=_raw(), overrides=[*auto, f"data.train={several}"])
    assert cfg.decoder.single_root is False
    saved = tmp_path / "saved.yaml"
    save_config(cfg, saved)  # the model's config records the choice
    assert "single_root: false" in saved.read_text() and load_config(saved) == cfg
    _conllx(several, [1, 1])  # the file changed: read again
    assert load_config(raw=_raw(), overrides=[*auto, f"data.train={several}"]
                       ).decoder.single_root is True
    with pytest.raises(ConfigError, match="single_root auto.*missing.conll"):
        load_config(raw=_raw(), overrides=[*auto, f"data.train={tmp_path / 'missing.conll'}"])
    with pytest.raises(ConfigError, match="decoder.single_root"):
        load_config(raw=_raw(), overrides=["decoder.single_root=maybe"])


def test_shipped_configs_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DPARSE_DATA", raising=False)
    names = {p.name for p in SHIPPED}
    assert {"o1-cle.yaml", "o1-eisner.yaml"} <= names
    for path in SHIPPED:
        try:
            cfg = load_config(path)
        except ConfigError as exc:  # single_root auto reads the training file
            assert not Path(DEFAULT_DATA_ROOT).is_dir()
            assert "single_root auto reads the training file" in str(exc)
            continue
        assert isinstance(cfg, ExperimentConfig) and cfg.data.train
    cle = load_config(REPO / "configs" / "en_ewt" / "o1-cle.yaml")
    eisner = load_config(REPO / "configs" / "en_ewt" / "o1-eisner.yaml")
    assert (cle.name, cle.decoder.name) == ("en_ewt-o1-cle", "cle")
    assert (eisner.name, eisner.decoder.name) == ("en_ewt-o1-eisner", "eisner")
    # the two differ only in the decoder (and the name)
    assert (cle.data, cle.features, cle.training) == (eisner.data, eisner.features,
                                                      eisner.training)


# Treebanks a user makes from data we cannot ship (a make target converts their copy).
MADE_BY_USERS = {"ptb": "make data-ptb WSJ=..."}


def test_shipped_configs_name_existing_treebanks(data: Path) -> None:
    for path in SHIPPED:
        cfg = load_config(path, data_root=str(data))
        for split in (cfg.data.train, cfg.data.dev, cfg.data.test):
            if split and Path(split).parts[0] not in MADE_BY_USERS:
                assert cfg.data_path(split).is_file(), (path, split)


# -- the training decoder and the ensemble section ------------------------------------------------


def test_training_decoder_and_ensemble_defaults() -> None:
    cfg = load_config(raw=_raw())
    assert cfg.training.decoder is None and cfg.training.decoder_options == {}
    assert cfg.ensemble == EnsembleConfig()
    e = cfg.ensemble
    assert (e.gamma1, e.gamma2, e.decoder, e.options) == (1.0, 0.25, "bgi-pp", {})
    # null: train with the decoder section's decoder and options
    assert training_decoder(cfg).name == parsing_decoder(cfg).name == "cle"


def test_training_decoder_is_configurable() -> None:
    cfg = load_config(raw=_raw(decoder={"name": "eisner"}), overrides=[
        "training.decoder=bgi-pp", "training.decoder_options.beta=0.3",
        "ensemble.gamma1=0.5", "ensemble.decoder=cle"])
    assert cfg.training.decoder == "bgi-pp" and cfg.training.decoder_options == {"beta": 0.3}
    train_dec, parse_dec = training_decoder(cfg), parsing_decoder(cfg)
    assert (train_dec.name, parse_dec.name) == ("bgi-pp", "eisner")
    assert train_dec.options == {"beta": 0.3}  # type: ignore[attr-defined]
    assert (cfg.ensemble.gamma1, cfg.ensemble.decoder) == (0.5, "cle")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("training.decoder=nope", "training.decoder: unknown decoder 'nope'"),
        ("ensemble.decoder=nope", "ensemble.decoder: unknown decoder 'nope'"),
        ("decoder.name=nope", "decoder.name: unknown decoder 'nope'"),
        ("training.decoder=7", "training.decoder: bad value 7"),
        ("training.decoder_options.beta=0.3", "training.decoder_options needs training.decoder"),
        ("ensemble.gamma1=-0.5", "ensemble.gamma1"),
        ("ensemble.gamma2=.nan", "ensemble.gamma2"),
        ("ensemble.gamma2=.inf", "ensemble.gamma2"),
        ("ensemble.options=[1]", "ensemble.options: bad value"),
        ("ensemble.options.gama=1", "ensemble.options {'gama': 1} rejected by decoder 'bgi-pp'"),
        ("decoder.options.max_iter=5", "decoder.options {'max_iter': 5} rejected by decoder 'cle'"),
    ],
)
def test_bad_decoders_name_the_key(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(raw=_raw(), overrides=[override])


def test_bad_decoder_options_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"training.decoder_options \{'beta': 2\} rejected .*"
                                          r"beta must be .*\[0.0, 1.0\], got 2"):
        load_config(raw=_raw(), overrides=["training.decoder=bgi-pp",
                                           "training.decoder_options.beta=2"])


def test_training_decoder_is_for_graph_parsers_only() -> None:
    with pytest.raises(ConfigError, match="training.decoder is for graph parsers only"):
        load_config(raw={**_raw(decoder={"name": "easyfirst-heap"}), "parser": "easyfirst"},
                    overrides=["training.decoder=cle"])


def test_training_uses_the_training_decoder_and_dev_the_parsing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(0)
    sents = []
    for _ in range(12):
        n = int(rng.integers(2, 7))
        heads = [-1, 0, *(int(rng.integers(1, m)) for m in range(2, n + 1))]  # a tree
        sents.append(Sentence.build([f"w{i}" for i in rng.integers(0, 5, n)], heads=heads,
                                    deprels=["", *(["dep"] * n)], upos=["X"] * n))
    write_conll(sents, tmp_path / "t.conllu")
    cfg = load_config(raw={"data": {"train": "t.conllu", "dev": "t.conllu"},
                           "features": {"arc_bits": 12, "label_bits": 8},
                           "decoder": {"name": "eisner"}, "training": {"epochs": 2}},
                      overrides=["training.decoder=bgi-pp", "training.decoder_options.alpha=2"],
                      data_root=str(tmp_path))
    used: dict[str, list[str]] = {"train": [], "dev": []}
    run_epoch, parse = training.run_epoch, ArcFactoredModel.parse

    def spy_epoch(model, learner, sentences, decoder, *args, **kw):  # noqa: ANN001, ANN002
        used["train"].append(f"{decoder.name} {getattr(decoder, 'options', {})}")
        return run_epoch(model, learner, sentences, decoder, *args, **kw)

    def spy_parse(self, sentences, decoder, *args, **kw):  # noqa: ANN001, ANN002
        used["dev"].append(decoder.name)
        return parse(self, sentences, decoder, *args, **kw)

    monkeypatch.setattr(training, "run_epoch", spy_epoch)
    monkeypatch.setattr(ArcFactoredModel, "parse", spy_parse)
    result = training.train(cfg, progress=False)
    assert used == {"train": ["bgi-pp {'alpha': 2}"] * 2, "dev": ["eisner"] * 2}
    assert result.epochs[-1].dev_uas is not None


def test_siblings_option_defaults_on_and_can_be_switched_off_at_second_order() -> None:
    assert FeatureConfig().siblings is True
    cfg = load_config(raw=_raw(features={"order": 2, "siblings": False}))
    assert cfg.features.siblings is False and cfg.features.grandparents is True
    assert cfg.to_dict()["features"]["siblings"] is False


@pytest.mark.parametrize(
    ("features", "message"),
    [
        ({"order": 2, "siblings": "no"}, "features.siblings: bad value"),
        ({"order": 1, "siblings": False}, "features.siblings: false is for second-order"),
        ({"order": 2, "siblings": False, "grandparents": False}, "needs one of them"),
    ],
)
def test_bad_siblings_settings_name_the_key(features: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(raw=_raw(features=features))


def test_shipped_grid_files_load(tmp_path: Path, data: Path) -> None:
    from dparse.batch.grid import load_grid

    grids = sorted((REPO / "configs" / "grids").glob("*.yaml"))
    assert grids
    for path in grids:
        cells = load_grid(path).cells(tmp_path, str(data))
        assert cells and all(c.config for c in cells), path
