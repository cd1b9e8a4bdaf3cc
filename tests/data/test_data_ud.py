"""UD download (fake opener, local HTTP server, file URL), checksums, safe unpacking, conversion."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA

from dparse.cli.data import data as data_cli
from dparse.conll import read_conll
from dparse.data import ud
from dparse.errors import DparseError

CONLLU = """# sent_id = 1
# text = Don't go.
1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\t_\tPolarity=Neg\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No
3.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t3:conj\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t3:punct\t_

"""
CONLLX = """1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_
2\tn't\tnot\tPART\tPART\tPolarity=Neg\t3\tadvmod\t_\t_
3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_

"""


def make_tar(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return buffer.getvalue()


def treebank_tar(top: str = "UD_Xx-Test-r2.13/") -> bytes:
    return make_tar({
        **{f"{top}xx_test-ud-{s}.conllu": CONLLU.encode() for s in ud.SPLITS},
        f"{top}LICENSE.txt": b"CC BY-SA 4.0\n",
        f"{top}README.md": b"# test treebank\n",
    })


def fake_opener(payload: bytes, seen: list[str]) -> ud.Opener:
    def opener(url: str) -> io.BytesIO:
        seen.append(url)
        return io.BytesIO(payload)
    return opener


def sha(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def test_ud_treebank_download_verified_and_installed(tmp_path: Path) -> None:
    payload, seen = treebank_tar(), []
    archive = ud.treebank_archive("UD_Xx-Test", "2.13")
    targets = ud.fetch(archive, tmp_path, sha(payload), opener=fake_opener(payload, seen),
                       progress=False)
    assert seen == ["https://github.com/UniversalDependencies/UD_Xx-Test/archive/refs/tags/"
                    "r2.13.tar.gz"]
    assert targets == [tmp_path / "xx_test"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xx_test"]
    names = sorted(p.name for p in targets[0].iterdir())
    assert names == ["LICENSE.txt", "README.md", "VERSION", "dev.conllu", "test.conllu",
                     "train.conllu"]
    assert (targets[0] / "train.conllu").read_text() == CONLLU
    assert sha(payload) in (targets[0] / "VERSION").read_text()


def test_ud_wrong_checksum_rejected_and_nothing_left(tmp_path: Path) -> None:
    payload = treebank_tar()
    archive = ud.treebank_archive("UD_Xx-Test", "r2.13")
    with pytest.raises(DparseError, match="checksum mismatch.*nothing was unpacked"):
        ud.fetch(archive, tmp_path, "0" * 64, opener=fake_opener(payload, []), progress=False)
    assert list(tmp_path.iterdir()) == []


def test_ud_unknown_checksum_warns_or_is_refused_when_strict(tmp_path: Path) -> None:
    payload, warnings = treebank_tar(), []
    archive = ud.treebank_archive("UD_Xx-Test", "r2.13")
    with pytest.raises(DparseError, match="refused"):
        ud.fetch(archive, tmp_path, opener=fake_opener(payload, []), strict=True, progress=False)
    assert list(tmp_path.iterdir()) == []
    ud.fetch(archive, tmp_path, opener=fake_opener(payload, []), progress=False,
             warn=warnings.append)
    assert len(warnings) == 1 and sha(payload) in warnings[0]


@pytest.mark.parametrize("name", ["../evil.conllu", "/tmp/evil.conllu", "a/../../evil.conllu"])
def test_ud_path_traversal_refused(tmp_path: Path, name: str) -> None:
    payload = make_tar({"UD_Xx-Test-r2.13/xx_test-ud-train.conllu": CONLLU.encode(),
                        name: b"boom"})
    dest = tmp_path / "dest"
    with pytest.raises(DparseError, match="unsafe path"):
        ud.fetch(ud.treebank_archive("UD_Xx-Test", "r2.13"), dest, sha(payload),
                 opener=fake_opener(payload, []), progress=False)
    assert list(dest.iterdir()) == []
    assert not (tmp_path / "evil.conllu").exists()


def test_ud_symlink_member_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        link = tarfile.TarInfo("UD_Xx-Test-r2.13/xx_test-ud-train.conllu")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    payload = buffer.getvalue()
    with pytest.raises(DparseError, match="not a regular file"):
        ud.fetch(ud.treebank_archive("UD_Xx-Test", "r2.13"), tmp_path, sha(payload),
                 opener=fake_opener(payload, []), progress=False)
    assert list(tmp_path.iterdir()) == []


def test_ud_release_selects_treebanks(tmp_path: Path) -> None:
    payload = make_tar({
        "ud-treebanks-v2.13/UD_Xx-Test/xx_test-ud-test.conllu": CONLLU.encode(),
        "ud-treebanks-v2.13/UD_Yy-Other/yy_other-ud-test.conllu": CONLLU.encode(),
    })
    seen: list[str] = []
    archive = ud.release_archive("r2.13")
    targets = ud.fetch(archive, tmp_path, sha(payload), ["UD_Yy-Other"],
                       opener=fake_opener(payload, seen), progress=False)
    assert seen[0].endswith("/11234/1-5287/ud-treebanks-v2.13.tgz")
    assert targets == [tmp_path / "yy_other"]
    with pytest.raises(DparseError, match="no treebank files found for UD_Zz-None"):
        ud.fetch(archive, tmp_path, sha(payload), ["UD_Zz-None"],
                 opener=fake_opener(payload, []), progress=False)
    with pytest.raises(DparseError, match="pass --url"):
        ud.release_archive("r2.1")


def test_ud_bad_names_and_versions() -> None:
    with pytest.raises(DparseError, match="bad treebank name"):
        ud.treebank_archive("English-EWT", "r2.13")
    with pytest.raises(DparseError, match="bad UD version"):
        ud.treebank_archive("UD_English-EWT", "latest")


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A local HTTP server on 127.0.0.1 serving a directory."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


def test_ud_download_from_local_http_server(tmp_path: Path, http_root: tuple[str, Path]) -> None:
    base, root = http_root
    payload = treebank_tar()
    (root / "tb.tar.gz").write_bytes(payload)
    archive = ud.treebank_archive("UD_Xx-Test", "r2.13", url=f"{base}/tb.tar.gz")
    dest = tmp_path / "dest"
    targets = ud.fetch(archive, dest, sha(payload), keep_archive=True, progress=False)
    assert (targets[0] / "test.conllu").is_file()
    assert (dest / "UD_Xx-Test-r2.13.tar.gz").read_bytes() == payload
    with pytest.raises(DparseError, match="cannot download"):
        ud.fetch(ud.treebank_archive("UD_Xx-Test", "r2.13", url=f"{base}/missing.tar.gz"),
                 dest, progress=False)


def test_ud_download_cli_file_url_and_wrong_checksum(tmp_path: Path) -> None:
    payload = treebank_tar()
    source = tmp_path / "tb.tar.gz"
    source.write_bytes(payload)
    runner = CliRunner()
    dest = tmp_path / "data"
    args = ["ud-download", "r2.13", "UD_Xx-Test", "-d", str(dest), "--url", source.as_uri(), "-q"]
    result = runner.invoke(data_cli, [*args, "--sha256", "f" * 64])
    assert isinstance(result.exception, DparseError)
    assert not (dest / "xx_test").exists()
    result = runner.invoke(data_cli, [*args, "--sha256", sha(payload)])
    assert result.exit_code == 0, result.output
    assert (dest / "xx_test" / "dev.conllu").is_file()


def test_conllu_to_conllx_drops_comments_mwt_and_empty_nodes(tmp_path: Path) -> None:
    src, out = tmp_path / "a.conllu", tmp_path / "a.conll"
    src.write_text(CONLLU + CONLLU)
    assert ud.convert_file(src, out) == 2
    assert out.read_text() == CONLLX + CONLLX
    ud.convert_file(src, out, postag="upos")
    (first, _) = read_conll(out, fmt="conllx")
    assert first.xpos == first.upos == ["AUX", "PART", "VERB", "PUNCT"]


@pytest.mark.skipif(not (DATA / "el_gdt").is_dir(), reason="el_gdt not found")
def test_ud_to_conllx_cli_on_real_treebank(tmp_path: Path) -> None:
    out = tmp_path / "dev.conll"
    result = CliRunner().invoke(data_cli, ["ud-to-conllx", str(DATA / "el_gdt" / "dev.conllu"),
                                           "-o", str(out)])
    assert result.exit_code == 0, result.output
    gold = list(read_conll(DATA / "el_gdt" / "dev.conllu"))
    conv = list(read_conll(out, fmt="conllx"))
    assert len(conv) == len(gold) == 403
    assert all(g.form == c.form and (g.heads == c.heads).all() for g, c in zip(gold, conv,
                                                                                strict=True))
    assert not any(line.startswith("#") for line in out.read_text().splitlines())
