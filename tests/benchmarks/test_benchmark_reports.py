"""The benchmarks' report writers print a score that is not applicable (None: no scored token)
as ``n/a`` through dparse.metrics.format_score, never crash on it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dparse.conll import read_treebank
from dparse.metrics import format_score

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench  # noqa: E402
import common  # noqa: E402
import greedy_ensemble  # noqa: E402
import greedy_tables  # noqa: E402
import umst_tables  # noqa: E402


def test_format_score_signs_and_na() -> None:
    assert format_score(None, 0, sign=True) == "n/a"
    assert format_score(1.5, 0, sign=True) == "+1.50"
    assert format_score(-0.25, 0, 1, sign=True) == "-0.2"
    assert format_score(3.0, 0, unit="%") == "3.00%"


def test_greedy_tables_print_na() -> None:
    row = {"uas": None, "las": None, "u_uas": 80.0, "tokens_per_second": 10.0, "sarc": None}
    scored = {**row, "uas": 81.234}
    orders = {"1": {"rows": {"BGI": row, greedy_tables.GOLD_ROW: scored},
                    "ensembles": {"BGI": {**row, "gammas": [0.1]}}, "gold_xy": [None, 2.0]}}
    text = "\n".join(greedy_tables.table1("tb", orders))
    assert "| BGI | 1 | n/a | 10 | n/a | 80.00 | n/a | 10 | n/a | 80.00 | 0.1 |" in text
    assert "= (n/a, 2.00%)" in text
    results = [{"treebank": "a", "orders": orders}, {"treebank": "b", "orders": orders}]
    text = "\n".join(greedy_tables.table2(results, "1"))
    assert "| a | n/a | **81.23** | n/a |" in text and "| average | n/a | 81.23 | n/a |" in text


def test_greedy_ensemble_report_prints_na(tmp_path: Path) -> None:
    none = {"uas": None, "las": None, "u_uas": None, "tokens_per_second": 5.0}
    result = {"treebank": "tb", "model": "m", "punct": "upos", "others": ["x"],
              "alone": {"x": none, "m": {**none, "uas": 70.0}},
              "ensembles": [{**none, "others": ["x"], "gamma1": 0.1, "gamma2": 0.2,
                             "dev_uas": None, "uas": 71.0, "sarc": None, "gold_xy": [None, 1.0]}]}
    greedy_ensemble.write_report(result, tmp_path / "r.md")
    text = (tmp_path / "r.md").read_text()
    assert "| x | n/a | n/a | n/a | 5 |" in text
    assert "| x | 0.1 | 0.2 | n/a | 71.00 | n/a | n/a | n/a | (n/a, 1.00) | 5 |" in text
    assert json.loads((tmp_path / "r.json").read_text())["alone"]["x"]["uas"] is None


def test_umst_tables_report_prints_na(tmp_path: Path) -> None:
    scores = {k: {"uas": None, "u_uas": 50.0, "las": None, "tokens_per_second": 1.0}
              for k in umst_tables.MODELS}
    results = [{"treebank": "tb", "scores": scores,
                "oracle": {"better": [None, 2.0], "oracle_uas": None, "oracle_gain": None}}]
    umst_tables.write_report(results, "upos", tmp_path / "u.md")
    text = (tmp_path / "u.md").read_text()
    assert "| D-MST | n/a/50.0 |" in text and "| D-MST | n/a |" in text
    assert "| U-MST-uf-lep | 2.0 |" in text and "| Oracle | n/a (n/a) |" in text


@pytest.mark.parametrize("las", [None, 85.5])
def test_bench_report_prints_na(las: float | None) -> None:
    row = {"config": "c", "decoder": "cle", "train_seconds": 12.0, "epochs": "1", "parse_tps": 1.0,
           "score_tps": 2.0, "decode_tps": 3.0, "uas": None, "las": las, "peak_rss_mb": 9.0,
           "sentences": 1, "tokens": 2,
           "by_length": [{"bin": "1-5", "n": 3.0, "inference": 1e-3, "decode": 1e-4},
                         {"bin": "6-10", "n": 8.0, "inference": 2e-3, "decode": 3e-4}]}
    text = bench.format_report([row], quick=True)
    assert f"| n/a | {format_score(las, 0)} | 9 |" in text


def test_length_bins_count_and_average_by_hand() -> None:
    lengths = [3, 5, 7, 40, 61, 100]
    bins = common.length_bins(lengths, {"t": [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]})
    assert [(b["bin"], b["sentences"], b["n"], b["t"]) for b in bins] == [
        ("1-5", 2, 4.0, 2.0), ("6-10", 1, 7.0, 5.0), ("31-40", 1, 40.0, 7.0),
        ("61-100", 2, 80.5, 10.0)]


def test_bench_length_section_and_plots(tmp_path: Path) -> None:
    """Times ~ n^2 (inference) and ~ n^3 (decoding) give those exponents in the table; the
    plots are written for the configs and the decoder rows."""
    pytest.importorskip("matplotlib", reason="matplotlib (dparse[plot]) is not installed")
    bins = [{"bin": f"{n}", "n": float(n), "inference": 1e-5 * n**2, "decode": 1e-7 * n**3}
            for n in (4, 8, 16, 32)]
    row = {"config": "quad", "by_length": bins}
    text = "\n".join(bench.length_section([row]))
    assert "| quad | 2.00 | 3.00 | 25,000 (4) | 3,125 (32) |" in text
    decoder_rows = [{"n": n, **{label: 1e-6 * n**3 for label, _ in common.DECODERS}}
                    for n in (10, 20)]
    bench.draw_plots([row], decoder_rows, tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"{stem}.{ext}" for ext in ("png", "svg") for stem in
                           ("bench-parsers-inference", "bench-parsers-decoding",
                            "bench-decoders"))
    assert "quad: b = 2.00" in (tmp_path / "bench-parsers-inference.svg").read_text()


def _tiny_treebank(data: Path, root: Path) -> None:
    """root/en_ewt: the first sentences of en_ewt's train (200), dev (40) and test (40)."""
    from itertools import islice

    from dparse.conll import read_conll, write_conll

    (root / "en_ewt").mkdir(parents=True)
    for split, count in (("train", 200), ("dev", 40), ("test", 40)):
        write_conll(islice(read_conll(data / "en_ewt" / f"{split}.conllu"), count),
                    root / "en_ewt" / f"{split}.conllu")


TINY_CONFIG = """name: {name}
data: {{train: en_ewt/train.conllu, dev: en_ewt/dev.conllu, test: {test}}}
features: {{arc_bits: 14, label_bits: 8}}
training: {{epochs: 1}}
"""


def test_bench_writes_every_row_when_one_fails(data: Path, tmp_path: Path) -> None:
    """A config whose test file is missing fails; the config after it, the reading, writing and
    evaluating rows and the report are still there, the failure named in it, exit status 1."""
    root = tmp_path / "data"
    _tiny_treebank(data, root)
    bad, good = tmp_path / "bad.yaml", tmp_path / "good.yaml"
    bad.write_text(TINY_CONFIG.format(name="broken", test="en_ewt/missing.conllu"))
    good.write_text(TINY_CONFIG.format(name="tiny", test="en_ewt/test.conllu"))
    out = tmp_path / "bench.md"
    with pytest.raises(SystemExit, match=r"1 row\(s\) failed: .*bad\.yaml"):
        bench.main(["--config", str(bad), "--config", str(good), "--data", str(root),
                    "--out", str(out), "--no-decoders", "--jobs", "", "--quick"])
    text = out.read_text()
    assert "| tiny | cle | " in text and "| broken |" not in text
    assert "## Rows that failed" in text
    assert f"- {bad}: " in text and "missing.conllu" in text
    train, test = (sum(map(len, read_treebank(root / "en_ewt" / f"{split}.conllu")))
                   for split in ("train", "test"))
    for step, tokens in (("read en_ewt/train.conllu", train), ("write en_ewt/train.conllu", train),
                         ("evaluate en_ewt/test.conllu", test),
                         ("evaluate en_ewt/test.conllu, --detail --other", test)):
        assert f"| {step} | {tokens:,} | " in text


def test_bench_io_rows_report_a_missing_file_and_keep_the_others(data: Path,
                                                                  tmp_path: Path) -> None:
    root = tmp_path / "data"
    _tiny_treebank(data, root)
    (root / "en_ewt" / "test.conllu").unlink()
    failures: list[dict] = []
    rows = bench.io_rows(str(root), "en_ewt", 1, failures)
    assert [r["what"] for r in rows] == ["read en_ewt/train.conllu", "write en_ewt/train.conllu"]
    assert all(r["tokens"] > 0 and r["tps"] == r["tokens"] / r["seconds"] for r in rows)
    assert [f["row"] for f in failures] == ["read en_ewt/test.conllu"]
    assert "test.conllu" in failures[0]["error"]


def test_bench_umst_row_finds_its_directed_model_in_the_model_dir(tmp_path: Path) -> None:
    from dparse.config import load_config

    umst = load_config(Path(common.REPO) / "configs/en_ewt/o1-umst-uf-lep.yaml")
    assert umst.umst.directed_model == "models/en_ewt-o1-cle"
    assert bench.directed_model_override(umst, str(tmp_path)) == [
        f"umst.directed_model={tmp_path / 'en_ewt-o1-cle'}"]
    absolute = load_config(Path(common.REPO) / "configs/en_ewt/o1-umst-uf-lep.yaml",
                           [f"umst.directed_model={tmp_path / 'elsewhere'}"])
    assert bench.directed_model_override(absolute, "models") == []
    graph = load_config(Path(common.REPO) / "configs/en_ewt/o1-cle.yaml")
    assert bench.directed_model_override(graph, "models") == []
