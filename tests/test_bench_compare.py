"""benchmarks/bench_compare.py: which config file each build trains, and where its model is
cached, for ``NAME`` rows (each build its own config) and ``NAME@ref`` rows (both builds the
reference commit's config; the reference's model is the one of its ``NAME`` row)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
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
