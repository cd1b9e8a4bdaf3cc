"""The Python API and the spaCy component against ``dparse parse`` on a test file (make
bench-api): the same output, and what the layers cost.

Equality (on the whole file): ``Parser.parse_file`` (one and two jobs) and ``parse_many`` +
``to_conllu`` give ``dparse parse``'s bytes; ``dparse.evaluate`` equals ``dparse eval --json``
on every key; the spaCy component on Docs of the file's words (``Doc(nlp.vocab, words=...)``)
gives the heads and labels of ``dparse parse`` of the same words alone (every other column
blanked), and so does the pipeline after ``nlp.to_disk`` / ``spacy.load``.

Speed, in rounds alternated in one process (the machine is shared: ratios are what counts):

- ``dparse parse`` of the words alone, as a process (``--json``): its own tokens/sec (inference,
  as it reports) and over its wall time of reading, parsing and writing;
- the spaCy component's ``pipe`` over Docs of the same words: tokens/sec from the first Doc in
  to the last parsed Doc out (reading Sentences from Docs, parsing, setting the Docs' heads and
  labels); the model is loaded before;
- ``Parser.parse(words)`` of each sentence, against the parse itself: the loaded parser's parse
  of the same sentence made ready beforehand (:class:`dparse.conll.Sentence`), the two timed
  one after the other on each sentence; the difference, per sentence, is what the API adds
  (checking the words, making the Sentence, the lock, the generator).

    python benchmarks/api_bench.py --model models/en_ewt-o1-cle models/en_ewt-o1-cle-tagged \\
        --test ../shared/data/en_ewt/test.conllu --out results/api-bench.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dparse
from dparse.conll import Sentence, as_sentence, read_treebank, write_conll
from dparse.parsers import LoadedParser
from dparse.timer import ParseTimer


def cli(*args: str) -> subprocess.CompletedProcess:
    """``dparse ARGS`` in a process; RuntimeError with its stderr if it fails."""
    result = subprocess.run([sys.executable, "-m", "dparse", *args], capture_output=True,
                            text=True)
    if result.returncode != 0:
        raise RuntimeError(f"dparse {' '.join(args)}: {result.stderr.strip()}")
    return result


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def arcs_of_doc(doc: object) -> list[tuple[int, str]]:
    """Heads (0: root, else the 1-based position in the sentence) and labels of a Doc."""
    out = []
    for sent in doc.sents:  # type: ignore[attr-defined]
        out += [(0 if t.head.i == t.i else t.head.i - sent.start + 1, t.dep_) for t in sent]
    return out


def arcs_of(sentence: Sentence) -> list[tuple[int, str]]:
    return list(zip(sentence.heads[1:].tolist(), sentence.deprels[1:], strict=True))


def equality(model: Path, test: Path, words_file: Path, work: Path) -> list[str]:
    """The equality checks of the module doc, as report lines."""
    cli("parse", str(model), str(test), "-o", str(work / "cli.conllu"))
    reference = (work / "cli.conllu").read_bytes()
    parser = dparse.load(model)
    rows = [("`dparse parse` (reference)", sha(work / "cli.conllu"), "-")]
    for jobs in (1, 2):
        out = work / f"parse_file-{jobs}.conllu"
        parser.parse_file(test, out, jobs=jobs)
        rows.append((f"`parse_file(jobs={jobs})`", sha(out), str(out.read_bytes() == reference)))
        text = "".join(s.to_conllu() for s in parser.parse_many(dparse.read(test), jobs=jobs))
        out.write_text(text, encoding="utf-8")
        rows.append((f"`parse_many(jobs={jobs})` + `to_conllu()`", sha(out),
                     str(text.encode() == reference)))
    lines = ["### Equality on the whole file", "", "| output | sha256 (12) | bytes equal |",
             "|---|---|---|", *(f"| {a} | {b} | {c} |" for a, b, c in rows), ""]
    for options in ([], ["--punct", "upos", "--detail"]):
        data = json.loads(cli("eval", str(test), str(work / "cli.conllu"), "--json",
                              *options).stdout)
        result = dparse.evaluate(test, work / "cli.conllu", options[1] if options else "include",
                                 detail=bool(options))
        api = json.loads(json.dumps(result.as_dict()))
        same = sum(api.get(k) == v for k, v in data.items())
        lines.append(f"- `dparse.evaluate` vs `dparse eval --json {' '.join(options)}`: "
                     f"{same} of {len(data)} keys equal, key sets equal: "
                     f"{api.keys() == data.keys()} (LAS {result.las:.2f}, UAS {result.uas:.2f})")
    lines += spacy_equality(model, words_file, work)
    return lines


def spacy_equality(model: Path, words_file: Path, work: Path) -> list[str]:
    import spacy
    from spacy.tokens import Doc

    import dparse.spacy_component  # noqa: F401 - the factory, also without the entry point

    cli("parse", str(model), str(words_file), "-o", str(work / "words.parsed.conllu"))
    expected = [arcs_of(s) for s in read_treebank(work / "words.parsed.conllu")]
    words = [s.words for s in read_treebank(words_file)]
    nlp = spacy.blank("en")
    nlp.add_pipe("dparse", config={"model": str(model)})
    got = [arcs_of_doc(d) for d in nlp.pipe(Doc(nlp.vocab, words=w) for w in words)]
    nlp.to_disk(work / "pipeline")
    loaded = spacy.load(work / "pipeline")
    again = [arcs_of_doc(d) for d in loaded.pipe(Doc(loaded.vocab, words=w) for w in words)]
    equal = sum(a == b for a, b in zip(got, expected, strict=True))
    equal_again = sum(a == b for a, b in zip(again, expected, strict=True))
    return [f"- spaCy {spacy.__version__} component, Docs of the file's words: {equal} of "
            f"{len(expected)} sentences with exactly the heads and labels of `dparse parse` of "
            f"the same words; after `nlp.to_disk` / `spacy.load`: {equal_again} of "
            f"{len(expected)}", ""]


def speed(model: Path, words_file: Path, rounds: int) -> list[str]:
    """The speed rounds of the module doc, as report lines."""
    import spacy
    from spacy.tokens import Doc

    import dparse.spacy_component  # noqa: F401 - the factory, also without the entry point

    words = [s.words for s in read_treebank(words_file)]
    tokens = sum(map(len, words))
    nlp = spacy.blank("en")
    component = nlp.add_pipe("dparse", config={"model": str(model)})
    parser = component.parser  # loaded before timing
    loaded = parser._loaded  # the parse itself, under the API
    cli_inf, cli_wall, comp, api_us, own_us, alone_us = [], [], [], [], [], []
    for _ in range(rounds):
        summary = json.loads(cli("parse", str(model), str(words_file), "-o", os.devnull,
                                 "--json").stderr.strip().splitlines()[-1])
        cli_inf.append(summary["tokens_per_second"])
        cli_wall.append(summary["wall_tokens_per_second"])
        docs = [Doc(nlp.vocab, words=w) for w in words]
        started = time.perf_counter()
        for _ in component.pipe(docs):
            pass
        comp.append(tokens / (time.perf_counter() - started))
        own, api = one_sentence(parser, loaded, words, [Sentence.build(w) for w in words])
        own_us.append(own)
        api_us.append(api)
        started = time.perf_counter()
        for w in words:  # the API's own steps, without the parse
            with parser._lock:
                as_sentence(w)
        alone_us.append(1e6 * (time.perf_counter() - started) / len(words))
    med = statistics.median
    ratios_inf = [c / i for c, i in zip(comp, cli_inf, strict=True)]
    ratios_wall = [c / w for c, w in zip(comp, cli_wall, strict=True)]
    extra = [a - o for a, o in zip(api_us, own_us, strict=True)]
    return [
        f"### Speed ({rounds} rounds alternated, medians; {len(words)} sentences, {tokens} "
        "tokens, one process)", "",
        "| what | tokens/sec | ratio to `dparse parse` (inference / wall) |", "|---|---|---|",
        f"| `dparse parse` of the words, its own figure (inference) | {med(cli_inf):,.0f} | 1 |",
        f"| `dparse parse` of the words, over its wall time (read, parse, write) | "
        f"{med(cli_wall):,.0f} | - |",
        f"| spaCy component `pipe` over Docs of the same words | {med(comp):,.0f} | "
        f"{med(ratios_inf):.2f}x / {med(ratios_wall):.2f}x |", "",
        "Per-round ratios of the component to `dparse parse`'s own figure: "
        + ", ".join(f"{r:.2f}" for r in ratios_inf) + ".", "",
        "| one sentence | microseconds per sentence (median) |", "|---|---|",
        f"| the parse itself (loaded parser, Sentence ready) | {med(own_us):.1f} |",
        f"| `Parser.parse(words)` | {med(api_us):.1f} |",
        f"| what the API adds: the difference | {med(extra):.1f} (rounds: "
        + ", ".join(f"{e:.1f}" for e in extra) + ") |",
        f"| what the API adds, timed alone (checking the words, making the Sentence, the "
        f"lock) | {med(alone_us):.1f} |", ""]


def one_sentence(parser: dparse.Parser, loaded: LoadedParser, words: list[list[str]],
                 ready: list[Sentence]) -> tuple[float, float]:
    """Mean microseconds per sentence of the parse itself (``loaded`` on the ``ready``
    sentence) and of ``Parser.parse(words)``, the two timed one after the other on each
    sentence, in turns first (so that neither gains from the other's warm caches)."""
    own = api = 0.0
    clock = time.perf_counter
    for k, (w, sentence) in enumerate(zip(words, ready, strict=True)):
        if k % 2:
            t0 = clock()
            parser.parse(w)
            t1 = clock()
            next(loaded.parse((sentence,), ParseTimer()))
            t2 = clock()
            api += t1 - t0
            own += t2 - t1
        else:
            t0 = clock()
            next(loaded.parse((sentence,), ParseTimer()))
            t1 = clock()
            parser.parse(w)
            t2 = clock()
            own += t1 - t0
            api += t2 - t1
    return 1e6 * own / len(words), 1e6 * api / len(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, nargs="+", required=True,
                    help="model directories, each measured in turn")
    ap.add_argument("--test", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        words_file = work / "words.conllu"
        write_conll((s.words_only() for s in dparse.read(args.test)), words_file)
        lines = [f"# The Python API and the spaCy component against `dparse parse` "
                 f"({args.test.name})", "",
                 f"Made by `make bench-api` (benchmarks/api_bench.py; its docstring says what "
                 f"is measured) on {platform.node()}, {os.cpu_count()} cores shared with other "
                 "jobs.", ""]
        for model in args.model:
            lines += [f"## {model.name}", ""]
            lines += equality(model, args.test, words_file, work)
            lines += speed(model, words_file, args.rounds)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
