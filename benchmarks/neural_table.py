"""results/neural-en_ewt.md: the neural configs of configs/en_ewt/ trained, scored and timed
(make neural-en-ewt).

Each config C of ``--configs`` missing from ``--models`` is trained first, as
``python -m dparse train configs/en_ewt/C.yaml --out MODELS/en_ewt-C --threads 1 -q`` (a
config with a ``tagger`` section shares the jackknife kept in ``MODELS/en_ewt.tagged``); its
wall time, the training process's peak RSS and its per-epoch lines are kept in
``MODELS/en_ewt-C.train.json``. Then the test file is parsed: a config that reads gold tags
(``neural.tags`` other than none, without a tagger) gets the file as it is, every other one the
words alone (LEMMA, UPOS, XPOS and FEATS blanked); UAS / LAS by :func:`dparse.metrics.evaluate`
(punctuation included, as ``dparse eval``). Speed: ``--rounds`` rounds, each parsing the test
file with the reference (``--reference``, a linear model of record) and then each neural model,
one torch thread, in this process (tokens/sec as ``dparse parse`` reports it: model loading
excluded), so that every ratio comes from the same minutes of the same machine.

    python benchmarks/neural_table.py --models models --configs neural-o1,neural-o1-gold \\
        --reference models/en_ewt-o1-cle --test ../shared/data/en_ewt/test.conllu \\
        --out results/neural-en_ewt.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import dparse.cli  # noqa: F401  (numpy's BLAS on one thread, as in dparse parse)
from dparse.config import load_config
from dparse.conll import Sentence, read_treebank
from dparse.metrics import evaluate
from dparse.parsers import ParserSpec
from dparse.tagging.pipeline import has_tagger
from dparse.timer import ParseTimer

REPO = Path(__file__).resolve().parents[1]
EPOCH_LINE = re.compile(r"^epoch (\d+): .*dev UAS ([\d.]+) LAS ([\d.]+); train ([\d.]+)s"
                        r"(?: dev ([\d.]+)s)?")
# Issue 48's targets (en_ewt test LAS): words alone and gold tags as input.
TARGETS = {"words": 85.5, "gold tags": 89.5}


def reads_gold_tags(config: Path) -> bool:
    """Whether the config's parser reads the input's own tags (no tagger of its own)."""
    cfg = load_config(config)
    return cfg.neural.tags != "none" and not has_tagger(cfg)


def train(config: Path, out: Path, work: Path) -> dict:
    """Train ``config`` into ``out`` (one torch thread) and return its record: wall seconds,
    peak RSS in MB, the per-epoch (epoch, dev UAS, dev LAS, train s, dev s) and the best
    epoch; written beside the model as ``<out>.train.json``."""
    command = [sys.executable, "-m", "dparse", "train", str(config), "--out", str(out),
               "--threads", "1"]
    if has_tagger(load_config(config)):
        command += ["--work", str(work)]
    log = out.with_name(out.name + ".train.log")
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(command, stderr=stderr, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"training {config} failed: see {log}")
    epochs = [[float(g) if g else 0.0 for g in m.groups()]
              for line in log.read_text(encoding="utf-8").splitlines()
              if (m := EPOCH_LINE.match(line))]
    best = max(epochs, key=lambda e: e[2])  # the epoch the trainer kept: best dev LAS
    record = {"config": str(config.relative_to(REPO)), "wall_s": round(wall, 1),
              "peak_rss_mb": round(usage.ru_maxrss / 1024), "epochs": epochs,
              "best_epoch": int(best[0])}
    out.with_name(out.name + ".train.json").write_text(json.dumps(record, indent=1) + "\n",
                                                       encoding="utf-8")
    return record


def parse(model: Path, sentences: list[Sentence]) -> tuple[float, list[Sentence]]:
    """Tokens/sec of one pass of ``model`` over ``sentences`` and its output."""
    runner = ParserSpec(str(model)).load()
    timer = ParseTimer()
    out = list(runner.parse(sentences, timer))
    return timer.tokens_per_second, out


def build(models: Path, configs: list[str], reference: Path, test: Path, rounds: int) -> str:
    """The Markdown report (training every config that has no model yet)."""
    gold = list(read_treebank(test))
    words = [s.words_only() for s in gold]
    records, inputs = {}, {}
    for name in configs:
        config = REPO / "configs" / "en_ewt" / f"{name}.yaml"
        out = models / f"en_ewt-{name}"
        record_file = out.with_name(out.name + ".train.json")
        if not (out / "manifest.json").is_file():
            train(config, out, models / "en_ewt.tagged")
        records[name] = (json.loads(record_file.read_text(encoding="utf-8"))
                         if record_file.is_file() else None)
        inputs[name] = "gold tags" if reads_gold_tags(config) else "words"
    speeds: dict[str, list[float]] = {"reference": []} | {n: [] for n in configs}
    outputs: dict[str, list[Sentence]] = {}
    for _ in range(rounds):
        speeds["reference"].append(parse(reference, gold)[0])
        for name in configs:
            given = gold if inputs[name] == "gold tags" else words
            tps, outputs[name] = parse(models / f"en_ewt-{name}", given)
            speeds[name].append(tps)
    ref = statistics.median(speeds["reference"])
    lines = [
        "# en_ewt: neural parsers (parser: neural)", "",
        f"Written {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC by `make neural-en-ewt` "
        f"(benchmarks/neural_table.py) on {platform.machine()}, {os.cpu_count()} cores, "
        f"torch {_torch_version()}. Models in `{models.name}/`, trained with `--threads 1` from "
        "configs/en_ewt/ (the best dev LAS epoch kept). Test: en_ewt test, gold tokenization, "
        "punctuation included, full DEPREL for LAS. Input 'words': LEMMA, UPOS, XPOS and FEATS "
        "blanked (the model's own tagger or tag heads fill what it reads); 'gold tags': the "
        "test file as it is.", "",
        "## Accuracy", "",
        "| config | input | epochs (best) | dev LAS (best) | test UAS / LAS | target LAS |",
        "|---|---|---:|---:|---:|---:|"]
    for name in configs:
        report = evaluate(gold, outputs[name], punct="include")
        rec = records[name]
        epochs = (f"{len(rec['epochs'])} ({rec['best_epoch']})" if rec else "?")
        dev = (f"{max(e[2] for e in rec['epochs']):.2f}" if rec else "?")
        target = TARGETS[inputs[name]]
        mark = "met" if report.las >= target else "not met"
        lines.append(f"| {name} | {inputs[name]} | {epochs} | {dev} | "
                     f"{report.uas:.2f} / {report.las:.2f} | >= {target} ({mark}) |")
    lines += ["", "## Training (one torch thread; the machine's other work is not controlled)",
              "", "| config | epochs | s/epoch (train + dev), median (min-max) | wall | "
              "peak RSS |", "|---|---:|---|---:|---:|"]
    for name in configs:
        rec = records[name]
        if rec is None:
            lines.append(f"| {name} | ? | trained outside this target: no record | | |")
            continue
        per = [e[3] + e[4] for e in rec["epochs"]]
        lines.append(f"| {name} | {len(per)} | {statistics.median(per):.0f} "
                     f"({min(per):.0f}-{max(per):.0f}) s | {rec['wall_s'] / 60:.1f} min | "
                     f"{rec['peak_rss_mb']} MB |")
    lines += ["", f"## Parsing speed (en_ewt test, {sum(map(len, gold)):,} tokens, one "
              "thread, rounds alternated)", "",
              "| model | " + " | ".join(f"round {i + 1}" for i in range(rounds))
              + " | median | x reference |", "|---|" + "---:|" * (rounds + 2)]
    for name, values in speeds.items():
        label = f"{reference.name} (reference)" if name == "reference" else name
        med = statistics.median(values)
        lines.append(f"| {label} | " + " | ".join(f"{v:,.0f}" for v in values)
                     + f" | {med:,.0f} | {med / ref:.3f} |")
    return "\n".join(lines) + "\n"


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=Path("models"))
    parser.add_argument("--configs", default="neural-o1,neural-o1-tagged,neural-o1-gold",
                        help="config names of configs/en_ewt/, comma-separated")
    parser.add_argument("--reference", type=Path, required=True,
                        help="the linear model timed beside them (o1-cle)")
    parser.add_argument("--test", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("results/neural-en_ewt.md"))
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    text = build(args.models.resolve(), args.configs.split(","), args.reference, args.test,
                 args.rounds)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
