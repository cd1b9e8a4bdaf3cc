"""A neural model's files, loading and training: saved and loaded alike, loaded on the CPU,
another format version refused, deterministic training, the parse-time keys, the commands."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from neural_tiny import tiny_config, tiny_neural_fixture, train_tiny, write_slices  # noqa: E402, F401

import dparse  # noqa: E402
from dparse.conll import read_conll  # noqa: E402
from dparse.errors import DparseError  # noqa: E402
from dparse.modeldir import WEIGHTS_FILE, file_sha256, load_arrays  # noqa: E402
from dparse.trees import check_tree  # noqa: E402


def dparse_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                          text=True, timeout=300)


def test_the_weights_are_plain_named_float32_arrays(tiny_neural: Path) -> None:
    from dparse.neural.model import NETWORK_FILE, NeuralModel

    arrays = load_arrays(tiny_neural / "model" / WEIGHTS_FILE)
    model = NeuralModel.read_files(tiny_neural / "model")
    state = model.network.state_dict()
    assert set(arrays) == set(state)
    for name, value in arrays.items():
        assert value.dtype == np.float32
        assert np.array_equal(value, state[name].numpy())
    record = json.loads((tiny_neural / "model" / NETWORK_FILE).read_text())
    assert record["format_version"] == 1 and record["neural"]["tags"] == "upos"


def test_a_saved_model_parses_alike_after_loading_again(tiny_neural: Path, tmp_path: Path
                                                        ) -> None:
    first = dparse.load(tiny_neural / "model")
    first.parse_file(tiny_neural / "dev.conllu", tmp_path / "a.conllu")
    dparse.load(tiny_neural / "model", overrides=["neural.threads=1"]).parse_file(
        tiny_neural / "dev.conllu", tmp_path / "b.conllu")
    assert (tmp_path / "a.conllu").read_bytes() == (tmp_path / "b.conllu").read_bytes()
    gold = list(read_conll(tiny_neural / "dev.conllu"))
    parsed = list(read_conll(tmp_path / "a.conllu"))
    assert [s.form for s in parsed] == [s.form for s in gold]
    for sent in parsed:
        check_tree(sent.heads, single_root=True)


def test_a_sentence_parses_alike_alone_and_in_a_batch(tiny_neural: Path) -> None:
    parser = dparse.load(tiny_neural / "model")
    dev = list(read_conll(tiny_neural / "dev.conllu"))
    together = list(parser.parse_many(dev))
    for sent, batched in zip(dev, together, strict=True):
        alone = parser.parse(sent)
        assert alone.heads.tolist() == batched.heads.tolist()
        assert alone.deprels == batched.deprels


def test_a_model_of_another_format_asks_to_be_retrained(tiny_neural: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from dparse.config import load_config
    from dparse.epochs import TrainResult, save_model
    from dparse.neural import model as neural_model

    cfg = load_config(tiny_neural / "model" / "config.yaml")
    loaded = neural_model.NeuralModel.read_files(tiny_neural / "model")
    monkeypatch.setattr(neural_model, "FORMAT_VERSION", 7)
    save_model(TrainResult(loaded, 1), cfg, tmp_path / "other")
    monkeypatch.undo()
    with pytest.raises(DparseError, match="format version 7.*retrain it"):
        dparse.load(tmp_path / "other")
    done = dparse_cli("parse", str(tmp_path / "other"), str(tiny_neural / "dev.conllu"))
    assert done.returncode == 2 and "retrain it" in done.stderr
    assert "Traceback" not in done.stderr


def test_weights_that_do_not_fit_the_network_are_refused(tiny_neural: Path, tmp_path: Path
                                                         ) -> None:
    from dparse.modeldir import save_arrays, writing_model_dir

    with writing_model_dir(tmp_path / "bad") as staging:
        for path in (tiny_neural / "model").iterdir():
            if path.name not in ("manifest.json", WEIGHTS_FILE):
                shutil.copy(path, staging / path.name)
        arrays = dict(load_arrays(tiny_neural / "model" / WEIGHTS_FILE))
        arrays.pop(next(iter(arrays)))
        save_arrays(staging / WEIGHTS_FILE, **arrays)
    with pytest.raises(DparseError, match="does not fit the network.*retrain"):
        dparse.load(tmp_path / "bad")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_cuda_without_a_gpu_is_a_clear_error(tiny_neural: Path) -> None:
    with pytest.raises(DparseError, match="cuda asked for.*no CUDA GPU"):
        dparse.load(tiny_neural / "model", overrides=["neural.device=cuda"]).parse(["Dogs"])
    done = dparse_cli("parse", str(tiny_neural / "model"), str(tiny_neural / "dev.conllu"),
                      "--device", "cuda")
    assert done.returncode == 2 and "no CUDA GPU" in done.stderr


def test_training_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    folder = write_slices(tmp_path, train=30, dev=5)
    raw = tiny_config() | {"training": {"epochs": 1, "seed": 5}}
    digests = [file_sha256(train_tiny(folder, raw, tmp_path / name) / WEIGHTS_FILE)
               for name in ("a", "b")]
    other = raw | {"training": {"epochs": 1, "seed": 6}}
    digests.append(file_sha256(train_tiny(folder, other, tmp_path / "c") / WEIGHTS_FILE))
    assert digests[0] == digests[1] != digests[2]


@pytest.mark.parametrize("loss", ["crf"])
@pytest.mark.parametrize("decoder", ["cle", "eisner"])
def test_the_crf_loss_trains_for_either_kind_of_tree(tmp_path: Path, loss: str, decoder: str
                                                     ) -> None:
    folder = write_slices(tmp_path, train=30, dev=5)
    raw = tiny_config(loss=loss, tags="none") | {"decoder": {"name": decoder},
                                                 "training": {"epochs": 1, "seed": 1}}
    model = train_tiny(folder, raw, tmp_path / "m")
    parsed = dparse.load(model).parse_many(read_conll(folder / "dev.conllu"))
    for sent in parsed:
        check_tree(sent.heads, single_root=True, projective=decoder == "eisner")


def test_dparse_train_and_parse_commands(tiny_neural: Path, tmp_path: Path) -> None:
    folder = write_slices(tmp_path, train=20, dev=5)
    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps(tiny_config(tags="none") | {"training": {"epochs": 1}}))
    done = dparse_cli("train", str(config), "--out", str(tmp_path / "m"), "--data-root",
                      str(folder), "--threads", "1", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    assert "epoch 1: train UAS" in done.stderr and "loss" in done.stderr
    for extra in (["--kbest", "2", "--threads", "1"], ["--marginals", "--device", "cpu"]):
        done = dparse_cli("parse", str(tmp_path / "m"), str(folder / "dev.conllu"), "-o",
                          str(tmp_path / "out.conllu"), *extra)
        assert done.returncode == 0, (extra, done.stderr)

def test_only_the_parse_time_keys_change_at_parse_time(tiny_neural: Path) -> None:
    from dparse.errors import ConfigError

    with pytest.raises(ConfigError, match="neural.lstm_dim"):
        dparse.load(tiny_neural / "model", overrides=["neural.lstm_dim=3"])
    parser = dparse.load(tiny_neural / "model", overrides=["neural.threads=2",
                                                           "neural.device=cpu"])
    assert len(parser.parse(["Dogs", "bark", "."]).heads) == 4


def test_bad_neural_settings_are_config_errors() -> None:
    from dparse.config import load_config
    from dparse.errors import ConfigError

    base = {"parser": "neural", "data": {"train": "x.conllu"}}
    for key, value, message in [("loss", "softmax", "neural.loss must be one of local, crf, hinge"),
                                ("lstm_layers", 0, "neural.lstm_layers must be at least 1"),
                                ("dropout", 1.0, "neural.dropout must be in"),
                                ("device", "tpu", "neural.device must be one of cpu, cuda"),
                                ("tag_heads", "upos+lemma", "neural.tag_heads must be none"),
                                ("tag_heads", "upos+upos", "neural.tag_heads must be none"),
                                ("tags", "upos+lemma", "neural.tags must be none"),
                                ("schedule", "cosine",
                                 "neural.schedule must be one of constant, linear"),
                                ("average", 1.0, "neural.average must be in")]:
        with pytest.raises(ConfigError, match=message):
            load_config(raw=base | {"neural": {key: value}})
    with pytest.raises(ConfigError, match="first-order parts only"):
        load_config(raw=base | {"features": {"order": 2}})


def test_search_errors_and_the_ensemble_take_a_neural_model(tiny_neural: Path, tmp_path: Path
                                                             ) -> None:
    from dparse.search_errors import search_errors

    dev = tiny_neural / "dev.conllu"
    exact = search_errors(tiny_neural / "model", dev)
    assert exact.decoder == "cle" and exact.total.sentences == 20
    assert exact.total.search_errors == 0
    greedy = search_errors(tiny_neural / "model", dev, "bgi")
    assert greedy.total.sentences == 20
    done = dparse_cli("ensemble", str(tiny_neural / "model"), str(dev), "--other", str(dev),
                      "-o", str(tmp_path / "ens.conllu"))
    assert done.returncode == 0, done.stderr
    for sent in read_conll(tmp_path / "ens.conllu"):
        check_tree(sent.heads, single_root=True)


def test_a_long_sentence_and_unknown_characters_parse(tiny_neural: Path) -> None:
    parser = dparse.load(tiny_neural / "model")
    words = [w for sent in read_conll(tiny_neural / "dev.conllu") for w in sent.form]
    words = (words * (700 // len(words) + 1))[:699] + ["☃‽\u0301x" * 20]  # a 80-char unknown
    parsed = parser.parse(words)
    assert len(parsed) == 700
    check_tree(parsed.heads, single_root=True)


def test_tag_heads_learn_the_tags_and_write_them_into_the_parse(tmp_path: Path) -> None:
    """A words-alone network with UPOS and XPOS heads: trained on 80 sentences for 4 epochs
    (about 140 steps), its training sentences' UPOS are mostly right (a network that learned
    nothing predicts one tag: under 20%); its output fills the columns the input leaves empty
    and keeps those it fills."""
    from dparse.neural.vocab import NeuralVocabulary

    folder = write_slices(tmp_path, train=80, dev=10)
    raw = tiny_config(tags="none", tag_heads="upos+xpos", batch_tokens=60, lr=0.005
                      ) | {"training": {"epochs": 4, "seed": 2}}
    model = train_tiny(folder, raw, tmp_path / "m")
    vocab = NeuralVocabulary.load(model / "vocab.json")
    assert set(vocab.predicts) == {"upos", "xpos"} and "NOUN" in vocab.predicts["upos"]
    gold = list(read_conll(folder / "train.conllu"))
    blank = [s.with_tags(upos=["_"] * len(s), xpos=["_"] * len(s)) for s in gold]
    parsed = list(dparse.load(model).parse_many(blank))
    right = sum(p == g for sp, sg in zip(parsed, gold, strict=True)
                for p, g in zip(sp.upos, sg.upos, strict=True))
    assert right / sum(len(s) for s in gold) > 0.5
    assert all(set(s.upos) <= set(vocab.predicts["upos"]) for s in parsed)
    assert all(set(s.xpos) <= set(vocab.predicts["xpos"]) for s in parsed)
    kept = list(dparse.load(model).parse_many(gold))
    assert [s.upos for s in kept] == [s.upos for s in gold]
    assert [s.xpos for s in kept] == [s.xpos for s in gold]
    assert [list(s.heads) for s in kept] == [list(s.heads) for s in parsed]  # FORM only


def test_a_tagging_pipeline_trains_a_neural_parser_on_predicted_tags(tmp_path: Path) -> None:
    """A neural parser reading UPOS with a ``tagger`` section: trained on the jackknifed
    tags of a small tagger, it parses words alone (its tagger tags first)."""
    folder = write_slices(tmp_path, train=40, dev=5)
    (folder / "tagger.yaml").write_text(json.dumps(
        {"parser": "tagger", "data": {"train": "train.conllu", "dev": "dev.conllu"},
         "tagging": {"ambiguity_folds": 0, "draft_folds": 0},
         "training": {"learner": "perceptron", "epochs": 1}}))
    raw = tiny_config(tags="upos") | {"training": {"epochs": 1, "seed": 1},
                                      "tagger": {"config": str(folder / "tagger.yaml"),
                                                 "folds": 2}}
    from dparse.config import load_config
    from dparse.parsers import train_model

    train_model(load_config(raw=raw, data_root=str(folder)), tmp_path / "m",
                {"work": str(tmp_path / "work")})
    words = [s.with_tags(upos=["_"] * len(s)) for s in read_conll(folder / "dev.conllu")]
    for sent in dparse.load(tmp_path / "m").parse_many(words):
        check_tree(sent.heads, single_root=True)
        assert "_" not in sent.upos
    # dparse ensemble tags first too: biased towards the pipeline's own parse, the same trees
    from dparse.conll import write_conll

    write_conll(words, tmp_path / "words.conllu")
    alone = dparse_cli("parse", str(tmp_path / "m"), str(tmp_path / "words.conllu"), "-o",
                       str(tmp_path / "alone.conllu"))
    biased = dparse_cli("ensemble", str(tmp_path / "m"), str(tmp_path / "words.conllu"),
                        "--other", str(tmp_path / "alone.conllu"), "--decoder", "cle",
                        "--gamma1", "0", "-o", str(tmp_path / "biased.conllu"))
    assert alone.returncode == biased.returncode == 0, biased.stderr
    assert ((tmp_path / "alone.conllu").read_bytes()
            == (tmp_path / "biased.conllu").read_bytes())


def test_a_column_the_training_file_leaves_empty_gets_no_tag_head(tiny_neural: Path) -> None:
    from dparse.neural.vocab import NeuralVocabulary

    sents = [s.with_tags(xpos=["_"] * len(s)) for s in read_conll(tiny_neural / "train.conllu")]
    vocab = NeuralVocabulary.build(sents, 1, False, ("upos", "xpos"))
    assert list(vocab.predicts) == ["upos"] and "_" not in vocab.predicts["upos"]


def test_a_network_reads_xpos_and_the_features_of_feats(tmp_path: Path) -> None:
    from dparse.neural.model import NeuralModel

    folder = write_slices(tmp_path, train=40, dev=10)
    raw = tiny_config(tags="upos+xpos+feats") | {"training": {"epochs": 1, "seed": 2}}
    out = train_tiny(folder, raw, tmp_path / "m")
    model = NeuralModel.read_files(out)
    assert model.vocab.reads_tags and set(model.vocab.extra) == {"xpos", "feats"}
    assert "Number=Sing" in model.vocab.extra["feats"]
    assert all("|" not in f for f in model.vocab.extra["feats"])
    assert model.vocab.unread == ("lemma",)
    dev = list(read_conll(folder / "dev.conllu"))
    sent = dev[0]
    enc = model.vocab.encode(sent)
    feats = enc.extra["feats"]
    assert feats.shape[0] == len(sent) + 1
    for i, value in enumerate(sent.feats, 1):  # each feature an id, PAD after them
        expected = 0 if value == "_" else len(value.split("|"))
        assert int((feats[i] != 0).sum()) == expected
    parser = dparse.load(out)
    tagged = list(parser.parse_many(dev))
    words = list(parser.parse_many([s.words_only() for s in dev]))
    for a, b in zip(tagged, words, strict=True):
        check_tree(a.heads, single_root=True)
        check_tree(b.heads, single_root=True)
    # the tags change the scores: the same words with their tags or without parse differently
    assert [a.heads.tolist() for a in tagged] != [b.heads.tolist() for b in words]
    again = file_sha256(train_tiny(folder, raw, tmp_path / "m2") / WEIGHTS_FILE)
    assert again == file_sha256(out / WEIGHTS_FILE)
