"""Killing ``dparse train --out EXISTING`` and ``dparse parse -o EXISTING`` with SIGTERM and
SIGKILL at many points of the write: afterwards the model directory loads and is, byte for
byte, the old model or the new one, and the output file is the old output or the new one.

The kill points are states of the write seen by polling the file system (the hidden staging
directory appearing, its weights.bin growing, the swap done, ...), so that each lands where it
should whatever the machine's speed. After SIGTERM nothing is left behind; after SIGKILL only
hidden temporaries of the killed process, which the next write of the same path removes.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import DATA, requires_data
from paths import REPO

from dparse.conll import read_conll, write_conll
from dparse.graph.load import load_model
from dparse.modeldir import WEIGHTS_FILE

pytestmark = requires_data

# 2**22 arc weights: weights.bin (tens of MB, uncompressed) takes long enough to write, hash
# and fsync for polls to land inside the save (a point inside the weights' write may land once
# they are whole: still before the swap).
TRAIN_SETTINGS = ["--set", "data.train=train.conllu", "--set", "data.dev=dev.conllu",
                  "--set", "training.epochs=1", "--set", "features.arc_bits=22", "-q"]

# A kill point: (folder, pid of the writer, seconds since its start) -> kill now?
Point = Callable[[Path, int, float], bool]


def _dparse(*args: str) -> list[str]:
    return [sys.executable, "-m", "dparse", *args]


def _contents(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def _hidden(folder: Path, name: str) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(f".{name}.dparse-"))


def _run_until(cmd: list[str], folder: Path, point: Point,
               signum: int) -> tuple[int, bool, int, str]:
    """Run ``cmd``, send ``signum`` as soon as ``point`` holds; (exit status, whether the
    signal was sent before the command ended, its pid, its standard error)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    start = time.perf_counter()
    sent = False
    while proc.poll() is None:
        try:
            hit = point(folder, proc.pid, time.perf_counter() - start)
        except OSError:  # a file vanished while we looked
            hit = False
        if hit:
            proc.send_signal(signum)
            sent = True
            break
        time.sleep(0.001)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err.decode(), err.decode()
    return proc.returncode, sent, proc.pid, err.decode()


def _leftover_of(name: str, pids: set[str], suffixes: str) -> bool:
    """Whether ``name`` is a hidden temporary of one of the processes ``pids``."""
    match = re.fullmatch(rf"\.[^/]+\.dparse-(\d+)-\w+\.({suffixes})", name)
    return match is not None and match.group(1) in pids


def _staging(folder: Path, name: str, pid: int) -> Path | None:
    found = [n for n in os.listdir(folder) if n.startswith(f".{name}.dparse-{pid}-")
             and n.endswith(".new")]
    return folder / found[0] if found else None


def _staged_file(name: str, pid: int, folder: Path, file: str) -> Path | None:
    staging = _staging(folder, name, pid)
    return staging / file if staging is not None and (staging / file).exists() else None


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Training slices, the old model (seed 1), the new model's reference (seed 2: what an
    uninterrupted run writes), and the new model's reference output of en_ewt dev."""
    folder = tmp_path_factory.mktemp("kill")
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 60), folder / "train.conllu")
    write_conll(islice(read_conll(DATA / "en_ewt" / "test.conllu"), 10), folder / "dev.conllu")
    config = str(REPO / "configs" / "en_ewt" / "o1-cle.yaml")

    def train(seed: int, out: Path) -> list[str]:
        return _dparse("train", config, "--out", str(out), "--data-root", str(folder),
                       *TRAIN_SETTINGS, "--set", f"training.seed={seed}")

    for seed, name in ((1, "old"), (2, "new")):
        subprocess.run(train(seed, folder / name), check=True, cwd=REPO)
    old, new = _contents(folder / "old"), _contents(folder / "new")
    assert old[WEIGHTS_FILE] != new[WEIGHTS_FILE]
    parse_input = DATA / "en_ewt" / "dev.conllu"
    subprocess.run(_dparse("parse", str(folder / "new"), str(parse_input), "-o",
                           str(folder / "new.conllu")), check=True, cwd=REPO,
                   stderr=subprocess.DEVNULL)
    return SimpleNamespace(folder=folder, old=old, new=new, train=train,
                           parse_input=parse_input,
                           parsed=(folder / "new.conllu").read_bytes())


def _train_points(runs: SimpleNamespace, target: Path) -> dict[str, Point]:
    """The kill points of a save over ``target``. Once the directories are swapped, the
    staging name holds the old model: the points inside the staging directory hold only
    before the swap."""
    name = target.name
    weights_size = len(runs.new[WEIGHTS_FILE])
    old_manifest = (target / "manifest.json").stat().st_ino

    def swapped() -> bool:
        return (target / "manifest.json").stat().st_ino != old_manifest

    def staged(file: str, share: float = -1.0) -> Point:
        def point(folder: Path, pid: int, _: float) -> bool:
            path = _staged_file(name, pid, folder, file)
            return path is not None and path.stat().st_size > share * weights_size and (
                not swapped())
        return point

    return {
        # early, and surely before the save begins (a quiet machine trains the tiny model
        # and saves it within 0.4 s)
        "while starting": lambda folder, pid, seconds: (
            seconds > 0.1 and _staging(folder, name, pid) is None and not swapped()),
        "staging created": lambda folder, pid, _: _staging(folder, name, pid) is not None,
        "weights started": staged(WEIGHTS_FILE, 0.0),
        "weights half written": staged(WEIGHTS_FILE, 0.5),
        "vocab written": staged("vocab.json"),
        "config written": staged("config.yaml"),
        "manifest written": staged("manifest.json"),
        "swapped": lambda folder, pid, _: swapped(),
    }


TRAIN_POINTS = ("while starting", "staging created", "weights started", "weights half written",
                "vocab written", "config written", "manifest written", "swapped")
PARSE_POINTS = ("before output", "output created", "output growing", "output half written",
                "output nearly written", "replaced")
# killed at these points, the old model or output must still be there
BEFORE_THE_SWAP = {*TRAIN_POINTS[:6], *PARSE_POINTS[:5]}
INSIDE_THE_WRITE = {"weights started", "weights half written", "output growing",
                    "output half written"}


def _check_outcome(point: str, status: int, sent: bool, signum: int, is_old: bool,
                   is_new: bool, err: str) -> None:
    assert is_old or is_new, f"{point}: neither the old nor the new"
    assert status in (0, -signum), f"{point}: exit status {status}; stderr: {err}"
    if point in INSIDE_THE_WRITE:
        assert sent, f"{point}: the command ended before the kill point"
    if sent and status != 0 and point in BEFORE_THE_SWAP:
        assert is_old, f"{point}: killed before the swap, yet the new one is in place"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_killed_train_leaves_the_old_or_the_new_model(runs: SimpleNamespace,
                                                      signum: int) -> None:
    folder = runs.folder / f"train-{signum}"
    folder.mkdir()
    target = folder / "model"
    outcomes = {}
    killed: set[str] = set()
    for point_name in TRAIN_POINTS:
        if not target.exists():
            shutil.copytree(runs.folder / "old", target)
        point = _train_points(runs, target)[point_name]
        status, sent, pid, err = _run_until(runs.train(2, target), folder, point, signum)
        killed.add(str(pid))
        files = _contents(target)
        is_old, is_new = files == runs.old, files == runs.new
        _check_outcome(point_name, status, sent, signum, is_old, is_new, err)
        load_model(target)  # checked against its manifest
        leftovers = _hidden(folder, "model")
        if signum == signal.SIGTERM:
            assert leftovers == [], point_name
        else:
            assert all(_leftover_of(n, killed, "new|old") for n in leftovers), leftovers
        outcomes[point_name] = "new" if is_new else "old"
        if is_new:
            shutil.rmtree(target)
    assert outcomes["while starting"] == "old" and outcomes["swapped"] == "new"
    subprocess.run(runs.train(2, target), check=True, cwd=REPO)  # cleans what a kill left
    assert _contents(target) == runs.new and _hidden(folder, "model") == []


def _parse_points(runs: SimpleNamespace, out: Path) -> dict[str, Point]:
    size = len(runs.parsed)
    old_inode = out.stat().st_ino

    def temp(folder: Path, pid: int) -> Path | None:
        found = [n for n in os.listdir(folder)
                 if n.startswith(f".{out.name}.dparse-{pid}-") and n.endswith(".tmp")]
        return folder / found[0] if found else None

    def output_at(share: float) -> Point:
        def point(folder: Path, pid: int, _: float) -> bool:
            t = temp(folder, pid)
            return t is not None and t.stat().st_size > share * size
        return point

    return {
        "before output": lambda folder, pid, seconds: (
            seconds > 0.1 and temp(folder, pid) is None and out.stat().st_ino == old_inode),
        "output created": lambda folder, pid, _: temp(folder, pid) is not None,
        "output growing": output_at(0.0),
        "output half written": output_at(0.5),
        "output nearly written": output_at(0.95),
        "replaced": lambda folder, pid, _: out.stat().st_ino != old_inode,
    }


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_killed_parse_leaves_the_old_or_the_new_output(runs: SimpleNamespace,
                                                       signum: int) -> None:
    folder = runs.folder / f"parse-{signum}"
    folder.mkdir()
    out = folder / "out.conllu"
    old = b"# the old output\n" * 100
    cmd = _dparse("parse", str(runs.folder / "new"), str(runs.parse_input), "-o", str(out))
    outcomes = {}
    killed: set[str] = set()
    for point_name in PARSE_POINTS:
        if not out.exists() or out.read_bytes() != old:
            out.write_bytes(old)
            out.chmod(0o600)
        point = _parse_points(runs, out)[point_name]
        status, sent, pid, err = _run_until(cmd, folder, point, signum)
        killed.add(str(pid))
        data = out.read_bytes()
        _check_outcome(point_name, status, sent, signum, data == old, data == runs.parsed, err)
        assert out.stat().st_mode & 0o777 == 0o600
        leftovers = _hidden(folder, out.name)
        if signum == signal.SIGTERM:
            assert leftovers == [], point_name
        else:
            assert all(_leftover_of(n, killed, "tmp") for n in leftovers), leftovers
        outcomes[point_name] = "new" if data == runs.parsed else "old"
    assert outcomes["before output"] == "old" and outcomes["replaced"] == "new"
    subprocess.run(cmd, check=True, cwd=REPO, stderr=subprocess.DEVNULL)
    assert out.read_bytes() == runs.parsed and _hidden(folder, out.name) == []
