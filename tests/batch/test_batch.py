"""Batch runs: ``dparse parse --jobs/--shard`` against one job, and grids on a LocalCluster.

Tiny models (a few hundred en_ewt sentences, one epoch, small feature tables) keep the whole
file under a minute; the worker processes are real (forked, and spawned where fork is not
used), as is the Dask cluster.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

import pytest
from click.testing import CliRunner
from paths import REPO

from dparse.batch import parallel_parse
from dparse.batch.cells import RESULT_FILE, read_result
from dparse.batch.grid import (
    csv_table,
    load_grid,
    markdown_table,
    run_grid,
    write_tables,
)
from dparse.batch.parallel_parse import Shard, file_blocks, sentence_blocks, splits_as_bytes
from dparse.cli import cli
from dparse.config import read_yaml
from dparse.conll import read_conll, write_conll
from dparse.errors import DparseError
from dparse.outputs import write_text

TINY = ["training.epochs=1", "features.arc_bits=16", "features.label_bits=10"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Slices of en_ewt: train (200 sentences), dev (50), test (150), and the test slice
    with CRLF line endings and no final newline (the edge cases of sentence separators)."""
    from conftest import DATA

    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = tmp_path_factory.mktemp("corpus")
    files = {}
    for split, count in (("train", 200), ("dev", 50), ("test", 150)):
        files[split] = folder / f"{split}.conllu"
        write_conll(islice(read_conll(DATA / "en_ewt" / f"{split}.conllu"), count),
                    files[split])
    text = files["test"].read_text(encoding="utf-8")
    files["crlf"] = folder / "crlf.conllu"
    files["crlf"].write_bytes(text.rstrip("\n").replace("\n", "\r\n").encode())
    return files


def _invoke(*args: str) -> tuple[int, str]:
    """Run a command in this process: exit status and output, a DparseError giving status 2
    with its message (as ``dparse.cli.main`` does)."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if isinstance(result.exception, DparseError):
        return 2, result.output + str(result.exception)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _train(corpus: dict[str, Path], config: str, out: Path, *extra: str) -> Path:
    sets = [f"data.train={corpus['train']}", f"data.dev={corpus['dev']}", *TINY, *extra]
    code, output = _invoke("train", REPO / "configs" / "en_ewt" / config, "--out", out, "-q",
                           *[a for s in sets for a in ("--set", s)])
    assert code == 0, output
    return out


@pytest.fixture(scope="module")
def models(corpus: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny model of each parser type."""
    folder = tmp_path_factory.mktemp("models")
    graph = _train(corpus, "o1-cle.yaml", folder / "graph")
    return {"graph": graph,
            "easyfirst": _train(corpus, "easyfirst.yaml", folder / "easyfirst"),
            "umst": _train(corpus, "o1-umst-uf.yaml", folder / "umst",
                           f"umst.directed_model={graph}")}


def _parse(model: Path, source: Path, out: Path, *options: str) -> bytes:
    code, output = _invoke("parse", model, source, "-o", out, *options)
    assert code == 0, output
    return out.read_bytes()


@pytest.mark.parametrize("kind", ["graph", "easyfirst", "umst"])
def test_parse_jobs_two_equals_one_job(kind: str, models: dict[str, Path],
                                       corpus: dict[str, Path], tmp_path: Path) -> None:
    one = _parse(models[kind], corpus["test"], tmp_path / "one.conllu")
    # small chunks: many in flight, answered out of order by the two workers
    two = _parse(models[kind], corpus["test"], tmp_path / "two.conllu", "--jobs", "2",
                 "--chunk-size", "7")
    assert one == two
    assert one.count(b"\n\n") == 150


def test_spawned_workers_parse_as_forked_ones(models: dict[str, Path], corpus: dict[str, Path],
                                              tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Where fork is not used (not Linux) each worker is spawned and loads the model itself:
    the same output, and a model error still reaches the parent."""
    one = _parse(models["graph"], corpus["test"], tmp_path / "one.conllu")
    monkeypatch.setattr(parallel_parse, "fork_safe", lambda: False)
    assert _parse(models["graph"], corpus["test"], tmp_path / "two.conllu", "--jobs", "2",
                  "--chunk-size", "7") == one
    out = tmp_path / "bad.conllu"
    code, output = _invoke("parse", models["graph"], corpus["test"], "-o", out, "--jobs", "2",
                           "--decoder", "no-such-decoder")
    assert code == 2 and "no-such-decoder" in output and not out.exists()


def test_parse_jobs_keeps_line_endings_and_missing_final_newline(
        models: dict[str, Path], corpus: dict[str, Path], tmp_path: Path) -> None:
    one = _parse(models["graph"], corpus["crlf"], tmp_path / "one.conllu")
    two = _parse(models["graph"], corpus["crlf"], tmp_path / "two.conllu", "-j", "2",
                 "--chunk-size", "10")
    assert one == two
    assert one.endswith(b"\r\n") is False and b"\r\n\r\n" in one


@pytest.mark.parametrize("count", [1, 3, 7])
def test_shards_concatenated_equal_one_job(count: int, models: dict[str, Path],
                                           corpus: dict[str, Path], tmp_path: Path) -> None:
    whole = _parse(models["graph"], corpus["test"], tmp_path / "whole.conllu")
    pieces = [_parse(models["graph"], corpus["test"], tmp_path / f"{i}.conllu", "--shard",
                     f"{i}/{count}") for i in range(1, count + 1)]
    assert b"".join(pieces) == whole
    assert all(pieces)  # 150 sentences: no shard of 7 is empty


def test_shard_with_jobs_and_more_shards_than_sentences(
        models: dict[str, Path], corpus: dict[str, Path], tmp_path: Path) -> None:
    whole = _parse(models["graph"], corpus["crlf"], tmp_path / "whole.conllu")
    middle = _parse(models["graph"], corpus["crlf"], tmp_path / "m.conllu", "--shard", "2/3",
                    "--jobs", "2", "--chunk-size", "5")
    assert middle == _parse(models["graph"], corpus["crlf"], tmp_path / "s.conllu", "--shard",
                            "2/3")
    assert middle in whole and middle.count(b"\r\n\r\n") == 50
    for count in (1, 3, 7, 149, 150, 400):  # contiguous pieces covering 0..150, sizes +-1
        bounds = [Shard(i, count).bounds(150) for i in range(1, count + 1)]
        assert bounds[0][0] == 0 and bounds[-1][1] == 150
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
        assert max(b - a for a, b in bounds) - min(b - a for a, b in bounds) <= 1


@pytest.mark.parametrize("bad", ["3", "0/2", "3/2", "a/b", "1/0", "-1/2"])
def test_bad_shard_is_a_usage_error(bad: str, models: dict[str, Path],
                                    corpus: dict[str, Path], tmp_path: Path) -> None:
    code, output = _invoke("parse", models["graph"], corpus["test"], "--shard", bad)
    assert code == 2 and "--shard" in output


def test_worker_errors_reach_the_parent_and_nothing_is_written(
        models: dict[str, Path], corpus: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    code, output = _invoke("parse", models["graph"], corpus["test"], "-o", out, "--jobs", "2",
                           "--decoder", "no-such-decoder")
    assert code == 2 and "no-such-decoder" in output
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    code, output = _invoke("parse", models["graph"], empty, "-o", out, "--jobs", "2",
                           "--decoder", "no-such-decoder")
    assert code == 2 and "no-such-decoder" in output
    assert not out.exists() and os.listdir(tmp_path) == ["empty.conllu"]
    code, output = _invoke("parse", models["graph"], "-", "--shard", "1/2")
    assert code == 2 and "standard input" in output


def _word(i: int, form: str = "w", head: str = "0", end: str = "\n") -> str:
    return f"{i}\t{form}\t_\tX\tX\t_\t{head}\tdep\t_\t_{end}"


# Inputs whose sentence boundaries are hard to see from bytes: byte-order mark, leading blank
# lines, blank lines between comments before the data, multiword tokens and empty nodes,
# CRLF and lone CR endings, white-space-only and no-break-space separators (blank to the
# reader), comments after the last sentence, no final newline, Malt-TAB words starting with #.
EDGE_FILES = {
    "bom.conllu": "\ufeff\n\n# a\n\n# b\n" + _word(1) + "\n# c\n1-2\tab\t_"
                  "\t_\t_\t_\t_\t_\t_\t_\n" + _word(1, head="2") + _word(2) + "2.1\te\t_\tX"
                  "\tX\t_\t_\t_\t_\t_\n \t\n\n# d\r\n" + _word(1, end="\r\n") + "\r\n\r\n"
                  + _word(1) + "\u00a0\n\n" + _word(1, "x") + "# e\n\n" + _word(1) + "\n# f\n\n"
                  "# g\n" + _word(1, end=""),
    "plain.conllu": "".join(_word(1, f"s{k}") + _word(2, head="1") + "\n" for k in range(9)),
    "cr.conll": "".join(_word(1, f"s{k}", end="\r") + "\r" for k in range(5)) + "\n\n"
                + _word(1) + "\n\n\n",
    "words.tab": "#\tNN\t0\n\n#x\tNN\t0\n\n\u00e9t\u00e9\tNN\t0\n\nb\tNN\t0\n\n#\tNN\t0\n"
                 "c\tNN\t1\n",
    "trailing.conllu": _word(1) + "\n" + _word(1) + "\n# only a comment\n",
    # every white-space character past ASCII (blank lines to the reader): as a separator,
    # and as the only "data" of a sentence of comments
    "spaces.conllu": "".join(f"{_word(1)}\n{_word(1)}\n{c}\n# a\n{c}\n\n"
                             for c in map(chr, range(0x80, 0x3001)) if c.isspace()) + _word(1),
    "zh.tab": "".join(f"\u5b57{k}\tNN\t2\n\u3002\tPU\t0\n\n" for k in range(6)),
    "blank.conllu": "\n \n\n",
    "empty.conllu": "",
}


def _whole_and_blocks(path: Path, chunk: int) -> tuple[list[bytes], list, list]:
    """The input's blocks; its sentences (text, line, format, source) as read whole, and as
    read block by block."""
    def described(sentences: list) -> list:
        return [(s.to_conll(), s.lineno, s.fmt, s.source) for s in sentences]

    blocks = list(file_blocks(str(path), None, "utf-8", chunk))
    whole = list(read_conll(path, require_heads=False))
    return ([b.data for b in blocks], described(whole),
            described([s for b in blocks for s in b.sentences()]))


@pytest.mark.parametrize("name", sorted(EDGE_FILES))
@pytest.mark.parametrize("chunk", [1, 2, 64])
def test_file_blocks_read_as_the_whole_file(name: str, chunk: int, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(EDGE_FILES[name].encode())
    blocks, whole, pieces = _whole_and_blocks(path, chunk)
    data = path.read_bytes()
    assert b"".join(blocks) == data
    for size in (1, 2, 5, 64):  # the input read in pieces that end anywhere, even in a character
        tiny = [data[i:i + size] for i in range(0, len(data), size)]
        assert list(sentence_blocks(tiny, chunk, utf8=True)) == blocks
    assert pieces == whole
    texts = []  # each block written as a worker writes it: the whole file's output
    for block in file_blocks(str(path), None, "utf-8", chunk):
        texts.append(io.StringIO())
        write_conll(block.sentences(), texts[-1])
    text = io.StringIO()
    write_conll(read_conll(path, require_heads=False), text)
    assert "".join(t.getvalue() for t in texts) == text.getvalue()
    least = {"bom.conllu": 4, "plain.conllu": 9, "words.tab": 2, "spaces.conllu": 2, "zh.tab": 6}
    if chunk == 1 and name in least:
        assert len(blocks) >= least[name]


@pytest.mark.parametrize("bad", ["2\tw\t_", _word(3), _word(2, head="9"), "\udcff\n",
                                 "\ufeff" + _word(1), "\ufeff"])
def test_file_block_errors_name_the_line_of_the_whole_file(bad: str, tmp_path: Path) -> None:
    lines = [_word(1, f"s{k}") + _word(2, head="1") + "\n" for k in range(12)]
    if bad == "\ufeff":  # a byte-order mark starting a sentence (files concatenated)
        lines[7] = bad + lines[7]
    else:
        lines[7] = lines[7].replace(_word(2, head="1"), bad.rstrip("\n") + "\n")
    path = tmp_path / "bad.conllu"
    path.write_bytes("".join(lines).encode("utf-8", "surrogateescape"))
    with pytest.raises(DparseError) as whole:
        list(read_conll(path, require_heads=False))
    for chunk in (1, 3):
        with pytest.raises(DparseError) as blocks:  # as the workers read them, in order
            for block in file_blocks(str(path), None, "utf-8", chunk):
                list(block.sentences())
        line = 22 if bad == "\ufeff" else 23
        assert str(blocks.value) == str(whole.value) and f":{line}:" in str(whole.value)


def test_byte_blocks_only_for_encodings_with_ascii_line_breaks() -> None:
    assert all(map(splits_as_bytes, ["utf-8", "latin-1", "cp1252", "ascii", "shift_jis"]))
    assert not any(map(splits_as_bytes, ["utf-16", "utf-32-le", "utf-8-sig", "iso2022_jp",
                                         "cp037", "no-such-encoding"]))


def test_parse_jobs_two_equals_one_job_on_edge_cases_and_gzip(
        models: dict[str, Path], tmp_path: Path) -> None:
    import gzip

    gz = tmp_path / "bom.conllu.gz"
    gz.write_bytes(gzip.compress(EDGE_FILES["bom.conllu"].encode()))
    latin = tmp_path / "latin.conllu"
    latin.write_bytes(EDGE_FILES["plain.conllu"].replace("s1", "\u00e9").encode("latin-1"))
    utf16 = tmp_path / "utf16.conllu"
    utf16.write_bytes(EDGE_FILES["plain.conllu"].encode("utf-16"))
    for source, encoding in ((gz, "utf-8"), (latin, "latin-1"), (utf16, "utf-16")):
        options = ("--encoding", encoding, "--chunk-size", "1")
        one = _parse(models["graph"], source, tmp_path / "one.conllu", *options)
        assert one == _parse(models["graph"], source, tmp_path / "two.conllu", "-j", "2",
                             *options)
    bad = tmp_path / "bad.conllu"
    bad.write_text("".join(_word(1, f"s{k}") + _word(2, head="x" if k == 5 else "1") + "\n"
                           for k in range(9)))
    code, output = _invoke("parse", models["graph"], bad, "-j", "2", "--chunk-size", "1")
    assert code == 2 and f"{bad}:17" in output and "HEAD 'x'" in output, output


@pytest.mark.parametrize("event", ["ctrl-c", "worker killed"])
def test_interrupt_or_dead_worker_stops_cleanly_and_leaves_no_output(
        event: str, models: dict[str, Path], corpus: dict[str, Path], tmp_path: Path) -> None:
    import psutil

    big = tmp_path / "big.conllu"
    write_text(big, corpus["test"].read_text(encoding="utf-8") * 40)
    out = tmp_path / "out.conllu"
    proc = subprocess.Popen([sys.executable, "-m", "dparse", "parse", str(models["graph"]),
                             str(big), "-o", str(out), "--jobs", "2", "--chunk-size", "4"],
                            stderr=subprocess.PIPE, cwd=REPO)
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + 30
    while len(parent.children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = parent.children(recursive=True)
    time.sleep(1.0)
    if event == "ctrl-c":
        proc.send_signal(signal.SIGINT)
    else:
        next(w for w in workers if "resource_tracker" not in " ".join(w.cmdline())).kill()
    _, err = proc.communicate(timeout=30)
    if event == "ctrl-c":
        assert proc.returncode == 130 and b"interrupted" in err, err
    else:
        assert proc.returncode == 2 and b"worker process died" in err, err
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["big.conllu"]
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive


def _grid_file(folder: Path, treebanks: list,
               configs: tuple[str, ...] = ("o1-cle", "easyfirst")) -> Path:
    grid = {"name": "tiny", "configs": [str(REPO / f"configs/en_ewt/{c}.yaml") for c in configs],
            "treebanks": treebanks, "seeds": [1, 2], "overrides": TINY}
    path = folder / "grid.yaml"
    write_text(path, json.dumps(grid))  # JSON is YAML
    return path


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two single-threaded worker processes."""
    from dparse.batch.cluster import ClusterOptions, open_client

    with open_client("local", ClusterOptions(workers=2)) as c:
        yield c


def test_grid_survives_a_killed_worker_and_reruns_nothing(
        client, corpus: dict[str, Path], tmp_path: Path) -> None:
    tb = {"name": "mini", "train": str(corpus["train"]), "dev": str(corpus["dev"]),
          "test": str(corpus["test"])}
    spec = load_grid(_grid_file(tmp_path, [tb]))
    cells = spec.cells(tmp_path / "out", None)
    assert len(cells) == 4 and len({c.key for c in cells}) == 4
    killed = []

    def kill_a_busy_worker(record: dict) -> None:
        if killed:
            return
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            busy = [w for w, tasks in client.processing().items() if tasks]
            if busy:
                pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    records = run_grid(cells, client, kill_a_busy_worker)
    assert killed
    assert [r["status"] for r in records] == ["ok"] * 4, records
    assert [r["config"] for r in records] == ["o1-cle", "o1-cle", "easyfirst", "easyfirst"]
    assert all(0 < r["uas"] <= 100 and 0 < r["las"] <= r["uas"] for r in records)
    assert records[0]["uas"] != records[1]["uas"] or records[0]["key"] != records[1]["key"]
    for cell in cells:
        folder = Path(cell.directory)
        assert {"model", "cell.log", RESULT_FILE, "test.parsed.conllu"} <= set(os.listdir(folder))
        assert "epoch 1" in (folder / "cell.log").read_text()
    stamps = [(Path(c.directory) / RESULT_FILE).stat().st_mtime_ns for c in cells]
    seen = []
    again = run_grid(spec.cells(tmp_path / "out", None), client, seen.append)
    assert again == records and len(seen) == 4
    assert stamps == [(Path(c.directory) / RESULT_FILE).stat().st_mtime_ns for c in cells]
    write_tables(tmp_path / "out", spec.name, records)
    table = (tmp_path / "out" / "results.md").read_text()
    assert table.count("| ok |") == 4
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == records
    assert len((tmp_path / "out" / "results.csv").read_text().splitlines()) == 5


def test_workers_drop_only_the_heartbeat_errors_of_the_shutdown_race(client) -> None:
    import logging

    from dparse.batch.worker_logging import drop_heartbeat_failure

    client.wait_for_workers(2, timeout=120)  # a test before killed one; its nanny restarts it
    installed = client.run(
        lambda: drop_heartbeat_failure in logging.getLogger("distributed.worker").filters)
    assert len(installed) == 2 and all(installed.values())

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("distributed.worker", logging.ERROR, "", 0, message, None, None)

    assert not drop_heartbeat_failure(record("Failed to communicate with scheduler during "
                                             "heartbeat."))
    assert drop_heartbeat_failure(record("Worker exceeded 95% memory budget. Restarting"))


def test_grid_records_a_failed_cell_on_a_running_scheduler(client, corpus: dict[str, Path],
                                                tmp_path: Path) -> None:
    missing = {"name": "missing", "train": str(tmp_path / "nowhere.conllu"), "dev": None,
               "test": str(corpus["test"])}
    good = {"name": "mini", "train": str(corpus["train"]), "dev": None,
            "test": str(corpus["test"])}
    spec = load_grid(_grid_file(tmp_path, [missing, good], ("o1-cle",)))
    spec.seeds = [1]
    cells = spec.cells(tmp_path / "out", None)
    from dparse.batch.cluster import ClusterOptions, open_client

    # through --scheduler ADDRESS: a client of the running cluster, which stays up after
    with open_client("local", ClusterOptions(), scheduler=client.scheduler.address) as remote:
        records = run_grid(cells, remote)
    assert client.submit(len, [1, 2]).result() == 2
    assert [r["status"] for r in records] == ["failed", "ok"]  # the grid went on
    assert "nowhere.conllu" in records[0]["error"]
    assert read_result(cells[0].directory) == records[0]
    assert "nowhere.conllu" in (Path(cells[0].directory) / "cell.log").read_text()
    table = markdown_table("t", records)
    assert "Failed cells" in table and table.count("| failed |") == 1
    assert "nowhere.conllu" in csv_table(records)


def test_grid_file_errors_name_the_file_and_key(tmp_path: Path) -> None:
    from dparse.errors import ConfigError

    bad = tmp_path / "bad.yaml"
    for text, problem in (("configs: []", "at least one"), ("config: [a]", "unknown key"),
                          ("configs: [nope.yaml]", "does not exist"),
                          ("configs: [x.yaml]\nseeds: [a]", "seeds"),
                          ("configs: [x.yaml]\ncluster: {workers: 0}", "workers"),
                          ("configs: [x.yaml]\npunct: maybe", "punct")):
        (tmp_path / "x.yaml").write_text("name: x\n")
        bad.write_text(text)
        with pytest.raises(ConfigError, match=problem) as info:
            load_grid(bad)
        assert str(bad) in str(info.value)


def test_grid_command_end_to_end(corpus: dict[str, Path], tmp_path: Path) -> None:
    tb = {"name": "mini", "train": str(corpus["train"]), "dev": None,
          "test": str(corpus["test"])}
    path = _grid_file(tmp_path, [tb], ("o1-cle",))
    code, output = _invoke("grid", path, "--out", tmp_path / "run", "--workers", "2",
                           "--set", "training.epochs=1", "--models", tmp_path / "models")
    assert code == 0, output
    assert "not linked" in output  # two cells (seeds) per config name: no link
    records = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [r["status"] for r in records] == ["ok"] * 2
    assert (tmp_path / "run" / "results.md").read_text().count("| ok |") == 2
    # --missing-only: seed 1's model is missing from models, so its (finished) cell runs and is
    # linked; then nothing is missing and nothing runs
    models = tmp_path / "models"
    code, output = _invoke("grid", path, "--out", tmp_path / "run", "--only", "seed=1",
                           "--set", "training.epochs=1", "--models", models, "--missing-only")
    assert code == 0, output
    assert (models / "mini-o1-cle" / "weights.bin").is_file()
    assert "1 of 1 cells done" in output
    code, output = _invoke("grid", path, "--out", tmp_path / "run", "--set",
                           "training.epochs=1", "--models", models, "--missing-only")
    assert code == 0 and "nothing to run" in output, output
    code, output = _invoke("grid", path, "--missing-only")
    assert code == 2 and "--missing-only needs --models" in output


def test_grid_treebank_overrides_and_list_files(tmp_path: Path) -> None:
    """A treebank's overrides reach its cells only; a list file is read relative to the grid
    file, ``except`` leaves treebanks out, and unknown names are errors."""
    from dparse.batch.grid import cells_without_model
    from dparse.errors import ConfigError

    write_text(tmp_path / "tbs.yaml", "- en_ewt\n- {name: eus, train: e/train, test: e/test, "
               "dev: null, overrides: [decoder.single_root=false, training.epochs=3]}\n")
    config = str(REPO / "configs/en_ewt/o1-cle.yaml")
    grid = tmp_path / "grid.yaml"
    write_text(grid, json.dumps({"configs": [config], "treebanks": "tbs.yaml",
                                 "overrides": ["training.epochs=2"]}))
    cells = load_grid(grid).cells(tmp_path / "run", str(tmp_path))
    assert [c.config["name"] for c in cells] == ["en_ewt-o1-cle", "eus-o1-cle"]
    assert [c.config["training"]["epochs"] for c in cells] == [2, 3]
    assert [c.config["decoder"]["single_root"] for c in cells] == [True, False]
    assert [c.config["data"]["train"] for c in cells] == ["en_ewt/train.conllu", "e/train"]
    (tmp_path / "models" / "eus-o1-cle").mkdir(parents=True)
    assert cells_without_model(cells, tmp_path / "models") == cells  # no weights file yet
    write_text(tmp_path / "models" / "eus-o1-cle" / "weights.bin", "")
    assert cells_without_model(cells, tmp_path / "models") == cells[:1]
    write_text(grid, json.dumps({"configs": [config],
                                 "treebanks": {"file": "tbs.yaml", "except": ["en_ewt"]}}))
    assert [tb.name for tb in load_grid(grid).treebanks] == ["eus"]
    for treebanks, problem in (({"file": "tbs.yaml", "except": ["fr"]}, "except names fr"),
                               ("none.yaml", "does not exist"),
                               ({"file": "tbs.yaml", "but": []}, "list file"),
                               ([{"name": "x", "train": "a", "test": "b",
                                  "overrides": "k=v"}], "overrides must be a list")):
        write_text(grid, json.dumps({"configs": [config], "treebanks": treebanks}))
        with pytest.raises(ConfigError, match=problem) as info:
            load_grid(grid)
        assert str(grid) in str(info.value)


def _benchmarks() -> dict:
    """The table scripts' model lists and benchmarks/common.py (TREEBANKS, config_for)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import common
        import cube_tables
        import greedy_tables
        import umst_tables
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return {"cube": cube_tables, "greedy": greedy_tables, "treebanks": common,
            "umst": umst_tables}


def _make_value(variable: str) -> str:
    """A variable of the make files (make print-VAR)."""
    return subprocess.run(["make", "-s", "--no-print-directory", f"print-{variable}"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout.strip()


def _table_models(grid: str) -> tuple[list[str], list[str] | None]:
    """The configs (stems) that the table behind a grid of configs/grids/ trains, and the
    treebank setups of benchmarks/common.py it trains them on (None: en_ewt's own files)."""
    b = _benchmarks()
    greedy, cube = b["greedy"], b["cube"]
    every = [tb.name for tb in b["treebanks"].TREEBANKS]
    if grid.startswith("greedy-models-o"):
        order = int(grid[-1])
        return ([greedy.EXACT[order][1], *(f"o{order}-{m}" for _, _, m in greedy.GREEDY)], every)
    if grid == "umst-models":
        return [*b["umst"].DIRECTED.values(), b["umst"].UNDIRECTED], every
    if grid == "cube-models-table2":
        return [c for _, c in cube.TABLE2], [t for t in every if t != "en_ewt"]
    if grid == "cube-models-en_ewt":
        return [cube.REFERENCE, *dict.fromkeys(c for _, c, *_ in cube.TABLE1 + cube.TABLE3)], None
    assert grid == "sr-models"
    return _make_value("SR_MODELS").split(), None


@pytest.mark.parametrize("grid", ["greedy-models-o1", "greedy-models-o2", "umst-models",
                                  "cube-models-table2", "cube-models-en_ewt", "sr-models"])
def test_table_model_grids_match_the_tables(grid: str, tmp_path: Path) -> None:
    """The grid that `make <table> JOBS=N` runs first trains exactly the models (names and
    resolved configs) that the table's script or make rules would train, so that they are
    found and reused."""
    from conftest import DATA

    from dparse.config import load_config

    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")  # single_root auto reads train
    b = _benchmarks()
    names, setups = _table_models(grid)
    spec = load_grid(REPO / "configs" / "grids" / f"{grid}.yaml")
    assert [c.stem for c in spec.configs] == names
    cells = spec.cells(tmp_path, str(DATA))
    if setups is None:
        assert spec.treebanks == [None]
        for cell in cells:
            expected = load_config(REPO / "configs" / "en_ewt" / f"{cell.labels['config']}.yaml",
                                   data_root=str(DATA))
            assert cell.config == expected.to_dict()
        return
    assert [tb.name for tb in spec.treebanks] == setups
    cells = [c for c in cells if c.labels["treebank"] in {"en_ewt", "esp", "eus", "da_ddt"}]
    for cell in cells:
        tb = next(t for t in b["treebanks"].TREEBANKS if t.name == cell.labels["treebank"])
        raw = b["treebanks"].config_for(cell.labels["config"], tb, None)
        if "umst" in raw:  # the script gives U-MST-uf the D-MST model at parse time only
            raw["umst"]["directed_model"] = None
        assert cell.config == load_config(raw=raw, data_root=str(DATA)).to_dict()
        assert cell.config["decoder"]["single_root"] is (tb.name != "eus")


def test_en_ewt_models_grid_lists_every_config_of_the_reports() -> None:
    """make reports-models JOBS=N trains, as configs/grids/en_ewt-models.yaml, every en_ewt
    config that make/reports.mk draws but the forest rerankers, under the names it expects."""
    spec = load_grid(REPO / "configs" / "grids" / "en_ewt-models.yaml")
    wanted = [c for c in _make_value("REPORTS_CONFIGS").split() if not c.startswith("rerank-")]
    assert sorted(c.stem for c in spec.configs) == sorted(wanted)
    for config in spec.configs:
        assert read_yaml(config)["name"] == f"en_ewt-{config.stem}"


def test_cube_table_grids_cover_each_table() -> None:
    """make cube-tableK JOBS=N trains (--only config=...) every model that table K reads."""
    cube = _benchmarks()["cube"]
    wanted = {1: [c for _, c, _ in cube.TABLE1], 3: [c for _, c, *_ in cube.TABLE3],
              4: [cube.CUBE]}
    for k, configs in wanted.items():
        assert _make_value(f"CUBE_GRID_{k}").split(",") == [cube.REFERENCE, *configs]


def test_easyfirst_models_grid_matches_the_make_rules(tmp_path: Path) -> None:
    """configs/grids/easyfirst-models.yaml gives each set the settings of make/easyfirst.mk
    (EF_SET_<set>, EF_CONFIG_<parser>), under the names make looks the models up by."""
    from conftest import DATA

    from dparse.config import load_config

    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    spec = load_grid(REPO / "configs" / "grids" / "easyfirst-models.yaml")
    cells = spec.cells(tmp_path, str(DATA))
    sets = _make_value("EF_SETS").split()
    parsers = _make_value("EF_PARSERS").split()
    assert sorted((c.labels["treebank"], c.labels["config"]) for c in cells) == sorted(
        (s, p) for s in sets for p in parsers)
    for cell in cells:
        name, parser = cell.labels["treebank"], cell.labels["config"]
        overrides = [o.strip() for o in _make_value(f"EF_SET_{name}").split("--set") if o.strip()]
        expected = load_config(REPO / _make_value(f"EF_CONFIG_{parser}"),
                               [f"name={name}-{parser}", *overrides], str(DATA))
        assert cell.config == expected.to_dict()
