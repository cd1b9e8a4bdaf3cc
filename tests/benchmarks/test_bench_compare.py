"""benchmarks/bench_compare.py: which config file each build trains, and where its model is
cached, for ``NAME`` rows (each build its own config) and ``NAME@ref`` rows (both builds the
reference commit's config; the reference's model is the one of its ``NAME`` row)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from dparse._ext.arcfeatures import FeatureSpace

from dparse.config import load_config
from dparse.conll import Sentence
from dparse.epochs import save_model
from dparse.graph.model import ArcFactoredModel
from dparse.vocab import Vocabulary

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_compare  # noqa: E402
from bench_compare import Build, config_file, split_row, train_model  # noqa: E402


def test_config_file_of_each_build(tmp_path: Path) -> None:
    ref = Build("ref", tmp_path / "ref", "aaaa")
    new = Build("new", tmp_path / "new", "bbbb")
    assert config_file(new, "o2-dd", ref) == tmp_path / "new/configs/en_ewt/o2-dd.yaml"
    assert config_file(ref, "o2-dd", ref) == tmp_path / "ref/configs/en_ewt/o2-dd.yaml"
    assert config_file(new, "o2-dd@ref", ref) == tmp_path / "ref/configs/en_ewt/o2-dd.yaml"


def test_rows_other_than_name_and_name_at_ref_are_refused() -> None:
    assert split_row("o2-dd") == ("o2-dd", False)
    assert split_row("o2-dd@ref") == ("o2-dd", True)
    with pytest.raises(ValueError, match="only suffix is @ref"):
        split_row("o2-dd@head")
    with pytest.raises(SystemExit):  # before anything is built or trained
        bench_compare.main(["--ref", "HEAD", "--configs", "o1-cle,o2-dd@95f0cda"])


def test_ref_rows_share_the_reference_model_but_not_the_new_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = Build("ref", tmp_path / "ref", "aaaa")
    new = Build("new", tmp_path / "new", "bbbb")
    cached = tmp_path / "work/models/aaaa/el_gdt-o2-dd"
    cached.mkdir(parents=True)
    (cached.parent / "el_gdt-o2-dd.train.json").write_text('{"seconds": 5, "rss_mb": 1}')
    trained: list[list[str]] = []

    def fake_child(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, str]:
        trained.append(cmd)
        Path(cmd[cmd.index("--out") + 1]).mkdir(parents=True)  # what `dparse train` leaves
        return 2.0, 3.0, ""

    monkeypatch.setattr(bench_compare, "run_child", fake_child)
    model, record = train_model(ref, "aaaa", "o2-dd@ref", "el_gdt", None, tmp_path / "work",
                                tmp_path / "data", ref)
    assert model == cached and record == {"seconds": 5, "rss_mb": 1} and not trained
    model, record = train_model(new, "bbbb", "o2-dd@ref", "el_gdt", None, tmp_path / "work",
                                tmp_path / "data", ref)
    assert model == tmp_path / "work/models/bbbb/el_gdt-o2-dd@ref"
    assert record == {"seconds": 2.0, "rss_mb": 3.0}
    (cmd,) = trained
    assert cmd[cmd.index("train") + 1] == str(tmp_path / "ref/configs/en_ewt/o2-dd.yaml")
    assert "name=el_gdt-o2-dd" in cmd and "data.train=el_gdt/train.conllu" in cmd
    saved = json.loads((tmp_path / "work/models/bbbb/el_gdt-o2-dd@ref.train.json").read_text())
    assert saved == record


def test_load_child_times_one_load_of_a_model(tmp_path: Path) -> None:
    """The load row's child (a real process of this build) loads a saved model and reports
    the seconds that took."""
    sentences = [Sentence.build("a b".split(), heads=[-1, 2, 0], deprels=["", "x", "root"],
                                upos="A B".split(), xpos="A B".split())]
    vocab = Vocabulary.build(sentences)
    space = FeatureSpace(10, 8, len(vocab.labels))
    model = ArcFactoredModel(vocab, space, np.ones(space.size, dtype=np.float32))
    cfg = load_config(raw={"data": {"train": "t.conllu"}})
    save_model(SimpleNamespace(model=model), cfg, tmp_path / "model")
    build = Build("new", bench_compare.REPO, "cccc")
    assert 0 < bench_compare.load_once(build, tmp_path / "model", tmp_path) < 60
    with pytest.raises(RuntimeError, match="config.yaml: cannot read"):  # not a model
        bench_compare.load_once(build, tmp_path, tmp_path)


def test_load_table_gives_load_speedups_and_whole_process_shares() -> None:
    runs = {label: [{"tokens_per_second": 1000.0, "process_tokens_per_second": share * 1000}
                    for share in shares]
            for label, shares in (("ref", [0.5, 0.6]), ("new", [0.7, 0.66]))}
    row = {"treebank": "en_ewt", "config": "o1-cle", "runs": runs,
           "loads": {"ref": [0.5, 0.6, 0.55], "new": [0.1, 0.1, 0.2]},
           "load_ratios": [5.0, 6.0, 2.75], "median_load_ratio": 5.0}
    lines = bench_compare.load_lines([row], SimpleNamespace(load_pairs=3))
    assert ("| en_ewt | o1-cle | 0.550 | 0.100 | **5.00x** | 5.00, 6.00, 2.75 | 550 (0.55x) "
            "| 680 (0.68x) |") in lines
