"""dparse.reports: breakdowns against hand counts, totals equal to ``dparse eval``, significance,
plots, arc-diagram SVG/HTML (rendered by headless Chromium when installed) and certificates."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from browser import screenshot
from bruteforce import best_score2
from click.testing import CliRunner
from conftest import DATA, requires_data

from dparse.cli.eval import eval_command
from dparse.cli.show import show
from dparse.conll import read_conll, read_treebank, write_conll
from dparse.errors import DparseError
from dparse.metrics import evaluate
from dparse.reports.arcs import ArcStyle, arc_levels, html_page, sentence_svg
from dparse.reports.breakdowns import (
    breakdown,
    compare_systems,
    format_comparison,
    non_projective_arcs,
    sign_test,
    significance,
)
from dparse.reports.certificates import (
    CertificateReport,
    certificate_table,
    certify,
    search_error_table,
)
from dparse.search_errors import Comparison, SearchErrorReport
from dparse.trees import is_projective


def _conllu(rows: list[tuple[str, str, int, str]], sent_id: str) -> str:
    lines = [f"# sent_id = {sent_id}"]
    for i, (form, upos, head, rel) in enumerate(rows, 1):
        lines.append(f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{rel}\t_\t_")
    return "\n".join(lines) + "\n\n"


S1 = [("The", "DET", 2, "det"), ("dog", "NOUN", 3, "nsubj"), ("chased", "VERB", 0, "root"),
      ("a", "DET", 5, "det"), ("cat", "NOUN", 3, "obj"), (".", "PUNCT", 3, "punct")]
# arc 2 -> 7 (hearing -> issue) spans "is" and "scheduled", which hearing does not dominate
S2 = [("A", "DET", 2, "det"), ("hearing", "NOUN", 4, "nsubj:pass"), ("is", "AUX", 4, "aux:pass"),
      ("scheduled", "VERB", 0, "root"), ("on", "ADP", 7, "case"), ("the", "DET", 7, "det"),
      ("issue", "NOUN", 2, "nmod"), ("today", "NOUN", 4, "obl:tmod"), (".", "PUNCT", 4, "punct")]


def _edit(rows, changes):
    out = list(rows)
    for m, (head, rel) in changes.items():
        out[m - 1] = (out[m - 1][0], out[m - 1][1], head, rel)
    return out


GOLD = _conllu(S1, "s1") + _conllu(S2, "s2")
# A: s1 word 5 label obj -> nsubj, word 6 head 3 -> 5; s2 word 7 head 2 -> 4 (obl), 8 head 4 -> 7
SYS_A = (_conllu(_edit(S1, {5: (3, "nsubj"), 6: (5, "punct")}), "s1")
         + _conllu(_edit(S2, {7: (4, "obl"), 8: (7, "nmod")}), "s2"))
# B: s1 word 1 head 2 -> 3
SYS_B = _conllu(_edit(S1, {1: (3, "det")}), "s1") + _conllu(S2, "s2")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    paths = tmp_path / "gold.conllu", tmp_path / "a.conllu", tmp_path / "b.conllu"
    for path, text in zip(paths, (GOLD, SYS_A, SYS_B), strict=True):
        path.write_text(text, encoding="utf-8")
    return paths


def _pr(gold: int, predicted: int, found: int, right: int) -> dict[str, int]:
    return {"gold": gold, "predicted": predicted, "found": found, "right": right}


def test_breakdown_tables_equal_the_hand_counts(files) -> None:
    gold, a, _ = (read_treebank(p) for p in files)
    tables = breakdown(gold, a, name="A").tables
    # 15 tokens; A misses the heads of s1:6, s2:7, s2:8 and the label of s1:5
    assert tables["sentence_length"]["1-10"] == {
        "sentences": 2, "tokens": 15, "uas": 12, "las": 11, "complete": 0}
    assert all(r["sentences"] == 0 for k, r in tables["sentence_length"].items() if k != "1-10")
    # gold lengths: root 2; 1: s1 1,2,4 + s2 1,3,6; 2: s1 5, s2 2,5; 3: s1 6; 4: s2 8; 5: s2 7,9
    # predicted: 1 gains s1 6 (5 -> 6) and s2 8 (7 -> 8); 3 gains s2 7 (4 -> 7)
    want = {"root": _pr(2, 2, 2, 2), "1": _pr(6, 8, 6, 6), "2": _pr(3, 3, 3, 3),
            "3": _pr(1, 1, 0, 0), "4": _pr(1, 0, 0, 0), "5": _pr(2, 1, 1, 1)}
    got = {k: v for k, v in tables["arc_length"].items() if any(v.values())}
    assert got == want
    # left (m < h): s1 1,2,4 + s2 1,2,3,5,6; right: s1 5,6 + s2 7,8,9
    assert tables["direction"] == {"root": _pr(2, 2, 2, 2), "left": _pr(8, 8, 8, 8),
                                   "right": _pr(5, 5, 2, 2)}
    # one gold non-projective arc (2 -> 7), missed; A's tree is projective
    assert tables["non_projective"] == {"non-projective": _pr(1, 0, 0, 0),
                                        "projective": _pr(14, 15, 12, 12)}
    assert tables["root"] == {"root": _pr(2, 2, 2, 2)}
    assert tables["label"]["det"] == {"tokens": 4, "uas": 4, "las": 4}  # s1 1,4; s2 1,6
    assert tables["label"]["punct"] == {"tokens": 2, "uas": 1, "las": 1}
    assert tables["label"]["obj"] == {"tokens": 1, "uas": 1, "las": 0}
    assert tables["label"]["nmod"] == {"tokens": 1, "uas": 0, "las": 0}
    assert sum(r["tokens"] for r in tables["label"].values()) == 15
    # gold heads: NOUN s1 1,4 + s2 1,5,6,7; VERB s1 2,5,6 + s2 2,3,8,9
    assert tables["head_upos"] == {"VERB": {"tokens": 7, "uas": 5, "las": 4},
                                   "NOUN": {"tokens": 6, "uas": 5, "las": 5},
                                   "ROOT": {"tokens": 2, "uas": 2, "las": 2}}
    assert tables["dep_upos"]["NOUN"] == {"tokens": 5, "uas": 3, "las": 2}
    assert tables["dep_upos"]["DET"] == {"tokens": 4, "uas": 4, "las": 4}
    assert list(tables["label"])[0] == "det"  # most frequent first


def test_punctuation_rule_leaves_out_the_same_tokens_as_eval(files) -> None:
    gold, a, _ = (read_treebank(p) for p in files)
    part = breakdown(gold, a, punct="upos")
    assert part.tables["sentence_length"]["1-10"]["tokens"] == 13
    assert "punct" not in part.tables["label"] and "PUNCT" not in part.tables["dep_upos"]
    assert part.report == evaluate(gold, a, punct="upos")


def test_non_projective_arcs_agree_with_the_tree_check_on_real_data(data: Path) -> None:
    seen = 0
    for sent in islice(read_conll(data / "en_ewt" / "dev.conllu"), 600):
        marks = non_projective_arcs(sent.heads)
        assert (not marks.any()) == is_projective(sent.heads)
        seen += marks.any()
    assert seen > 0  # the slice holds non-projective trees
    # a cycle 1 -> 2 -> 1 above word 3: the arc 0 -> 3 spans words that are not under 0
    assert non_projective_arcs(np.array([-1, 2, 1, 0])).tolist() == [False, False, False, True]
    # 0 -> 2 -> 3 -> 1: the arc 3 -> 1 spans its own head 2
    assert non_projective_arcs(np.array([-1, 3, 0, 2])).tolist() == [False, True, False, False]


def test_sign_test_and_bootstrap() -> None:
    assert sign_test(0, 0) == 1.0 and sign_test(0, 1) == 1.0
    assert sign_test(0, 2) == 0.5  # 2 * (1/4)
    assert sign_test(1, 9) == pytest.approx(2 * 11 / 1024)
    same = np.array([3, 5, 2, 7])
    tokens = np.array([4, 6, 2, 9])
    result = significance(same, same, tokens)
    assert result["p_value"] == 1.0 and result["bootstrap"]["p_value"] == 1.0
    assert result["difference"] == 0.0 and result["ties"] == 4
    perfect, bad = np.full(30, 10), np.full(30, 2)
    far = significance(perfect, bad, np.full(30, 10), samples=500)
    assert far["p_value"] == pytest.approx(2 / 2**30)
    assert far["bootstrap"]["p_value"] == pytest.approx(1 / 501)
    assert far["difference"] == pytest.approx(80.0) and far["wins"] == 30
    assert significance(perfect, bad, np.full(30, 10), samples=500) == far  # seeded


def test_compare_systems_hand_significance_and_text(files) -> None:
    gold, a, b = (read_treebank(p) for p in files)
    comparison = compare_systems(gold, [("a", a), ("b", b)])
    (test,) = comparison.tests
    # per sentence UAS: A 5, 7; B 5, 9 -> one loss, one tie; LAS: A 4, 7; B 5, 9 -> two losses
    assert (test["uas"]["wins"], test["uas"]["losses"], test["uas"]["ties"]) == (0, 1, 1)
    assert test["uas"]["p_value"] == 1.0
    assert (test["las"]["losses"], test["las"]["p_value"]) == (2, 0.5)
    assert test["uas"]["difference"] == pytest.approx(100 * (12 - 14) / 15)
    text = format_comparison(comparison)
    assert "Systems: A = a; B = b" in text and "sign test p = 0.5" in text
    assert "non-projective" in text and "Root attachment" in text


def _invoke(*args: str):
    result = CliRunner().invoke(eval_command, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_cli_detail_json_has_every_table_and_p_values(files) -> None:
    gold, a, b = map(str, files)
    data = json.loads(_invoke(gold, a, "--other", b, "--other", gold, "--detail", "--json")
                      .output)
    assert data["sarc"] is not None  # against the first --other, as before
    systems = data["breakdowns"]["systems"]
    assert [s["name"] for s in systems] == [a, b, gold]
    for s in systems:
        assert set(s["tables"]) == {"sentence_length", "arc_length", "direction",
                                    "non_projective", "root", "label", "head_upos", "dep_upos"}
    assert systems[0]["tables"]["arc_length"]["3"] == {
        "gold": 1, "predicted": 1, "found": 0, "right": 0, "precision": 0.0, "recall": 0.0,
        "f1": 0.0}
    assert systems[0]["tables"]["arc_length"]["4"]["precision"] is None  # nothing predicted
    tests = data["breakdowns"]["significance"]
    assert [t["other"] for t in tests] == [b, gold]
    assert all("p_value" in t[m] and "p_value" in t[m]["bootstrap"]
               for t in tests for m in ("uas", "las"))
    text = _invoke(gold, a, "--other", b, "--detail").output
    assert "Accuracy by sentence length" in text and "Significance, A vs B" in text


def _noisy(sentences, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    for s in sentences:
        heads = s.heads.copy()
        for m in range(1, len(s) + 1):
            if rng.random() < 0.15:
                heads[m] = rng.integers(0, len(s) + 1)
        heads[0] = -1
        out.append(s.with_parse(heads, s.deprels))
    return out


@requires_data
def test_whole_file_totals_equal_dparse_eval_on_real_data(tmp_path: Path) -> None:
    gold_sents = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 250))
    gold, sys_file = tmp_path / "gold.conllu", tmp_path / "sys.conllu"
    write_conll(gold_sents, gold)
    write_conll(_noisy(gold_sents, 1), sys_file)
    plain = json.loads(_invoke(str(gold), str(sys_file), "--punct", "upos", "--json").output)
    detail = json.loads(_invoke(str(gold), str(sys_file), "--punct", "upos", "--json",
                                "--detail").output)
    (system,) = detail["breakdowns"]["systems"]
    totals = system["totals"]
    for key in ("uas", "las", "root_accuracy", "complete_match", "scored", "sentences"):
        assert totals[key] == plain[key] == detail[key]
    t = system["tables"]
    correct = round(plain["uas"] * plain["scored"] / 100)
    length_rows = t["sentence_length"].values()
    assert sum(r["tokens"] for r in length_rows) == plain["scored"]
    assert sum(r["uas"] for r in length_rows) == correct
    assert sum(r["sentences"] for r in length_rows) == plain["sentences"]
    complete = sum(r["complete"] for r in length_rows)
    assert 100 * complete / plain["sentences"] == pytest.approx(plain["complete_match"])
    for table in ("arc_length", "direction", "non_projective"):
        assert sum(r["gold"] for r in t[table].values()) == plain["scored"]
        assert sum(r["found"] for r in t[table].values()) == correct
    assert t["root"]["root"]["recall"] == pytest.approx(plain["root_accuracy"])
    for label, row in detail["per_label"].items():  # metrics' own per-label breakdown
        assert t["label"][label]["tokens"] == row["count"]
        assert 100 * t["label"][label]["las"] / row["count"] == pytest.approx(row["las"])
    pair = json.loads(_invoke(str(gold), str(sys_file), "--other", str(gold), "--json",
                              "--detail").output)
    test = pair["breakdowns"]["significance"][0]["uas"]  # noisy vs gold: very different
    assert test["p_value"] < 1e-6 and test["bootstrap"]["p_value"] < 0.01


def test_plots_are_written(files, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib (dparse[plot]) is not installed")
    from dparse.reports.plots import plot_comparison, plot_scaling, plot_time_and_speed

    gold, a, b = (read_treebank(p) for p in files)
    paths = plot_comparison(compare_systems(gold, [("a", a), ("b", b)]), tmp_path / "plots")
    assert sorted(p.name for p in paths) == sorted(
        f"{stem}.{ext}" for stem in ("sentence-length", "arc-length-pr", "label-las", "overview")
        for ext in ("png", "svg"))
    for p in paths:
        data = p.read_bytes()
        assert data.startswith(b"\x89PNG") if p.suffix == ".png" else b"<svg" in data[:2000]
    x = [10, 20, 40, 80]
    fits = plot_scaling({"square": (x, [v**2 for v in x]), "line": (x, x)}, tmp_path / "s")
    assert fits == pytest.approx({"square": 2.0, "line": 1.0})
    assert (tmp_path / "s.png").stat().st_size > 1000 and (tmp_path / "s.svg").exists()
    cubic = plot_time_and_speed({"cubic": (x, [1e-6 * v**3 for v in x])}, tmp_path / "ts")
    assert cubic == pytest.approx({"cubic": 3.0})
    svg = (tmp_path / "ts.svg").read_text(encoding="utf-8")
    assert "cubic: b = 3.00" in svg and "cubic: b = -2.00" in svg  # time and tokens/sec panels
    result = CliRunner().invoke(eval_command, [str(files[0]), str(files[1]), "--plot",
                                               str(tmp_path / "cli")])
    assert result.exit_code == 0 and (tmp_path / "cli" / "overview.svg").exists()


def test_many_systems_in_one_figure(files, tmp_path: Path) -> None:
    """Beyond MANY_SYSTEMS systems (every en_ewt config at once): one legend naming each system
    once, per-label LAS as a heat map, each system in its own colour."""
    pytest.importorskip("matplotlib", reason="matplotlib (dparse[plot]) is not installed")
    from dparse.reports.plots import MANY_SYSTEMS, plot_comparison

    gold, a, b = (read_treebank(p) for p in files)
    count = 3 * MANY_SYSTEMS
    systems = [(f"system-{k:02d}", a if k % 2 else b) for k in range(count)]
    plot_comparison(compare_systems(gold, systems), tmp_path / "many")
    svg = (tmp_path / "many" / "overview.svg").read_text(encoding="utf-8")
    for k in range(count):  # in the figure legend and on the heat map's axis, nowhere else
        assert svg.count(f"system-{k:02d}") == 2, k
    assert "<image" in svg  # the heat map
    assert "UAS by sentence length" in svg and " LAS</text>" not in svg
    fills = re.findall(r"stroke: (#[0-9a-f]{6})", svg)
    assert len(set(fills)) >= count  # a colour per system


def test_missing_matplotlib_is_a_clear_error(monkeypatch) -> None:
    from dparse.reports.plots import require_matplotlib

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(DparseError, match=r"dparse\[plot\]"):
        require_matplotlib()


def test_arc_levels_nest() -> None:
    # 0 -> 3, 3 -> 1, 1 -> 2, 3 -> 4: 1 -> 2 inside 3 -> 1 inside 0 -> 3
    assert arc_levels(np.array([-1, 3, 1, 0, 3])) == {2: 1, 4: 1, 1: 2, 3: 3}


def test_svg_marks_wrong_arcs(files) -> None:
    gold, a, _ = (read_treebank(p) for p in files)
    svg = sentence_svg(a[1], gold[1], title="s2 <&>")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    strokes = [p.get("stroke") for p in root.iter(f"{ns}path")]
    # 9 predicted arcs (2 wrong heads) and the 2 gold arcs of those words below
    assert strokes.count(ArcStyle.wrong_head) == 2 and strokes.count(ArcStyle.gold) == 2
    assert strokes.count(ArcStyle.right) == 7
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "s2 <&>" in texts and "scheduled" in texts and "ROOT" in texts
    label_svg = sentence_svg(a[0], gold[0])
    assert "nsubj\u2260obj" in label_svg and ArcStyle.wrong_label in label_svg


def test_show_cli(files, tmp_path: Path) -> None:
    gold, a, _ = map(str, files)
    runner = CliRunner()
    out = tmp_path / "t.svg"
    result = runner.invoke(show, [a, "--gold", gold, "--sent", "s2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "sentence 2 (s2), 9 words; heads right 7/9" in out.read_text()
    page = tmp_path / "p.html"
    result = runner.invoke(show, [a, "--sent", "1-2", "-o", str(page)])
    assert result.exit_code == 0 and page.read_text().count("<svg") == 2
    result = runner.invoke(show, [a, "--sent", "1-2", "-o", str(out)])
    assert result.exit_code != 0 and "one sentence" in str(result.exception)
    result = runner.invoke(show, [a, "--sent", "7", "-o", str(out)])
    assert isinstance(result.exception, DparseError) and "no sentence '7'" in str(
        result.exception)
    assert runner.invoke(show, [a]).output.startswith("<svg")  # stdout: one sentence, SVG


def test_svg_and_html_render_in_chromium(files, tmp_path: Path) -> None:
    gold, a, _ = (read_treebank(p) for p in files)
    svg = tmp_path / "tree.svg"
    svg.write_text(sentence_svg(a[1], gold[1]), encoding="utf-8")
    pixels = screenshot(tmp_path, svg, 900, 300)
    assert pixels.std() > 5 and (pixels < 128).mean() > 0.005  # ink on a white page
    html = tmp_path / "page.html"
    html.write_text(html_page([("one", sentence_svg(a[0], gold[0])),
                               ("two", sentence_svg(a[1], gold[1]))]), encoding="utf-8")
    page = screenshot(tmp_path, html, 900, 700)
    assert page.std() > 5
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    assert screenshot(tmp_path, blank, 300, 200).std() < 1  # the check can fail


def test_certify_counts_by_length_and_certificates_are_optimal() -> None:
    rng = np.random.default_rng(3)
    instances, lengths = [], []
    for n in (3, 4, 5, 5, 6, 12, 15):
        arc = rng.normal(size=(n + 1, n + 1))
        sib = 0.5 * rng.normal(size=(n + 1,) * 3)
        grand = 0.5 * rng.normal(size=(n + 1,) * 3)
        instances.append((arc, {"sib": sib, "grand": grand}))
        lengths.append(n)
    report = certify(instances, options={"max_iter": 60}, bins=(5, 10))
    from dparse.decoders import get_decoder

    decoder = get_decoder("dd2")
    want = CertificateReport("dd2", (5, 10))
    for (arc, parts), n in zip(instances, lengths, strict=True):
        result = decoder.solve(arc, max_iter=60, **parts)
        want.add(n, result.certified, result.iterations)
        if result.certified and n <= 6:
            best = best_score2(arc, parts["sib"], parts["grand"], projective=False,
                               single_root=True)
            assert result.primal == pytest.approx(best)
    assert report.bins == want.bins
    assert [r["sentences"] for r in report.bins.values()] == [4, 1, 2]
    table = certificate_table([report])
    assert "| 1-5 | 4 |" in table and "| total | 7 |" in table


def test_search_error_table_counts() -> None:
    report = SearchErrorReport("bgi", False, False, {}, True, ("arc",), "g", (5,))
    report.add(3, Comparison("search_errors", 2.0, 1.0))
    report.add(4, Comparison("correct", 1.0, 1.0))
    report.add(9, Comparison("unreachable", 3.0, 1.0, ("non-projective",)))
    table = search_error_table({"bgi": report})
    assert "| 1-5 | 2 | 1 (50.00%) | 0 |" in table
    assert "| 6+ | 1 | 0 (0.00%) | 1 |" in table and "| total | 3 | 1 (33.33%) | 1 |" in table


@requires_data
def test_model_certificates_count_each_gold_sentence(tmp_path: Path) -> None:
    from dparse.decoders import get_decoder
    from dparse.graph.load import load_model
    from dparse.reports.certificates import model_certificates

    dev = read_conll(DATA / "en_ewt" / "dev.conllu")
    write_conll(islice(dev, 120), tmp_path / "train.conllu")
    gold = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 40))
    write_conll(gold, tmp_path / "gold.conllu")
    (tmp_path / "o2.yaml").write_text(
        "data:\n  train: train.conllu\ntraining:\n  epochs: 1\nfeatures:\n  order: 2\n"
        "  arc_bits: 14\n  label_bits: 10\n  sib_bits: 12\n  grand_bits: 12\npruner:\n"
        "  epochs: 1\n  arc_bits: 14\n  label_bits: 10\ndecoder:\n  name: dd2\n  options:\n"
        "    max_iter: 20\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "dparse", "train", str(tmp_path / "o2.yaml"),
                          "--out", str(tmp_path / "o2"), "--data-root", str(tmp_path), "-q"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    report = model_certificates(tmp_path / "o2", tmp_path / "gold.conllu")
    model, decoder = load_model(tmp_path / "o2"), get_decoder("dd2")
    want = CertificateReport("direct")
    for sent in gold:
        arc, _, parts = model.score_parts(model.vocab.encode(sent), None, False)
        result = decoder.solve(arc, sib=parts["sib"], grand=parts["grand"], max_iter=20)
        want.add(len(sent), result.certified, result.iterations)
    assert report.bins == want.bins and report.total["sentences"] == 40
    assert 0 < report.total["iterations"] <= 20 * 40


# The README's picture: a sentence made up for it, as parsed (one wrong head, one wrong label)
# and gold; rows are (form, upos, parsed head, parsed label, gold head, gold label).
README_SENTENCE = [("She", "PRON", 2, "nsubj", 2, "nsubj"), ("saw", "VERB", 0, "root", 0, "root"),
                   ("the", "DET", 4, "det", 4, "det"), ("comet", "NOUN", 2, "iobj", 2, "obj"),
                   ("with", "ADP", 8, "case", 8, "case"), ("a", "DET", 8, "det", 8, "det"),
                   ("small", "ADJ", 8, "amod", 8, "amod"),
                   ("telescope", "NOUN", 4, "nmod", 2, "obl"),
                   (".", "PUNCT", 2, "punct", 2, "punct")]


def _readme_conllu(gold: bool) -> str:
    lines = ["# sent_id = comet-1", "# text = She saw the comet with a small telescope."]
    for i, (form, upos, head, label, gold_head, gold_label) in enumerate(README_SENTENCE, 1):
        h, lab = (gold_head, gold_label) if gold else (head, label)
        misc = "SpaceAfter=No" if form == "telescope" else "_"
        lines.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{h}\t{lab}\t_\t{misc}")
    return "\n".join(lines) + "\n\n"


def test_readme_tree_picture_is_what_dparse_show_draws(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    parsed, gold, out = tmp_path / "parsed.conllu", tmp_path / "gold.conllu", tmp_path / "t.svg"
    parsed.write_text(_readme_conllu(gold=False), encoding="utf-8")
    gold.write_text(_readme_conllu(gold=True), encoding="utf-8")
    result = CliRunner().invoke(show, [str(parsed), "--gold", str(gold), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == (docs / "tree-example.svg").read_text(
        encoding="utf-8")
