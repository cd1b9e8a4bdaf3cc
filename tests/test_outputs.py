"""dparse.outputs: regular files replaced atomically with their permissions, everything else
(devices, FIFOs, symlink targets, hard-linked files, stdout) written in place; nothing left
behind by an error, SIGINT or SIGTERM; clear errors naming the path."""

from __future__ import annotations

import errno
import gzip
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dparse.errors import DparseError
from dparse.outputs import open_output, write_bytes, write_text

NOBODY = 65534


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_regular_file_replaced_keeping_mode_600(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    out.chmod(0o600)
    before = out.stat()
    write_text(out, "new\n")
    after = out.stat()
    assert out.read_text() == "new\n"
    assert stat.S_IMODE(after.st_mode) == 0o600 and after.st_ino != before.st_ino
    assert _names(tmp_path) == ["out.txt"]


def test_new_file_gets_the_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_and_group_kept(tmp_path: Path) -> None:
    out = tmp_path / "owned.txt"
    out.write_text("old")
    os.chown(out, NOBODY, NOBODY)
    out.chmod(0o640)
    write_text(out, "new")
    st = out.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (NOBODY, NOBODY, 0o640)


def test_symlink_kept_and_its_target_written(tmp_path: Path) -> None:
    target = tmp_path / "real" / "target.txt"
    target.parent.mkdir()
    target.write_text("old")
    target.chmod(0o604)
    link = tmp_path / "link.txt"
    link.symlink_to(Path("real") / "target.txt")
    write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == "real/target.txt"
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o604
    assert _names(target.parent) == ["target.txt"] and _names(tmp_path) == ["link.txt", "real"]
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "real" / "created.txt")
    write_text(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "real" / "created.txt").read_text() == "made"


def test_fifo_written_in_place_for_its_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as f:
            received.append(f.read())

    reader = threading.Thread(target=read)
    reader.start()
    text = "line\n" * 50_000  # more than a pipe buffer: the reader must be reading meanwhile
    write_text(fifo, text)
    reader.join(timeout=30)
    assert not reader.is_alive() and received == [text.encode()]
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and _names(tmp_path) == ["pipe"]


def test_dev_null_stays_a_character_device() -> None:
    before = os.stat("/dev/null")
    write_text("/dev/null", "discarded\n")
    write_bytes("/dev/null", b"\0" * 10)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev, after.st_mode) == (before.st_ino, before.st_rdev,
                                                             before.st_mode)


def test_dev_full_is_a_disk_full_error() -> None:
    with pytest.raises(DparseError, match="cannot write /dev/full: No space left on device"):
        write_text("/dev/full", "x" * 100_000)


def test_hard_link_kept(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old")
    os.link(a, b)
    write_text(a, "new")
    assert b.read_text() == "new" and a.stat().st_ino == b.stat().st_ino
    assert a.stat().st_nlink == 2 and _names(tmp_path) == ["a.txt", "b.txt"]
    with pytest.raises(RuntimeError), open_output(b) as out:  # an error before the copy
        out.write("partial")
        raise RuntimeError("crashed")
    assert a.read_text() == "new" and _names(tmp_path) == ["a.txt", "b.txt"]


def test_directory_and_missing_parent_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(DparseError, match=f"cannot write {tmp_path}: it is a directory"):
        write_text(tmp_path, "x")
    missing = tmp_path / "no" / "out.txt"
    with pytest.raises(DparseError, match=f"cannot write {missing}: directory .*no does not"):
        write_text(missing, "x")
    (tmp_path / "file").write_text("")
    with pytest.raises(DparseError, match="is not a directory"):
        write_text(tmp_path / "file" / "out.txt", "x")
    assert _names(tmp_path) == ["file"]


@contextmanager
def _unprivileged() -> Iterator[None]:
    """Run the block as nobody when we are root (root may write anything)."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_unwritable_directory_and_file_are_clear_errors() -> None:
    folder = Path(tempfile.mkdtemp(prefix="dparse-outputs-"))  # in /tmp: nobody can reach it
    try:
        folder.chmod(0o755)
        (folder / "old.txt").write_text("old")
        (folder / "old.txt").chmod(0o666)
        open_dir = folder / "open"
        open_dir.mkdir(mode=0o777)
        open_dir.chmod(0o777)
        (open_dir / "locked.txt").write_text("locked")
        (open_dir / "locked.txt").chmod(0o444)
        with _unprivileged():
            with pytest.raises(DparseError, match=f"cannot write {folder}/new.txt: Permission"):
                write_text(folder / "new.txt", "x")
            with pytest.raises(DparseError, match=f"cannot write {folder}/old.txt: Permission"):
                write_text(folder / "old.txt", "x")
            with pytest.raises(DparseError, match="locked.txt: permission denied"):
                write_text(open_dir / "locked.txt", "x")
        assert (folder / "old.txt").read_text() == "old"
        assert (open_dir / "locked.txt").read_text() == "locked"
        assert _names(folder) == ["old.txt", "open"] and _names(open_dir) == ["locked.txt"]
    finally:
        shutil.rmtree(folder)


def test_error_mid_write_leaves_the_original_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    with pytest.raises(RuntimeError, match="crashed"), open_output(out) as f:
        f.write("new\n" * 100_000)
        assert any(n.endswith(".tmp") for n in _names(tmp_path))  # the write was staged
        raise RuntimeError("crashed")
    assert out.read_text() == "old\n" and _names(tmp_path) == ["out.txt"]


def test_disk_full_while_finishing_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DparseError, match=f"cannot write {out}: No space left on device"):
        write_text(out, "new")
    assert out.read_text() == "old" and _names(tmp_path) == ["out.txt"]


def test_encoding_errors_name_the_path_and_change_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old")
    with pytest.raises(DparseError, match="unknown encoding 'bogus'"):
        write_text(out, "x", encoding="bogus")
    with pytest.raises(DparseError, match=f"cannot write {out}: '\u2192' cannot be encoded"):
        write_text(out, "a \u2192 b", encoding="latin-1")
    assert out.read_text() == "old" and _names(tmp_path) == ["out.txt"]
    write_text(out, "caf\u00e9\r\n", encoding="latin-1")
    assert out.read_bytes() == b"caf\xe9\r\n"  # newlines as given


def test_gzip_by_suffix_with_reproducible_bytes(tmp_path: Path) -> None:
    write_text(tmp_path / "a.txt.gz", "same text\n")
    first = (tmp_path / "a.txt.gz").read_bytes()
    write_text(tmp_path / "b.txt.gz", "same text\n")
    assert gzip.decompress(first) == b"same text\n"
    assert (tmp_path / "b.txt.gz").read_bytes() == first  # no name, no time in the header


def test_stdout(capfdbinary: pytest.CaptureFixture) -> None:
    write_text("-", "caf\u00e9\n", encoding="latin-1")
    write_text(None, "b\n")
    write_bytes("-", b"\x00\x01")
    assert capfdbinary.readouterr().out == b"caf\xe9\nb\n\x00\x01"


def test_dev_stdout_is_written_in_place(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("earlier\n")
    inode = log.stat().st_ino
    code = "from dparse.outputs import write_text; write_text('/dev/stdout', 'new\\n')"
    with open(log, "ab") as appending:  # as the shell opens ``>> log.txt``
        subprocess.run([sys.executable, "-c", code], stdout=appending, check=True)
    assert log.read_text() == "earlier\nnew\n" and log.stat().st_ino == inode
    piped = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert piped.stdout == b"new\n"
    assert _names(tmp_path) == ["log.txt"]


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / f".out.txt.dparse-{dead}-abc123.tmp"
    live = tmp_path / f".out.txt.dparse-{os.getpid()}-xyz789.tmp"
    other = tmp_path / ".other.txt.dparse-1-abc.tmp"
    for p in (stale, live, other):
        p.write_text("leftover")
    write_text(tmp_path / "out.txt", "new")
    assert _names(tmp_path) == sorted([live.name, other.name, "out.txt"])


def test_signal_handlers_restored_after_a_write(tmp_path: Path) -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    write_text(tmp_path / "x", "x")
    with pytest.raises(RuntimeError), open_output(tmp_path / "y"):
        raise RuntimeError
    assert {s: signal.getsignal(s) for s in before} == before


CHILD = textwrap.dedent("""
    import signal, sys, time
    from dparse.outputs import open_output
    if sys.argv[2] == "handler":
        def handler(signum, frame):
            print("own handler ran", flush=True)
            sys.exit(3)
        signal.signal(signal.SIGTERM, handler)
    try:
        with open_output(sys.argv[1]) as out:
            out.write("new content\\n" * 100_000)
            out.flush()
            print("writing", flush=True)
            time.sleep(60)
    except KeyboardInterrupt:
        sys.exit(130)
""")


def test_signal_caught_inside_a_finalizer_still_stops_the_write(tmp_path: Path) -> None:
    """Python drops an exception raised in a finalizer; the signal is not lost for that."""
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    code = textwrap.dedent("""
        import os, signal, sys, time
        from dparse.outputs import open_output

        class Finalized:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.1)  # the signal's handler runs in here

        with open_output(sys.argv[1]) as out:
            out.write("new\\n")
            Finalized()
            print("went on", flush=True)
        print("finished", flush=True)
    """)
    run = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert run.returncode == -signal.SIGTERM and run.stdout == "went on\n"
    assert run.stderr == ""  # no "Exception ignored in ..."
    assert out.read_text() == "old\n" and _names(tmp_path) == ["out.txt"]


def test_error_of_cleanup_code_hit_by_the_signal_is_the_signal(tmp_path: Path) -> None:
    """Cleanup code that the signal interrupts half-way (shutil.rmtree between closing a
    descriptor and noting it) can raise an error of its own in place of the signal: the
    process still ends by the signal, the output untouched, no error reported."""
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    code = textwrap.dedent("""
        import errno, os, signal, sys, time
        from dparse.outputs import open_output

        with open_output(sys.argv[1]) as out:
            out.write("new\\n")
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # the signal's handler raises in here
            finally:
                raise OSError(errno.EBADF, "Bad file descriptor")  # closed twice
        print("finished", flush=True)
    """)
    run = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert run.returncode == -signal.SIGTERM and run.stdout == "" and run.stderr == ""
    assert out.read_text() == "old\n" and _names(tmp_path) == ["out.txt"]


@pytest.mark.parametrize(("signum", "mode", "status"), [
    (signal.SIGTERM, "default", -signal.SIGTERM),  # dies by the signal, as without us
    (signal.SIGINT, "default", 130),  # KeyboardInterrupt
    (signal.SIGTERM, "handler", 3),  # the program's own handler runs after the cleanup
])
def test_signal_mid_write_leaves_the_original_and_no_temporary(
    tmp_path: Path, signum: int, mode: str, status: int
) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out), mode],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline() == "writing\n"
    assert any(n.endswith(".tmp") for n in _names(tmp_path))
    child.send_signal(signum)
    assert child.wait(timeout=30) == status
    child.stdout.close()
    assert out.read_text() == "old\n" and _names(tmp_path) == ["out.txt"]
