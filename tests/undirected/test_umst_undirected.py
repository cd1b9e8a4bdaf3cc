"""dparse.undirected.parser: U-MST-uf training and parsing end to end on a tiny treebank."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from dparse._ext.arcfeatures import FeatureSpace, arc_list_indices, arc_list_scores
from paths import REPO

from dparse.config import load_config
from dparse.conll import Sentence, write_conll
from dparse.epochs import save_model
from dparse.errors import ConfigError
from dparse.parsers import load_parser, train_parser
from dparse.timer import ParseTimer
from dparse.trees import check_tree
from dparse.undirected.parser import UndirectedModel
from dparse.vocab import Vocabulary

TREES = [
    (["the", "dog", "barks"], [2, 3, 0], ["DET", "NOUN", "VERB"], ["det", "nsubj", "root"]),
    (["a", "cat", "sleeps", "here"], [2, 3, 0, 3], ["DET", "NOUN", "VERB", "ADV"],
     ["det", "nsubj", "root", "advmod"]),
    (["dogs", "bark", "loudly"], [2, 0, 2], ["NOUN", "VERB", "ADV"], ["nsubj", "root", "advmod"]),
]


def treebank() -> list[Sentence]:
    return [Sentence.build(f, heads=[-1, *h], deprels=["", *r], upos=u, xpos=u)
            for f, h, u, r in TREES] * 4


@pytest.fixture
def config(tmp_path: Path) -> Path:
    write_conll(treebank(), str(tmp_path / "train.conllu"))
    raw = {
        "name": "tiny-umst", "parser": "umst",
        "data": {"train": "train.conllu", "dev": "train.conllu"},
        "features": {"arc_bits": 12},
        "decoder": {"name": "umst", "single_root": True},
        "training": {"epochs": 3, "seed": 1},
        "umst": {"lep_steps": 2, "prune": "length-dictionary", "prune_column": "upos"},
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_umst_undirected_edge_scores_are_the_left_to_right_arc_features() -> None:
    sents = treebank()
    vocab = Vocabulary.build(sents)
    enc = vocab.encode(sents[1])
    space = FeatureSpace(12, 8, 1)
    w = np.random.default_rng(0).normal(size=space.size)
    i = np.array([0, 1, 2], dtype=np.int32)
    j = np.array([3, 2, 4], dtype=np.int32)
    s = arc_list_scores(enc.tokens, enc.morph_ptr, enc.morph, w, space, i, j)
    for k in range(3):
        idx = arc_list_indices(enc.tokens, enc.morph_ptr, enc.morph, space, i[k:k + 1], j[k:k + 1])
        assert s[k] == pytest.approx(w[idx].sum())
    with pytest.raises(ValueError, match="out of range"):
        arc_list_indices(enc.tokens, enc.morph_ptr, enc.morph, space, j, i + 5)


def test_umst_undirected_train_save_parse(config: Path, tmp_path: Path) -> None:
    cfg = load_config(config, data_root=str(tmp_path))
    epochs = []
    result = train_parser(cfg, progress=False, on_epoch=epochs.append)
    assert len(epochs) == 3 and epochs[-1].dev_u_uas is not None
    assert epochs[-1].dev_u_uas > 90.0  # the tiny treebank is learnt
    out = tmp_path / "model"
    save_model(result, cfg, out)
    assert result.model.pruner is not None and (out / "prune.json").is_file()
    parser = load_parser(out, load_config(out / "config.yaml"), None)
    assert parser.decoder_name == "umst"
    for sent in parser.parse(treebank(), ParseTimer()):
        check_tree(sent.heads, single_root=True)
        assert set(sent.deprels[1:]) == {"dep"}  # no directed model: no labels


def test_umst_undirected_config_errors(config: Path) -> None:
    with pytest.raises(ConfigError, match="umst.method"):
        load_config(config, ["umst.method=prim"])
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(config, ["umst.steps=3"])
    with pytest.raises(ConfigError, match="prune_quantile"):
        load_config(config, ["umst.prune_quantile=0"])


@pytest.fixture
def cli_trained(config: Path, tmp_path: Path) -> tuple[Path, str]:
    """``dparse train`` on the tiny config: the model directory and what the command printed."""
    from click.testing import CliRunner

    from dparse.cli import cli

    out = tmp_path / "cli-model"
    res = CliRunner().invoke(cli, ["train", str(config), "--out", str(out),
                                   "--data-root", str(tmp_path)])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_umst_undirected_cli_train_and_parse(cli_trained: tuple[Path, str],
                                            tmp_path: Path) -> None:
    from click.testing import CliRunner

    from dparse.cli import cli

    runner = CliRunner()
    out = cli_trained[0]
    parsed = tmp_path / "parsed.conllu"
    res = runner.invoke(cli, ["parse", str(out), str(tmp_path / "train.conllu"), "-o",
                              str(parsed)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["eval", str(tmp_path / "train.conllu"), str(parsed), "--json"])
    assert res.exit_code == 0 and '"uas"' in res.output


def test_umst_undirected_parse_with_another_decoder_exits_2(cli_trained: tuple[Path, str],
                                                            tmp_path: Path) -> None:
    """``dparse parse UNDIRECTED_MODEL --decoder X``: exit status 2, the message names the model
    directory and both decoders, no traceback, no output file."""
    out = cli_trained[0]
    parsed = tmp_path / "parsed.conllu"
    run = subprocess.run([sys.executable, "-m", "dparse", "parse", str(out),
                          str(tmp_path / "train.conllu"), "-o", str(parsed), "--decoder", "cle"],
                         capture_output=True, text=True, cwd=REPO, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO), "DPARSE_DEBUG": ""})
    assert run.returncode == 2, run.stderr
    assert str(out) in run.stderr and "--decoder cle" in run.stderr and "'umst'" in run.stderr
    assert "Traceback" not in run.stderr and not parsed.exists()


def test_umst_undirected_epoch_reports_las_as_not_applicable(config: Path, tmp_path: Path,
                                                            cli_trained: tuple[Path, str]) -> None:
    """The undirected model alone is unlabeled (every arc "dep"): its epochs report LAS as
    n/a with the reason, never nan, and UAS as numbers."""
    cfg = load_config(config, data_root=str(tmp_path))
    epochs = []
    train_parser(cfg, progress=False, on_epoch=epochs.append)
    assert all(ep.train_las is None and ep.dev_las is None for ep in epochs)
    assert all(ep.dev_uas is not None for ep in epochs)
    output = cli_trained[1]
    lines = [line for line in output.splitlines() if line.startswith("epoch ")]
    assert len(lines) == 3 and "nan" not in output
    assert all("LAS n/a (unlabeled" in line and "dev UAS " in line for line in lines), lines


def test_umst_undirected_edge_templates_score_what_training_updates(config: Path,
                                                                    tmp_path: Path) -> None:
    """With both directions and every undirected template group, an edge's score is the sum of
    the weights at the indices a training update touches; the groups survive save and load."""
    cfg = load_config(config, ["umst.edge_features=both",
                               "umst.edge_templates=between-counts,between-xpos,context,morph"],
                      data_root=str(tmp_path))
    model = train_parser(cfg, progress=False).model
    assert model.groups == 15 and model.both
    model.weights = np.random.default_rng(0).normal(size=model.space.size).astype(np.float32)
    sent = treebank()[1]
    enc = model.vocab.encode(sent)
    i, j = model.edges(sent)
    s = model.edge_scores(enc, i, j)
    for k in range(len(i)):
        idx = model.edge_indices(enc, i[k:k + 1], j[k:k + 1])
        assert s[k] == pytest.approx(float(model.weights[idx].astype(np.float64).sum()),
                                     rel=1e-5, abs=1e-4)
    model.save(tmp_path / "saved")
    loaded = UndirectedModel.load(tmp_path / "saved")
    assert loaded.groups == 15 and np.array_equal(loaded.edge_scores(enc, i, j), s)


def test_umst_undirected_edge_templates_none_is_the_first_order_set(config: Path,
                                                                   tmp_path: Path) -> None:
    """The default adds no template."""
    cfg = load_config(config, data_root=str(tmp_path))
    assert cfg.umst.edge_templates == "none" and cfg.umst.edge_template_names() == []
    model = train_parser(cfg, progress=False).model
    assert model.groups == 0
    sent = treebank()[0]
    enc = model.vocab.encode(sent)
    i, j = model.edges(sent)
    direct = arc_list_scores(enc.tokens, enc.morph_ptr, enc.morph, model.weights, model.space,
                             i, j)
    assert np.array_equal(model.edge_scores(enc, i, j), direct)
    model.save(tmp_path / "saved")
    assert UndirectedModel.load(tmp_path / "saved").groups == 0
    with pytest.raises(ConfigError, match="edge_templates"):
        load_config(config, ["umst.edge_templates=context,betweenness"])
    with pytest.raises(ConfigError, match="edge_templates"):
        load_config(config, ["umst.edge_templates=morph,morph"])
