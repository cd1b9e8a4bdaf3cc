"""The public Python API (``dparse.load``, ``Parser``, ``load_tagger``, ``Tagger``, ``read``,
``write``, ``evaluate``, ``train``): the same bytes and numbers as the command line, errors as
DparseError subclasses without exiting or printing, threads taking turns, overrides as a
mapping or as strings, a cheap ``import dparse``, a documented example for every public name,
and the README's "From Python" examples run as written."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import threading
from itertools import islice
from pathlib import Path

import pytest
from conftest import DATA
from paths import REPO

import dparse
from dparse.conll import read_treebank, write_conll


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                            text=True, timeout=300, cwd=cwd,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def model(tiny_first_order: Path) -> Path:
    return tiny_first_order / "model"


@pytest.fixture(scope="module")
def test_file(tiny_first_order: Path) -> Path:
    """The first 150 sentences of en_ewt test: multiword tokens and comments included."""
    path = tiny_first_order.parent / "api-test.conllu"
    if not path.exists():
        write_conll(islice(dparse.read(DATA / "en_ewt" / "test.conllu"), 150), path)
    return path


@pytest.fixture(scope="module")
def cli_parse(model: Path, test_file: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("cli") / "parsed.conllu"
    run_cli("parse", str(model), str(test_file), "-o", str(out))
    return out.read_bytes()


@pytest.fixture(scope="module")
def tagger_model(tiny_first_order: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tagger (configs/en_ewt/tagger.yaml, one epoch) trained on the tiny model's files."""
    return dparse.train(REPO / "configs" / "en_ewt" / "tagger.yaml",
                        tmp_path_factory.mktemp("api-tagger") / "model",
                        {"data.train": "train.conllu", "data.dev": "dev.conllu",
                         "training.epochs": 1}, data_root=tiny_first_order).path


def test_import_is_cheap_and_loads_neither_click_nor_matplotlib() -> None:
    code = ("import sys, time; t = time.perf_counter(); import dparse; "
            "print(time.perf_counter() - t, 'click' in sys.modules, "
            "'matplotlib' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout.split()
    assert float(out[0]) < 0.3 and out[1:] == ["False", "False", "False"]


@pytest.mark.parametrize("name", dparse.__all__)
def test_every_public_name_has_a_docstring_with_an_example(name: str) -> None:
    if name == "__version__":
        return
    obj = getattr(dparse, name)
    doc = inspect.getdoc(obj) or ""
    assert "Example" in doc or ">>>" in doc, name
    if not inspect.isclass(obj) or obj.__module__ != "dparse.api":
        return
    for member_name, member in inspect.getmembers(obj):  # the API's own classes' methods
        if not member_name.startswith("_") and inspect.isfunction(member) \
                and member.__qualname__.startswith(f"{obj.__name__}."):
            assert "Example" in (inspect.getdoc(member) or ""), f"{name}.{member_name}"


def test_parse_file_and_parse_many_equal_dparse_parse(model: Path, test_file: Path,
                                                      cli_parse: bytes, tmp_path: Path) -> None:
    parser = dparse.load(model)
    stats = parser.parse_file(test_file, tmp_path / "one.conllu")
    assert (tmp_path / "one.conllu").read_bytes() == cli_parse
    assert stats.timer.sentences == 150 and stats.decoder == "cle" and stats.jobs == 1
    parser.parse_file(test_file, tmp_path / "two.conllu", jobs=2, batch_size=16)
    assert (tmp_path / "two.conllu").read_bytes() == cli_parse
    for jobs in (1, 2):
        text = "".join(s.to_conllu() for s in parser.parse_many(dparse.read(test_file),
                                                                jobs=jobs, batch_size=20))
        assert text.encode() == cli_parse, jobs
    dparse.write(parser.parse_many(dparse.read(test_file)), tmp_path / "w.conllu")
    assert (tmp_path / "w.conllu").read_bytes() == cli_parse


@pytest.mark.parametrize("options", [[], ["--tags", "predict", "--jobs", "2"]])
def test_tag_file_and_tag_many_equal_dparse_tag(tagger_model: Path, test_file: Path,
                                                options: list[str], tmp_path: Path) -> None:
    run_cli("tag", str(tagger_model), str(test_file), "-o", str(tmp_path / "cli.conllu"),
            *options)
    cli = (tmp_path / "cli.conllu").read_bytes()
    tags, jobs = ("predict", 2) if options else ("auto", 1)
    tagger = dparse.load_tagger(tagger_model, tags=tags)
    stats = tagger.tag_file(test_file, tmp_path / "api.conllu", jobs, batch_size=32)
    assert (tmp_path / "api.conllu").read_bytes() == cli
    assert stats.timer.sentences == 150 and stats.decoder is None and stats.jobs == jobs
    text = "".join(s.to_conllu() for s in tagger.tag_many(dparse.read(test_file), jobs=jobs))
    assert text.encode() == cli
    sentence = next(dparse.read(test_file))
    assert tagger.tag(sentence).to_conllu() == next(tagger.tag_many([sentence])).to_conllu()
    words = tagger.tag(sentence.words)
    assert words.words == sentence.words and len(words.upos) == len(sentence)
    assert "_" not in words.upos


def test_load_and_load_tagger_refuse_what_they_cannot_use(tagger_model: Path,
                                                          model: Path) -> None:
    with pytest.raises(dparse.ConfigError, match="is a tagger .* not a parser"):
        dparse.load(tagger_model)
    with pytest.raises(dparse.DparseError, match="carries no tagger"):
        dparse.load_tagger(model)
    with pytest.raises(dparse.ConfigError, match="--set training.epochs does not apply"):
        dparse.load(model, overrides={"training.epochs": 3})
    with pytest.raises(dparse.ConfigError, match="--set tagging.lexicon does not apply"):
        dparse.load_tagger(tagger_model, overrides=["tagging.lexicon=false"])


def test_load_takes_overrides_as_a_mapping_or_as_strings(model: Path, test_file: Path
                                                         ) -> None:
    words = [s.words for s in islice(dparse.read(test_file), 20)]
    by_map = dparse.load(model, overrides={"decoder.name": "eisner"})
    by_text = dparse.load(model, overrides=["decoder.name=eisner"])
    assert by_map.decoder == by_text.decoder == "eisner"
    assert [s.heads.tolist() for s in by_map.parse_many(words)] == \
        [s.heads.tolist() for s in by_text.parse_many(words)]


def test_parse_words_and_word_tag_pairs(model: Path, test_file: Path) -> None:
    parser = dparse.load(model)
    gold = read_treebank(test_file)[:30]
    for sent in gold:
        expected = next(parser.parse_many([sent.words_only()]))
        got = parser.parse(sent.words)
        assert got.words == sent.words and got.heads.tolist() == expected.heads.tolist()
        assert got.deprels == expected.deprels
        tagged = parser.parse(list(zip(sent.words, sent.upos, strict=True)))
        assert tagged.upos == sent.upos == tagged.xpos
    assert [s.heads.tolist() for s in parser.parse_many(s.words for s in gold)] == \
        [parser.parse(s.words).heads.tolist() for s in gold]


def test_threads_take_turns_and_get_the_same_parses(model: Path, test_file: Path) -> None:
    parser = dparse.load(model)
    sentences = [s.words for s in read_treebank(test_file)]
    expected = [parser.parse(w).heads.tolist() for w in sentences]
    results: dict[int, list] = {}

    def work(k: int) -> None:
        if k % 2:
            results[k] = [s.heads.tolist() for s in parser.parse_many(sentences)]
        else:
            results[k] = [parser.parse(w).heads.tolist() for w in sentences]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[k] == expected for k in range(4))


@pytest.mark.parametrize("options", [[], ["--punct", "upos", "--detail"]])
def test_evaluate_equals_eval_json_on_every_key(options: list[str], test_file: Path,
                                                cli_parse: bytes, tmp_path: Path) -> None:
    system = tmp_path / "system.conllu"
    system.write_bytes(cli_parse)
    cli = json.loads(run_cli("eval", str(test_file), str(system), "--json", *options).stdout)
    punct = options[1] if options else "include"
    result = dparse.evaluate(test_file, system, punct, detail=bool(options))
    api = json.loads(json.dumps(result.as_dict()))
    assert api.keys() == cli.keys()
    for key in cli:
        assert api[key] == cli[key], key
    assert result.las == cli["las"] and result.uas == cli["uas"] and result.upos == cli["upos"]
    # sentences in memory score as their file does
    again = dparse.evaluate(list(dparse.read(test_file)), list(dparse.read(system)), punct,
                            detail=bool(options))
    assert again.las == result.las and again.tag_report == result.tag_report


def test_evaluate_a_tagger_output_without_heads(test_file: Path, tmp_path: Path) -> None:
    words = tmp_path / "tags.conllu"
    write_conll((s.with_parse([-1] * (len(s) + 1), ["_"] * (len(s) + 1))
                 for s in dparse.read(test_file)), words)
    cli = json.loads(run_cli("eval", str(test_file), str(words), "--json").stdout)
    result = dparse.evaluate(test_file, words)
    assert not result.system_heads and result.las is None and result.upos == 100.0
    assert json.loads(json.dumps(result.as_dict())) == cli
    with pytest.raises(dparse.DparseError, match="no heads"):
        dparse.evaluate(test_file, words, other=test_file)


def test_errors_are_dparse_errors_and_nothing_is_printed(model: Path, test_file: Path,
                                                         tmp_path: Path, capfd) -> None:
    parser = dparse.load(model)
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tA\t_\tX\tX\t_\tx\troot\t_\t_\n", encoding="utf-8")
    cases = [
        (lambda: dparse.load(tmp_path / "missing"), dparse.DparseError),
        (lambda: dparse.load(model, decoder="no-such-decoder"), dparse.DparseError),
        (lambda: parser.parse("not a list"), dparse.InputError),
        (lambda: parser.parse([]), dparse.InputError),
        (lambda: parser.parse(["a\tb"]), dparse.InputError),
        (lambda: list(parser.parse_many([["fine"], [""]])), dparse.InputError),
        (lambda: parser.parse_file(bad, tmp_path / "out.conllu"), dparse.InputError),
        (lambda: parser.parse_file(test_file, tmp_path / "o.conllu", jobs=0), dparse.DparseError),
        (lambda: list(dparse.read(bad)), dparse.InputError),
        (lambda: dparse.evaluate(test_file, bad), dparse.InputError),
        (lambda: dparse.train(tmp_path / "none.yaml", tmp_path / "m"), dparse.ConfigError),
        (lambda: dparse.train(REPO / "configs" / "en_ewt" / "o1-cle.yaml", tmp_path / "m",
                              {"training.epochs": "many"}), dparse.ConfigError),
    ]
    for call, kind in cases:
        with pytest.raises(kind):
            call()
    assert not (tmp_path / "out.conllu").exists()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_train_equals_dparse_train_and_takes_overrides(tiny_first_order: Path,
                                                       tmp_path: Path, capfd) -> None:
    root = tiny_first_order
    config = tmp_path / "small.yaml"
    config.write_text("name: small\ndata: {train: train.conllu, dev: dev.conllu}\n"
                      "features: {arc_bits: 16, label_bits: 10}\n", encoding="utf-8")
    trained = dparse.train(config, tmp_path / "api", {"training.epochs": 1, "data.dev": None},
                           data_root=root)
    assert trained.path == tmp_path / "api" and trained.best_epoch == 1
    assert capfd.readouterr() == ("", "")
    run_cli("train", str(config), "--out", str(tmp_path / "cli"), "--set", "training.epochs=1",
            "--set", "data.dev=null", "--data-root", str(root), "-q")
    names = sorted(p.name for p in (tmp_path / "api").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "cli").iterdir())
    for name in names:
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert dparse.load(trained.path).parse(["It", "works", "."]).heads[0] == -1


def readme_python_blocks() -> list[str]:
    """The Python code blocks of the README's "From Python" section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_from_python_examples_run(model: Path, tagger_model: Path, tmp_path: Path,
                                         monkeypatch) -> None:
    """The examples run from a project root whose ``models/en_ewt-o1-cle`` is the tiny
    model, whose ``models/en_ewt-o1-cle-tagged`` is a tiny tagger standing in for the pipeline
    model (both give their tagger to ``load_tagger``), and whose ``../shared/data`` is a
    miniature of the data root."""
    blocks = [b for b in readme_python_blocks()  # raw text: tests/test_api_tokenizer.py
              if "spacy" not in b and "load_tokenizer" not in b]
    assert len(blocks) >= 3
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "models" / "en_ewt-o1-cle").symlink_to(model)
    (project / "models" / "en_ewt-o1-cle-tagged").symlink_to(tagger_model)
    (project / "configs").symlink_to(REPO / "configs")
    data = tmp_path / "shared" / "data" / "en_ewt"
    data.mkdir(parents=True)
    for name, count in (("train.conllu", 60), ("dev.conllu", 20), ("test.conllu", 40)):
        write_conll(islice(dparse.read(DATA / "en_ewt" / name), count), data / name)
    monkeypatch.chdir(project)
    monkeypatch.setenv("DPARSE_DATA", str(tmp_path / "shared" / "data"))
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own code
