"""Bad inputs through the real command line (``python -m dparse`` in a subprocess).

Every case of issue 17 and more: each checks the exit status (2 for anything the user can fix,
never 1, which is kept for bugs), that the message names the file (and ``file:line`` where
there is a line), that there is no traceback (nor a bare ``Aborted.`` or ``internal error``),
and that no file the user had was changed, replaced or lost: the bytes, mode, inode and link
count of every file of the case's directory and of the shared model directory are the same
before and after (a case that writes an output names it, and checks it). The cases where the
right outcome is success (a byte-order mark, gzip on stdin, output to a device, a FIFO, a
symbolic or hard link) are here too, with what must hold of their output.
"""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from paths import REPO

CONFIG = REPO / "configs" / "en_ewt" / "o1-cle.yaml"
DATA = Path(os.environ.get("DPARSE_DATA", REPO.parent / "shared" / "data"))
TIMEOUT = 60

# Two sentences; line numbers: sentence 1 is lines 1-5 (comment, 4 words), sentence 2 lines 7-10.
GOOD = (
    "# text = The dog barks .\n"
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
    "2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
    "3\tbarks\tbark\tVERB\tVBZ\t_\t0\troot\t_\t_\n"
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n"
    "\n"
    "# text = Cats sleep .\n"
    "1\tCats\tcat\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"
    "2\tsleep\tsleep\tVERB\tVBP\t_\t0\troot\t_\t_\n"
    "3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_\n"
    "\n"
)


def with_line(line: int, old: str, new: str, text: str = GOOD) -> str:
    """``text`` with ``old`` replaced by ``new`` in its 1-based ``line``."""
    lines = text.split("\n")
    assert old in lines[line - 1], (line, old)
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "\n".join(lines)


def dparse(*args: str, stdin: bytes | None = None, cwd: Path | None = None
           ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dparse", *args], input=stdin,
                          capture_output=True, timeout=TIMEOUT, cwd=cwd,
                          stdin=None if stdin is not None else subprocess.DEVNULL)


def snapshot(*roots: Path) -> dict[str, tuple]:
    """Type, mode, inode, link count and content (bytes of a regular file, the target of a
    symbolic link) of every entry under ``roots``, symbolic links not followed."""
    found: dict[str, tuple] = {}
    for root in roots:
        for top, dirs, files in os.walk(root):
            for name in [*dirs, *files, ""] if top == str(root) else [*dirs, *files]:
                path = os.path.join(top, name) if name else top
                st = os.lstat(path)
                content: bytes | str | None = None
                if stat.S_ISREG(st.st_mode):
                    content = Path(path).read_bytes()
                elif stat.S_ISLNK(st.st_mode):
                    content = os.readlink(path)
                found[path] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_ino,
                               st.st_nlink, st.st_rdev, content)
    return found


def assert_clean_failure(result: subprocess.CompletedProcess, status: int = 2) -> str:
    """The exit status is ``status`` and stderr a message, not a traceback; returns stderr."""
    err = result.stderr.decode(errors="replace")
    assert result.returncode == status, f"exit {result.returncode}, expected {status}:\n{err}"
    assert "Traceback" not in err and "internal error" not in err, err
    assert "Aborted" not in err, err
    # the files by their names, not placeholders or internal parameter names
    assert "<gold>" not in err and "<system>" not in err and "require_heads" not in err, err
    if status == 2:
        assert err.strip(), "no message"
    return err


@pytest.fixture(scope="module")
def model(tiny_first_order: Path) -> Path:
    """The session's tiny first-order model, shared by the cases (which copy it to damage it)."""
    return tiny_first_order / "model"


def tiny_training(train: Path, dev: str = "null") -> list[str]:
    return ["--set", f"data.train={train}", "--set", f"data.dev={dev}",
            "--set", "training.epochs=1", "--set", "features.arc_bits=14",
            "--set", "features.label_bits=8"]


@dataclass
class Case:
    """One bad input. ``files`` (name -> text or bytes) are written into the case's
    directory D; in ``args`` and ``mentions`` "{d}" is D and "{m}" the model directory.
    ``mentions`` must all be in stderr; ``writes`` names the outputs allowed to change (and
    ``check`` looks at them); ``prepare`` does what ``files`` cannot (links, copies)."""

    id: str
    args: list[str]
    mentions: list[str] = field(default_factory=list)
    status: int = 2
    files: dict[str, str | bytes] = field(default_factory=dict)
    stdin: bytes | None = None
    writes: tuple[str, ...] = ()
    prepare: Callable[[Path, Path], None] | None = None
    check: Callable[[Path, subprocess.CompletedProcess], None] | None = None


def copy_model(edit: Callable[[Path], None] | None = None) -> Callable[[Path, Path], None]:
    """A ``prepare`` that copies the model to D/model and then damages it with ``edit``."""
    def prepare(d: Path, m: Path) -> None:
        shutil.copytree(m, d / "model")
        if edit is not None:
            edit(d / "model")
    return prepare


def truncate(name: str, size: int) -> Callable[[Path], None]:
    def edit(model_dir: Path) -> None:
        path = model_dir / name
        path.write_bytes(path.read_bytes()[:size])
    return edit


def parses_two_sentences(name: str) -> Callable[[Path, subprocess.CompletedProcess], None]:
    def check(d: Path, result: subprocess.CompletedProcess) -> None:
        text = result.stdout.decode() if name == "-" else (d / name).read_text()
        assert text.count("\n\n") == 2 and "\tbarks\t" in text, text
    return check


TRAIN = ["train", str(CONFIG), "-q", "--out", "{d}/new-model"]
CYCLE = with_line(3, "\t3\tnsubj", "\t1\tnsubj")  # The -> dog -> The, barks on the root
SELF_LOOP = with_line(2, "\t2\tdet", "\t1\tdet")
NO_ROOT = with_line(9, "\t0\troot", "\t1\troot")  # 1 -> 2 -> 1 and no word on the root
TWO_ROOTS = with_line(10, "\t2\tpunct", "\t0\tpunct")
ALL_PUNCT = "1\t.\t.\tPUNCT\t.\t_\t0\troot\t_\t_\n2\t,\t,\tPUNCT\t,\t_\t1\tpunct\t_\t_\n\n"

CASES = [
    # --- damaged or foreign model directories -----------------------------------------------
    Case("weights-truncated", ["parse", "{d}/model", "{d}/in.conllu"], ["{d}/model/weights.bin"],
         files={"in.conllu": GOOD}, prepare=copy_model(truncate("weights.bin", 1000))),
    Case("weights-empty", ["parse", "{d}/model", "{d}/in.conllu"], ["{d}/model/weights.bin"],
         files={"in.conllu": GOOD}, prepare=copy_model(truncate("weights.bin", 0))),
    Case("vocab-truncated", ["parse", "{d}/model", "{d}/in.conllu"], ["{d}/model/vocab.json"],
         files={"in.conllu": GOOD}, prepare=copy_model(truncate("vocab.json", 500))),
    Case("config-edited", ["parse", "{d}/model", "{d}/in.conllu"], ["{d}/model/config.yaml"],
         files={"in.conllu": GOOD},
         prepare=copy_model(lambda m: (m / "config.yaml").write_text(
             (m / "config.yaml").read_text().replace("arc_bits: 18", "arc_bits: 19")))),
    Case("model-dir-empty", ["parse", "{d}/model", "{d}/in.conllu"], ["{d}/model"],
         files={"in.conllu": GOOD}, prepare=lambda d, m: (d / "model").mkdir()),
    Case("model-dir-missing", ["parse", "{d}/nothing", "{d}/in.conllu"], ["{d}/nothing"],
         files={"in.conllu": GOOD}),
    # --- training ---------------------------------------------------------------------------
    Case("train-empty-file", [*TRAIN, *tiny_training(Path("{d}/empty.conllu"))],
         ["{d}/empty.conllu"], files={"empty.conllu": ""}),
    Case("train-empty-dev-file", [*TRAIN, *tiny_training(Path("{d}/t.conllu"), "{d}/dev.conllu")],
         ["{d}/dev.conllu"], files={"t.conllu": GOOD, "dev.conllu": ""}),
    Case("train-heads-missing", [*TRAIN, *tiny_training(Path("{d}/t.conllu"))],
         ["{d}/t.conllu:3"], files={"t.conllu": with_line(3, "\t3\tnsubj", "\t_\tnsubj")}),
    Case("train-gold-cycle", [*TRAIN, *tiny_training(Path("{d}/t.conllu"))],
         ["{d}/t.conllu:1", "cycle"], files={"t.conllu": CYCLE}),
    Case("train-config-not-yaml", ["train", "{d}/c.yaml", "-q"], ["{d}/c.yaml"],
         files={"c.yaml": "data: [train\n"}),
    Case("train-config-unknown-key", ["train", str(CONFIG), "-q", "--set", "training.epoch=2"],
         ["training", "epoch"]),
    Case("train-set-malformed", ["train", str(CONFIG), "-q", "--set", "training.epochs"],
         ["training.epochs"]),
    Case("train-out-is-a-file", [*TRAIN[:-1], "{d}/notes.txt",
                                 *tiny_training(Path("{d}/t.conllu"))], ["{d}/notes.txt"],
         files={"t.conllu": GOOD, "notes.txt": "my notes\n"}),
    Case("train-out-is-a-foreign-dir", [*TRAIN[:-1], "{d}/work",
                                        *tiny_training(Path("{d}/t.conllu"))], ["{d}/work"],
         files={"t.conllu": GOOD, "work/thesis.tex": "\\begin{document}\n"}),
    # --- parse: options --------------------------------------------------------------------
    Case("parse-encoding-bogus", ["parse", "{m}", "{d}/in.conllu", "--encoding", "bogus"],
         ["bogus"], files={"in.conllu": GOOD}),
    Case("parse-set-training-only-key", ["parse", "{m}", "{d}/in.conllu", "--set",
                                         "features.arc_bits=20"], ["features.arc_bits", "{m}"],
         files={"in.conllu": GOOD}),
    Case("parse-decoder-the-model-rejects", ["parse", "{m}", "{d}/in.conllu", "--decoder",
                                             "easyfirst-heap"], ["easyfirst-heap"],
         files={"in.conllu": GOOD}),
    Case("parse-decoder-option-unknown", ["parse", "{m}", "{d}/in.conllu", "--set",
                                          "decoder.options.beam=3"], ["decoder.options"],
         files={"in.conllu": GOOD}),
    # --- parse: outputs --------------------------------------------------------------------
    Case("parse-output-is-a-directory", ["parse", "{m}", "{d}/in.conllu", "-o", "{d}/out"],
         ["{d}/out"], files={"in.conllu": GOOD, "out/keep.txt": "x\n"}),
    Case("parse-output-parent-missing", ["parse", "{m}", "{d}/in.conllu", "-o",
                                         "{d}/no/such/out.conllu"], ["{d}/no/such/out.conllu"],
         files={"in.conllu": GOOD}),
    Case("parse-bad-input-keeps-old-output", ["parse", "{m}", "{d}/in.conllu", "-o",
                                              "{d}/out.conllu"], ["{d}/in.conllu:9"],
         files={"in.conllu": with_line(9, "\t0\troot", "\troot"), "out.conllu": "old\n"}),
    Case("parse-output-symlink", ["parse", "{m}", "{d}/in.conllu", "-o", "{d}/link.conllu"],
         status=0, files={"in.conllu": GOOD, "target.conllu": "old\n"},
         writes=("target.conllu",),
         prepare=lambda d, m: (d / "link.conllu").symlink_to("target.conllu"),
         check=parses_two_sentences("target.conllu")),
    Case("parse-output-hard-link", ["parse", "{m}", "{d}/in.conllu", "-o", "{d}/a.conllu"],
         status=0, files={"in.conllu": GOOD, "a.conllu": "old\n"},
         writes=("a.conllu", "b.conllu"),
         prepare=lambda d, m: os.link(d / "a.conllu", d / "b.conllu"),
         check=lambda d, r: (parses_two_sentences("b.conllu")(d, r),
                             _same_inode(d / "a.conllu", d / "b.conllu"))),
    Case("parse-output-mode-600", ["parse", "{m}", "{d}/in.conllu", "-o", "{d}/out.conllu"],
         status=0, files={"in.conllu": GOOD, "out.conllu": "old\n"}, writes=("out.conllu",),
         prepare=lambda d, m: os.chmod(d / "out.conllu", 0o600),
         check=lambda d, r: (parses_two_sentences("out.conllu")(d, r),
                             _mode_is(d / "out.conllu", 0o600))),
    # --- parse: inputs ---------------------------------------------------------------------
    Case("parse-input-missing", ["parse", "{m}", "{d}/nothing.conllu"], ["{d}/nothing.conllu"]),
    Case("parse-input-is-a-directory", ["parse", "{m}", "{d}/sub"], ["{d}/sub"],
         files={"sub/x": "x\n"}),
    Case("parse-columns-missing", ["parse", "{m}", "{d}/in.conllu"], ["{d}/in.conllu:8"],
         files={"in.conllu": with_line(8, "\t_\t_", "")}),
    Case("parse-head-not-a-number", ["parse", "{m}", "{d}/in.conllu"], ["{d}/in.conllu:3"],
         files={"in.conllu": with_line(3, "\t3\tnsubj", "\tx\tnsubj")}),
    Case("parse-head-0_1", ["parse", "{m}", "{d}/in.conllu"], ["{d}/in.conllu:8", "0_1"],
         files={"in.conllu": with_line(8, "\t2\tnsubj", "\t0_1\tnsubj")}),
    Case("parse-head-out-of-range", ["parse", "{m}", "{d}/in.conllu"], ["{d}/in.conllu:8"],
         files={"in.conllu": with_line(8, "\t2\tnsubj", "\t9\tnsubj")}),
    Case("parse-latin1-bytes-in-utf8", ["parse", "{m}", "{d}/in.conllu"],
         ["{d}/in.conllu:3", "latin-1"],
         files={"in.conllu": with_line(3, "dog\tdog", "d\xe9g\tdog").encode("latin-1")}),
    Case("parse-gzip-truncated", ["parse", "{m}", "{d}/in.conllu.gz"], ["{d}/in.conllu.gz"],
         files={"in.conllu.gz": gzip.compress(GOOD.encode())[:60]}),
    Case("parse-gzip-on-stdin", ["parse", "{m}"], status=0, stdin=gzip.compress(GOOD.encode()),
         check=parses_two_sentences("-")),
    Case("parse-empty-stdin", ["parse", "{m}"], status=0, stdin=b"",
         check=lambda d, r: _empty(r.stdout)),
    Case("parse-byte-order-mark", ["parse", "{m}", "{d}/in.conllu"], status=0,
         files={"in.conllu": "\ufeff" + GOOD}, check=parses_two_sentences("-")),
    Case("parse-comment-after-last-sentence", ["parse", "{m}", "{d}/in.conllu"], status=0,
         files={"in.conllu": GOOD + "# the end\n"}, check=parses_two_sentences("-")),
    Case("parse-format-conllu-on-malttab", ["parse", "{m}", "{d}/in.tab", "--format", "conllu"],
         ["{d}/in.tab:1"], files={"in.tab": "The\tDT\t2\tdet\ndog\tNN\t0\troot\n\n"}),
    # --- eval and oracle: gold that is not a tree, misaligned files, zero items ---------------
    Case("eval-gold-cycle", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"],
         ["{d}/gold.conllu:1", "cycle"], files={"gold.conllu": CYCLE, "sys.conllu": GOOD}),
    Case("eval-gold-self-loop", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"],
         ["{d}/gold.conllu:1"], files={"gold.conllu": SELF_LOOP, "sys.conllu": GOOD}),
    Case("eval-gold-no-root", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"],
         ["{d}/gold.conllu:7"], files={"gold.conllu": NO_ROOT, "sys.conllu": GOOD}),
    Case("eval-gold-two-roots-conllu", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"],
         ["{d}/gold.conllu:7"], files={"gold.conllu": TWO_ROOTS, "sys.conllu": GOOD}),
    Case("eval-system-fewer-sentences", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"],
         ["{d}/sys.conllu", "{d}/gold.conllu"],
         files={"gold.conllu": GOOD, "sys.conllu": GOOD.split("\n\n")[0] + "\n\n"}),
    Case("eval-system-other-word", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"],
         ["{d}/sys.conllu:8", "{d}/gold.conllu:8"],
         files={"gold.conllu": GOOD, "sys.conllu": with_line(8, "Cats\tcat", "Dogs\tcat")}),
    Case("eval-system-empty", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"], ["{d}/gold.conllu"],
         files={"gold.conllu": GOOD, "sys.conllu": ""}),
    Case("eval-encoding-bogus", ["eval", "{d}/g.conllu", "{d}/g.conllu", "--encoding", "bogus"],
         ["bogus"], files={"g.conllu": GOOD}),
    Case("eval-byte-order-mark", ["eval", "{d}/gold.conllu", "{d}/sys.conllu"], status=0,
         files={"gold.conllu": "\ufeff" + GOOD, "sys.conllu": GOOD},
         check=lambda d, r: _has(r.stdout, b"100.00")),
    # (a system without tags: the tag scores, over every word, are n/a too)
    Case("eval-zero-scored-tokens", ["eval", "{d}/p.conllu", "{d}/s.conllu", "--punct", "conll",
                                     "--detail"], status=0,
         files={"p.conllu": ALL_PUNCT, "s.conllu": ALL_PUNCT.replace(".\tPUNCT\t.", "_\t_\t_")
                .replace(",\tPUNCT\t,", "_\t_\t_")},
         # the scores --punct governs: the content-word scores count every word
         check=lambda d, r: (_has(_punct_scored(r.stdout), b"n/a"),
                             _lacks(_punct_scored(r.stdout), b"100.00"),
                             _lacks(_punct_scored(r.stdout), b"0.00"),
                             _has(r.stdout, b"CLAS  100.00"))),
    Case("eval-zero-scored-tokens-json", ["eval", "{d}/p.conllu", "{d}/p.conllu", "--punct",
                                          "conll", "--json"], status=0,
         files={"p.conllu": ALL_PUNCT}, check=lambda d, r: _has(r.stdout, b'"uas": null')),
    Case("oracle-gold-cycle", ["oracle", "{d}/gold.conllu", "{d}/a.conllu", "{d}/b.conllu"],
         ["{d}/gold.conllu:1"], files={"gold.conllu": CYCLE, "a.conllu": GOOD,
                                       "b.conllu": GOOD}),
    Case("oracle-one-system", ["oracle", "{d}/gold.conllu", "{d}/a.conllu"], ["two"],
         files={"gold.conllu": GOOD, "a.conllu": GOOD}),
    Case("oracle-zero-scored-tokens", ["oracle", "{d}/p.conllu", "{d}/p.conllu", "{d}/p.conllu",
                                       "--punct", "conll"], status=0,
         files={"p.conllu": ALL_PUNCT}, check=lambda d, r: _has(r.stdout, b"| n/a |")),
    # --- prune ------------------------------------------------------------------------------
    Case("prune-learn-gold-self-loop", ["prune", "learn", "{d}/t.conllu", "-o", "{d}/d.json"],
         ["{d}/t.conllu:1"], files={"t.conllu": SELF_LOOP}),
    Case("prune-learn-empty-treebank", ["prune", "learn", "{d}/t.conllu", "-o", "{d}/d.json"],
         ["{d}/t.conllu"], files={"t.conllu": ""}),
    Case("prune-learn-output-dir-missing", ["prune", "learn", "{d}/t.conllu", "-o",
                                            "{d}/no/dir/d.json"], ["{d}/no/dir/d.json"],
         files={"t.conllu": GOOD}),
    Case("prune-eval-not-a-dictionary", ["prune", "eval", "{d}/t.conllu", "--dictionary",
                                         "{d}/d.json"], ["{d}/d.json"],
         files={"t.conllu": GOOD, "d.json": '{"kind": "something else"}\n'}),
    Case("prune-eval-two-pruners", ["prune", "eval", "{d}/t.conllu", "--dictionary", "{d}/d.json",
                                    "--model", "{m}"], ["--dictionary", "--model"],
         files={"t.conllu": GOOD, "d.json": "{}\n"}),
    Case("prune-eval-empty-treebank", ["prune", "eval", "{d}/t.conllu", "--model", "{m}"],
         status=0, files={"t.conllu": ""},
         check=lambda d, r: (_has(r.stdout, b"n/a"), _lacks(r.stdout, b"100.00"))),
    # --- ensemble ---------------------------------------------------------------------------
    Case("ensemble-encoding-bogus", ["ensemble", "{m}", "{d}/in.conllu", "--other",
                                     "{d}/in.conllu", "--encoding", "bogus"], ["bogus"],
         files={"in.conllu": GOOD}),
    Case("ensemble-other-cycle", ["ensemble", "{m}", "{d}/in.conllu", "--other", "{d}/o.conllu"],
         ["{d}/o.conllu:1"], files={"in.conllu": GOOD, "o.conllu": CYCLE}),
    Case("ensemble-other-fewer-sentences", ["ensemble", "{m}", "{d}/in.conllu", "--other",
                                            "{d}/o.conllu"], ["{d}/o.conllu"],
         files={"in.conllu": GOOD, "o.conllu": GOOD.split("\n\n")[0] + "\n\n"}),
    Case("ensemble-set-training-only-key", ["ensemble", "{m}", "{d}/in.conllu", "--other",
                                            "{d}/in.conllu", "--set", "training.C=1"],
         ["training.C"], files={"in.conllu": GOOD}),
]


def _same_inode(a: Path, b: Path) -> None:
    assert os.stat(a).st_ino == os.stat(b).st_ino and os.stat(a).st_nlink == 2


def _mode_is(path: Path, mode: int) -> None:
    assert stat.S_IMODE(os.stat(path).st_mode) == mode, oct(os.stat(path).st_mode)


def _empty(data: bytes) -> None:
    assert data == b"", data


def _has(data: bytes, part: bytes) -> None:
    assert part in data, data.decode()


def _lacks(data: bytes, part: bytes) -> None:
    assert part not in data, data.decode()


def _punct_scored(report: bytes) -> bytes:
    """The part of eval's text report before its CoNLL 2018 content-word scores."""
    return report.split(b"CoNLL 2018 content-word scores")[0]


def _fill(text: str, d: Path, m: Path) -> str:
    return text.replace("{d}", str(d)).replace("{m}", str(m))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, model: Path) -> None:
    d = tmp_path / "case"
    d.mkdir()
    for name, content in case.files.items():
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    if case.prepare is not None:
        case.prepare(d, model)
    before = snapshot(d, model)
    result = dparse(*[_fill(a, d, model) for a in case.args], stdin=case.stdin, cwd=tmp_path)
    err = assert_clean_failure(result, case.status)
    for part in case.mentions:
        assert _fill(part, d, model) in err, f"{part!r} not in the message: {err}"
    after = snapshot(d, model)
    written = {str(d / name) for name in case.writes}
    changed = sorted(p for p in before.keys() | after.keys()
                     if before.get(p) != after.get(p) and p not in written)
    # a new model directory may appear only on success
    assert not changed, f"changed, replaced, created or lost: {changed}"
    if case.check is not None:
        case.check(d, result)


def test_every_issue_17_case_is_in_the_battery() -> None:
    ids = {c.id for c in CASES}
    for needed in ("weights-truncated", "weights-empty", "vocab-truncated", "train-empty-file",
                   "train-empty-dev-file", "parse-output-is-a-directory", "parse-encoding-bogus",
                   "ensemble-encoding-bogus", "prune-learn-output-dir-missing",
                   "parse-output-symlink", "parse-output-hard-link", "parse-output-mode-600",
                   "eval-gold-cycle", "eval-gold-self-loop", "eval-gold-no-root",
                   "eval-gold-two-roots-conllu", "parse-head-0_1", "parse-byte-order-mark",
                   "parse-gzip-on-stdin", "parse-empty-stdin",
                   "parse-comment-after-last-sentence", "prune-learn-empty-treebank",
                   "eval-zero-scored-tokens", "parse-set-training-only-key",
                   "parse-decoder-the-model-rejects"):
        assert needed in ids, needed


def test_output_to_a_character_device_is_written_in_place(tmp_path: Path, model: Path) -> None:
    """``-o /dev/null`` must not replace the device: tried on a null device made here (as
    root), so that a regression cannot turn the machine's /dev/null into a file."""
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("cannot make a device node here (not root)")
    (tmp_path / "in.conllu").write_text(GOOD)
    before = snapshot(tmp_path, model)
    result = dparse("parse", str(model), str(tmp_path / "in.conllu"), "-o", str(node))
    assert_clean_failure(result, 0)
    assert snapshot(tmp_path, model) == before
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_output_to_a_fifo_is_written_in_place(tmp_path: Path, model: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "in.conllu").write_text(GOOD)
    received: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as f:
            received.append(f.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    before = snapshot(tmp_path, model)
    result = dparse("parse", str(model), str(tmp_path / "in.conllu"), "-o", str(fifo))
    thread.join(TIMEOUT)
    assert_clean_failure(result, 0)
    assert snapshot(tmp_path, model) == before and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and received[0].count(b"\n\n") == 2


def test_closed_stdout_pipe_ends_quietly(model: Path) -> None:
    """``dparse parse ... | head -1``: no message, no traceback, exit 141 (128 + SIGPIPE)."""
    dev = DATA / "en_ewt" / "dev.conllu"  # far more output than a pipe holds
    proc = subprocess.Popen([sys.executable, "-m", "dparse", "parse", str(model), str(dev)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(TIMEOUT) == 141
    assert err == b"", err.decode()


def test_closed_stdout_pipe_after_a_short_output_ends_quietly(tmp_path: Path) -> None:
    """The whole output fits in the pipe and is flushed at exit, after the reader is gone."""
    (tmp_path / "g.conllu").write_text(GOOD)
    proc = subprocess.Popen([sys.executable, "-m", "dparse", "eval", str(tmp_path / "g.conllu"),
                             str(tmp_path / "g.conllu")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    proc.stdout.close()  # before dparse writes anything
    err = proc.stderr.read()
    assert proc.wait(TIMEOUT) in (0, 141)  # 0 if it wrote before the close took effect
    assert b"Traceback" not in err and b"Exception ignored" not in err and err == b"", err


def test_interrupt_ends_with_130_and_no_traceback(model: Path) -> None:
    """Ctrl-C while ``parse`` waits for stdin: "interrupted", exit 130 (128 + SIGINT)."""
    wchan = Path("/proc/self/wchan")
    if not wchan.exists():
        pytest.skip("no /proc/PID/wchan to see the process wait for its input")
    proc = subprocess.Popen([sys.executable, "-m", "dparse", "parse", str(model)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + TIMEOUT
        state = Path(f"/proc/{proc.pid}/wchan")
        while "pipe_read" not in state.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        if "pipe_read" not in state.read_text():
            pytest.skip("could not see the process wait for its input")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err and b"interrupted" in err, err.decode()
