"""The spaCy component (dparse.spacy_component) with real spaCy 3.8: the heads and labels of
``dparse parse`` on Docs of en_ewt words, raw text through spacy.blank + sentencizer, tags from
a model that tags, nlp.pipe with several processes, to_disk / spacy.load, displaCy drawn in
headless Chromium, a Doc as CoNLL-U, and the factory found through the entry point alone."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from itertools import islice
from pathlib import Path

import pytest
from browser import screenshot
from conftest import DATA
from paths import REPO

import dparse
from dparse.conll import read_conll_block, read_treebank, write_conll

spacy = pytest.importorskip("spacy", minversion="3.8")
from spacy import displacy  # noqa: E402
from spacy.tokens import Doc  # noqa: E402

from dparse.spacy_component import doc_to_conllu  # noqa: E402

SENTENCES = 120  # of en_ewt test


@pytest.fixture(scope="module")
def model(tiny_first_order: Path) -> Path:
    return tiny_first_order / "model"


@pytest.fixture(scope="module")
def words(tiny_first_order: Path) -> list:
    """The first sentences of en_ewt test, their words alone (multiword tokens split)."""
    return [s.words_only() for s in islice(dparse.read(DATA / "en_ewt" / "test.conllu"),
                                           SENTENCES)]


@pytest.fixture(scope="module")
def cli_parse(model: Path, words: list, tmp_path_factory: pytest.TempPathFactory) -> list:
    """``dparse parse`` of those words: its sentences."""
    folder = tmp_path_factory.mktemp("spacy-cli")
    write_conll(words, folder / "words.conllu")
    subprocess.run([sys.executable, "-m", "dparse", "parse", str(model),
                    str(folder / "words.conllu"), "-o", str(folder / "parsed.conllu")],
                   check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    return read_treebank(folder / "parsed.conllu")


def blank_nlp(model: Path, **config: object):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("dparse", config={"model": str(model), **config})
    return nlp


def arcs(doc: Doc) -> list[tuple[int, str]]:
    """Each token's head (0 for a root, else its 1-based position in its sentence) and label,
    as CoNLL-U has them."""
    out = []
    for sent in doc.sents:
        out += [(0 if t.head.i == t.i else t.head.i - sent.start + 1, t.dep_) for t in sent]
    return out


def test_docs_of_words_get_the_heads_and_labels_of_dparse_parse(model: Path, words: list,
                                                                cli_parse: list) -> None:
    nlp = blank_nlp(model)
    docs = [Doc(nlp.vocab, words=s.words) for s in words]
    parsed = list(nlp.get_pipe("dparse").pipe(docs, batch_size=32))
    assert len(parsed) == len(cli_parse)
    for doc, sent in zip(parsed, cli_parse, strict=True):
        assert arcs(doc) == list(zip(sent.heads[1:].tolist(), sent.deprels[1:], strict=True))
        text = doc_to_conllu(doc)
        (back,) = read_conll_block(text.encode(), "<doc>", "conllu")
        assert back.words == sent.words and back.heads.tolist() == sent.heads.tolist()
        assert back.deprels == sent.deprels and doc._.conllu == text


def test_pipe_pauses_the_collector_only_while_it_parses(model: Path, words: list) -> None:
    import gc

    nlp = blank_nlp(model)
    component = nlp.get_pipe("dparse")
    seen = []
    for doc in component.pipe((Doc(nlp.vocab, words=s.words) for s in words[:5]), batch_size=2):
        seen.append((doc.has_annotation("DEP"), gc.isenabled()))  # between the batches
    assert seen == [(True, True)] * 5 and gc.isenabled()
    gc.disable()
    try:
        list(component.pipe([Doc(nlp.vocab, words=words[0].words)]))
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_raw_text_through_sentencizer_pipes_in_processes_and_draws(model: Path,
                                                                    tmp_path: Path) -> None:
    """A few en_ewt documents as raw text (their # text lines), with spaces and line breaks
    between sentences; nlp.pipe in two processes parses as one does; displaCy's page is a
    picture in headless Chromium."""
    sents = read_treebank(DATA / "en_ewt" / "test.conllu")[:40]
    texts, current = [], []
    for s in sents:
        if any(c.startswith("# newdoc") for c in s.comments) and current:
            texts.append("\n\n".join(current))
            current = []
        current.append(next(c for c in s.comments if c.startswith("# text = "))[9:])
    texts.append("  ".join(current))
    nlp = blank_nlp(model)
    one = list(nlp.pipe(texts, batch_size=2))
    two = list(nlp.pipe(texts, batch_size=2, n_process=2))
    assert [arcs(d) for d in one] == [arcs(d) for d in two]
    assert sum(len(list(d.sents)) for d in one) >= 30
    for doc in one:
        for sent in doc.sents:
            assert sum(t.head.i == t.i for t in sent if not t.is_space) == 1  # one root
        assert all(t.dep_ == "dep" for t in doc if t.is_space)
    page = tmp_path / "displacy.html"
    short = [sent for doc in one for sent in doc.sents if 5 <= len(sent) <= 10][:2]
    page.write_text(displacy.render(short, style="dep", page=True), encoding="utf-8")
    pixels = screenshot(tmp_path, page, 1400, 900)
    assert pixels.std() > 5 and (pixels < 128).mean() > 0.002  # ink on a white page


def test_to_disk_and_spacy_load_give_the_same_parses(model: Path, words: list,
                                                     tmp_path: Path) -> None:
    nlp = blank_nlp(model)
    docs = [Doc(nlp.vocab, words=s.words) for s in words[:40]]
    before = [arcs(nlp(d)) for d in docs]
    nlp.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "dparse" / "model" / "config.yaml").is_file()
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["sentencizer", "dparse"]
    after = [arcs(loaded(Doc(loaded.vocab, words=s.words))) for s in words[:40]]
    assert after == before


@pytest.fixture(scope="module")
def tagging_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An o1-cle pipeline model (it carries a tagger) trained on 150 en_ewt dev sentences."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    root = tmp_path_factory.mktemp("spacy-tagged")
    dev = read_treebank(DATA / "en_ewt" / "dev.conllu")
    write_conll(dev[:150], root / "train.conllu")
    write_conll(dev[150:180], root / "dev.conllu")
    return dparse.train(REPO / "configs" / "en_ewt" / "o1-cle-tagged.yaml", root / "model",
                        {"data.train": "train.conllu", "data.dev": "dev.conllu",
                         "training.epochs": 1, "features.arc_bits": 16,
                         "features.label_bits": 10, "tagger.folds": 2},
                        data_root=root).path


def test_a_model_that_tags_sets_pos_tag_morph_and_lemma(tagging_model: Path,
                                                         words: list) -> None:
    parser = dparse.load(tagging_model)
    expected = list(parser.parse_many(s.words for s in words[:30]))
    nlp = blank_nlp(tagging_model)
    for sent, doc in zip(expected, nlp.pipe(Doc(nlp.vocab, words=s.words) for s in words[:30]),
                         strict=True):
        assert [t.pos_ or "_" for t in doc] == sent.upos
        assert [t.tag_ or "_" for t in doc] == sent.xpos
        assert [str(t.morph) or "_" for t in doc] == sent.feats
        assert [t.lemma_ or "_" for t in doc] == sent.lemmas
        assert arcs(doc) == list(zip(sent.heads[1:].tolist(), sent.deprels[1:], strict=True))
    assert any(t.pos_ == "NOUN" for t in doc) and any(str(t.morph) for t in doc)


def test_the_factory_is_found_through_the_entry_point(model: Path, tmp_path: Path) -> None:
    """A fresh process with dparse's entry point (as pyproject.toml declares it) and spaCy:
    add_pipe("dparse") works without importing dparse."""
    points = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    assert points["spacy_factories"] == {"dparse": "dparse.spacy_component:make_dparse"}
    info = tmp_path / "site" / "dparse_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dparse-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[spacy_factories]\ndparse = dparse.spacy_component:make_dparse\n")
    code = ("import spacy; nlp = spacy.blank('en'); "
            f"nlp.add_pipe('dparse', config={{'model': {str(model)!r}}}); "
            "doc = nlp('Dogs bark at night.'); print(sum(t.head == t for t in doc))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ,
                                 "PYTHONPATH": f"{tmp_path / 'site'}{os.pathsep}{REPO}"},
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


def test_a_bad_model_is_a_dparse_error(tmp_path: Path) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("dparse", config={"model": str(tmp_path / "missing")})
    with pytest.raises(dparse.DparseError):
        nlp("Hello there.")
    with pytest.raises(dparse.DparseError, match="no model"):
        spacy.blank("en").add_pipe("dparse")(Doc(nlp.vocab, words=["Hi"]))


def test_readme_spacy_example_runs(tagging_model: Path, tmp_path: Path, monkeypatch) -> None:
    """The README's spaCy example, from a project root whose models/en_ewt-o1-cle-tagged is
    the small pipeline model."""
    from test_api import readme_python_blocks

    (block,) = [b for b in readme_python_blocks() if "spacy" in b]
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "en_ewt-o1-cle-tagged").symlink_to(tagging_model)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own code
    assert (tmp_path / "en_dparse" / "dparse" / "model" / "tagger").is_dir()


def test_heads_set_before_dparse_runs_are_kept(model: Path, words: list) -> None:
    """A third of each sentence's gold arcs set on the Doc (``Doc(words, heads, deps)`` with
    None for the others) before dparse runs: every one is kept with its label, the rest parsed
    around them as ``Parser.parse(..., constraints="keep")`` does; a head set by
    ``token.head`` in another sentence is refused."""
    import numpy as np

    from dparse.errors import DparseError

    nlp = spacy.blank("en")
    component = nlp.add_pipe("dparse", config={"model": str(model)})
    api = dparse.load(model)
    rng = np.random.default_rng(0)
    changed = 0
    for s in words[:40]:
        fixed = [m for m in range(1, len(s) + 1) if rng.random() < 0.3]
        partial = [-1] * (len(s) + 1)
        rels = ["_"] * (len(s) + 1)
        for m in fixed:
            partial[m], rels[m] = int(s.heads[m]), s.deprels[m]
        doc = Doc(nlp.vocab, words=list(s.form),
                  heads=[(h - 1 if h else m - 1) if h >= 0 else None
                         for m, h in enumerate(partial[1:], 1)],
                  deps=[rel if rel != "_" else None for rel in rels[1:]])
        component(doc)
        got = [(0 if t.head.i == t.i else t.head.i + 1, t.dep_) for t in doc]
        for m in fixed:
            assert got[m - 1] == (int(s.heads[m]), s.deprels[m])
        expected = api.parse(dparse.Sentence.build(list(s.form), partial, rels),
                             constraints="keep")
        assert [h for h, _ in got] == expected.heads.tolist()[1:]
        changed += [h for h, _ in got] != api.parse(list(s.form)).heads.tolist()[1:]
    assert changed > 5
    # every token with a head: spaCy's sentences (from the heads) are kept, and so are the
    # arcs; one that crosses into another sentence is refused
    doc = Doc(nlp.vocab, words=["She", "reads", ".", "He", "writes", "."],
              heads=[1, 1, 1, 4, 4, 4], deps=["nsubj", "ROOT", "punct", "nsubj", "ROOT", "punct"])
    assert arcs(component(doc)) == [(2, "nsubj"), (0, "ROOT"), (2, "punct")] * 2
    doc = Doc(nlp.vocab, words=["She", "reads", ".", "He", "writes", "."],
              heads=[1, 1, 1, 4, 4, 1], deps=["nsubj", "ROOT", "punct", "nsubj", "ROOT", "punct"])
    with pytest.raises(DparseError, match="token 5 .*is not a word of its sentence"):
        component(doc)
    # keep_heads false: every token parsed anew, as without heads
    anew = spacy.blank("en")
    anew.add_pipe("dparse", config={"model": str(model), "keep_heads": False})
    s = words[0]
    doc = Doc(anew.vocab, words=list(s.form), heads=[0] * len(s), deps=["x"] * len(s))
    got = [0 if t.head.i == t.i else t.head.i + 1 for t in anew(doc)]
    assert got == api.parse(list(s.form)).heads.tolist()[1:]
