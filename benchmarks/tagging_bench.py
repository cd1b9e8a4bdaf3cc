"""Tagging and parsing from words alone on a treebank's test file (make tagging-en-ewt).

Reads, from ``--models``, the tagger ``<tb>-tagger`` and, for each parser config C of
``--parsers``, ``<tb>-C`` (trained on gold tags) and ``<tb>-C-tagged`` (trained on jackknifed
predicted tags, carrying its tagger). Accuracy table: the tagger's UPOS, XPOS, UFeats, AllTags
and Lemmas on the test file's words alone (every tag column blanked), and each parser's
UAS/LAS on gold tags, on the tagger's tags (the gold-tag parser) and from the words alone (the
pipeline); UDPipe 1's figures beside them when ``--udpipe`` names the peers file of
benchmarks/ud_table_tagged.py (results/udpipe1-figures.json: its format, and how the figures
are obtained) and it holds the treebank. Speed table, rounds
alternated in one process (tokens/sec, inference only, as ``dparse parse`` reports): the first
parser on gold tags (the reference), the tagger on the words alone, the first pipeline on the
words alone (tagging included) and its own parser on the gold tags (``--tags keep``).

    python benchmarks/tagging_bench.py --models models --treebank en_ewt \\
        --test ../shared/data/en_ewt/test.conllu --parsers o1-cle,o2-eisner \\
        --udpipe results/udpipe1-figures.json --out results/tagging-en_ewt.md
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import time
from pathlib import Path

from dparse.conll import Sentence, read_treebank
from dparse.metrics import evaluate
from dparse.parsers import ParserSpec
from dparse.tagscores import score_tags
from dparse.timer import ParseTimer

TAG_KEYS = ("upos", "xpos", "ufeats", "alltags", "lemmas")


def run(model: Path, sentences: list[Sentence], tags: str, tag_only: bool = False
        ) -> tuple[float, list[Sentence], float]:
    """Tokens/sec of one pass of ``model`` over ``sentences`` (as ``dparse parse`` reports
    it), its output, and tokens per second of the process's CPU time in that pass."""
    runner = ParserSpec(str(model), tags=tags, tag_only=tag_only).load()
    timer = ParseTimer()
    start = time.process_time()
    out = list(runner.parse(sentences, timer))
    cpu = time.process_time() - start
    return timer.tokens_per_second, out, sum(map(len, sentences)) / max(cpu, 1e-9)


def _pair(report: object) -> str:
    return f"{report.uas:.2f} / {report.las:.2f}"  # type: ignore[attr-defined]


def accuracy_section(models: Path, tb: str, parsers: list[str], gold: list[Sentence],
                     words: list[Sentence], udpipe: dict | None) -> list[str]:
    """The tagger's scores and each parser's UAS / LAS on gold, tagger and pipeline tags."""
    tagged = run(models / f"{tb}-tagger", words, "predict", tag_only=True)[1]
    tags = score_tags(gold, tagged).as_dict()
    header = "| tagger | " + " | ".join(k for k in TAG_KEYS) + " |"
    lines = ["## Tags of the test file's words alone", "", header,
             "|---|" + "---:|" * len(TAG_KEYS),
             f"| dparse {tb}-tagger | " + " | ".join(
                 "n/a" if tags[k] is None else f"{tags[k]:.2f}" for k in TAG_KEYS) + " |"]
    if udpipe:
        lines.append("| UDPipe 1 (its tagger) | " + " | ".join(
            "n/a" if udpipe["tags"].get(k) is None else f"{udpipe['tags'][k]:.2f}"
            for k in TAG_KEYS) + " |")
    lines += ["", "## Parsing (UAS / LAS, punctuation included)", "",
              "| parser | gold tags | the tagger's tags | words alone (pipeline) | "
              "drop gold -> words (LAS) |", "|---|---:|---:|---:|---:|"]
    for name in parsers:
        on_gold = evaluate(gold, run(models / f"{tb}-{name}", gold, "keep")[1])
        on_tagged = evaluate(gold, run(models / f"{tb}-{name}", tagged, "keep")[1])
        pipeline = evaluate(gold, run(models / f"{tb}-{name}-tagged", words, "predict")[1])
        lines.append(f"| {name} (trained on gold tags) | {_pair(on_gold)} | {_pair(on_tagged)} "
                     f"| | |")
        lines.append(f"| {name}-tagged (trained on jackknifed tags) | | | {_pair(pipeline)} | "
                     f"{on_gold.las - pipeline.las:.2f} |")
    if udpipe and udpipe.get("parse"):
        lines.append(f"| UDPipe 1 (its tagger, then its parser) | | | "
                     f"{udpipe['parse']['uas']:.2f} / {udpipe['parse']['las']:.2f} | |")
    if udpipe:
        lines += ["", f"UDPipe 1: {udpipe['how']}"]
    return lines


def speed_section(models: Path, tb: str, parser: str, gold: list[Sentence],
                  words: list[Sentence], rounds: int) -> list[str]:
    """Alternated rounds: gold-tag parser, tagger, pipeline on words, pipeline on gold tags."""
    runs = {
        f"{tb}-{parser}, gold tags (reference)": (models / f"{tb}-{parser}", gold, "keep", False),
        f"{tb}-tagger, words alone": (models / f"{tb}-tagger", words, "predict", True),
        f"{tb}-{parser}-tagged, words alone (tagging included)":
            (models / f"{tb}-{parser}-tagged", words, "predict", False),
        f"{tb}-{parser}-tagged, its parser on gold tags":
            (models / f"{tb}-{parser}-tagged", gold, "keep", False),
    }
    speeds: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, (model, sentences, tags, tag_only) in runs.items():
            wall, _, per_cpu = run(model, sentences, tags, tag_only)
            speeds[name].append(wall)
            cpu[name].append(per_cpu)
    median = [statistics.median(v) for v in speeds.values()]
    median_cpu = [statistics.median(v) for v in cpu.values()]
    lines = ["## Speed (tokens/sec, one core, inference only)", "",
             "| run | " + " | ".join(f"round {i + 1}" for i in range(rounds))
             + " | median | median, per CPU second |", "|---|" + "---:|" * (rounds + 2)]
    for (name, values), m, c in zip(speeds.items(), median, median_cpu, strict=True):
        lines.append(f"| {name} | " + " | ".join(f"{v:,.0f}" for v in values)
                     + f" | {m:,.0f} | {c:,.0f} |")
    return lines + [
        "", f"- tagging / the gold-tag parser: **{median[1] / median[0]:.2f}x** "
        f"({median_cpu[1] / median_cpu[0]:.2f}x per CPU second)",
        f"- pipeline on words alone / its parser on gold tags: "
        f"**{median[2] / median[3]:.2f}x** ({median_cpu[2] / median_cpu[3]:.2f}x per CPU "
        "second)",
        "- tokens/sec as `dparse parse` reports them (wall time of inference); per CPU second: "
        "the same passes over the process's CPU time, which other jobs on the machine do not "
        "lengthen"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, help="folder of the trained models")
    parser.add_argument("--treebank", default="en_ewt", help="prefix of the model names")
    parser.add_argument("--test", required=True, help="gold test file")
    parser.add_argument("--parsers", default="o1-cle,o2-eisner")
    parser.add_argument("--udpipe", default=None, help="UDPipe 1's figures (JSON)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", required=True, help="Markdown report to write")
    args = parser.parse_args(argv)
    models, tb = Path(args.models), args.treebank
    parsers = args.parsers.split(",")
    gold = read_treebank(args.test)
    words = [s.words_only() for s in gold]
    udpipe = None
    if args.udpipe and Path(args.udpipe).exists():
        peers = json.loads(Path(args.udpipe).read_text(encoding="utf-8"))
        if tb in peers.get("treebanks", {}):
            udpipe = {**peers["treebanks"][tb], "how": peers.get("how", "")}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# {tb}: tagging, and parsing from words alone", "",
             f"`make tagging-en-ewt` at dparse {commit} on {platform.machine()}: test file "
             f"{Path(args.test).name}, gold tokenization, every word scored.", ""]
    lines += accuracy_section(models, tb, parsers, gold, words, udpipe)
    lines += [""] + speed_section(models, tb, parsers[0], gold, words, args.rounds)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
