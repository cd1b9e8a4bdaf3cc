"""The tokenizer on every UD treebank of the data root with ``# text`` in its test file
(results/tokenize-ud.md): Tokens, Sentences and Words F1 from raw text, the exact round trip,
speed.

For each treebank: a tokenizer trained with configs/ud/tokenizer.yaml on train.conllu (on
dev.conllu where the treebank has no train file, as the ud table does), its epoch selected on
dev.conllu; the raw text of test.conllu (``dparse tokenize --text-of``,
:func:`dparse.tokenizing.rawtext.raw_text`) tokenized, the CoNLL-U written and read back,
scored against the test file by the CoNLL 2018 alignment (:func:`dparse.alignedscores.
score_aligned`, as ``dparse eval --aligned``) and its text rebuilt
(:func:`dparse.tokenizing.rawtext.rebuild_text`) and compared with the raw text character for
character. Speed: MB (10**6 bytes of UTF-8) of raw text per second of
:meth:`TokenizerModel.tokenize` alone (model loaded, text in memory; the median of
``--rounds`` rounds; per second of wall time and of CPU time), and with the CoNLL-U made too,
on one core.

With ``--pipeline MODEL`` (a pipeline parser of en_ewt that tags, e.g. en_ewt-o1-cle-tagged):
en_ewt test parsed by it from the tokenizer's output (raw text) and from the test file's own
words (gold tokenization, tags predicted), both scored by the aligned evaluation (LAS F1:
what tokenization costs); and speed: tokens per second of its inference on the tokenizer's
words, and of the raw-text pipeline (the tokenizer's seconds added to the same round's parse:
what ``dparse parse --format raw`` of a model carrying this tokenizer runs), in ``--rounds``
alternated rounds.

With ``--udpipe FILE`` (lines ``treebank<TAB>Tokens<TAB>Sentences<TAB>Words``: UDPipe 1's F1
on the same test files, measured outside this script, nothing of UDPipe in the project): a
second table sets dparse's figures beside them and says whether issue 51's targets hold
(Tokens and Words F1 >= UDPipe's, Sentences F1 >= UDPipe's + 2.0).

    python3 benchmarks/tokenize_ud.py --data-root ../shared/data --models scratch/tok \\
        -o results/tokenize-ud.md
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from dparse.alignedscores import score_aligned
from dparse.config import load_config
from dparse.conll import read_treebank
from dparse.epochs import save_model
from dparse.outputs import write_text
from dparse.tokenizing.model import TokenizerModel, conllu_lines
from dparse.tokenizing.rawtext import raw_text, rebuild_text, tokens_of
from dparse.tokenizing.training import train

REPO = Path(__file__).resolve().parents[1]
RANGE = re.compile(r"\ufeff?[0-9]+-[0-9]+\t")  # a multiword token's range line
CONFIG = REPO / "configs" / "ud" / "tokenizer.yaml"


def treebanks(root: Path) -> list[str]:
    """The treebanks whose test file has ``# text`` lines, en_ewt first."""
    found = [p.parent.name for p in sorted(root.glob("*/test.conllu"))
             if "# text" in p.read_text(encoding="utf-8")[:100000]]
    return sorted(found, key=lambda name: (name != "en_ewt", name))


def run(name: str, root: Path, models: Path, rounds: int) -> dict:
    """Train, tokenize, score and time one treebank."""
    train_file = "train.conllu" if (root / name / "train.conllu").exists() else "dev.conllu"
    cfg = load_config(CONFIG, data_root=str(root), overrides=[
        f"name=ud-tokenizer-{name}", f"data.train={name}/{train_file}",
        f"data.dev={name}/dev.conllu", f"data.test={name}/test.conllu"])
    result = train(cfg)
    save_model(result, cfg, models / name)
    model = TokenizerModel.load(models / name)
    gold = read_treebank(root / name / "test.conllu", require_heads=False)
    text = raw_text(gold)
    size = len(text.encode("utf-8")) / 1e6
    alone, cpu, whole = [], [], []
    for _ in range(rounds):
        tick, cpu_tick = time.perf_counter(), time.process_time()
        sentences = model.tokenize(text)
        alone.append(time.perf_counter() - tick)
        cpu.append(time.process_time() - cpu_tick)
        conllu = "".join(conllu_lines(sentences))
        whole.append(time.perf_counter() - tick)
    out = models / f"{name}.test.conllu"
    write_text(out, conllu)
    system = read_treebank(out, require_heads=False)
    report = score_aligned(gold, system).as_dict()
    multiword = sum(1 for s in gold for line in s.to_conll().splitlines()
                    if RANGE.match(line))
    # the expander alone, on the test file's own tokens
    tokens = [t for s in gold for t in tokens_of(s)]
    expanded_right = sum(len(t.words) > 1 and model.expander.words(t.form) == t.words
                         for t in tokens)
    split_wrongly = sum(len(t.words) == 1 and len(model.expander.words(t.form)) > 1
                        for t in tokens)
    return {"name": name, "train": train_file, "epoch": result.best_epoch,
            "train_seconds": result.seconds, "multiword": multiword,
            "expanded_right": expanded_right, "split_wrongly": split_wrongly,
            "tokens": report["tokens"], "sentences": report["sentences"],
            "words": report["words"], "exact": rebuild_text(system) == text,
            "mb": size, "alone": size / statistics.median(alone),
            "cpu": size / max(statistics.median(cpu), 1e-9),
            "whole": size / statistics.median(whole)}


def pipeline(model_dir: Path, root: Path, models: Path, rounds: int) -> dict:
    """The en_ewt pipeline figures of ``--pipeline`` (module doc)."""
    import dparse

    parser = dparse.load(model_dir, tags="predict")
    tokenizer = TokenizerModel.load(models / "en_ewt")
    gold_path = root / "en_ewt" / "test.conllu"
    gold = read_treebank(gold_path, require_heads=False)
    text = raw_text(gold)
    tokenized = models / "en_ewt.test.conllu"
    scores = {}
    for name, source in (("raw", tokenized), ("gold", gold_path)):
        out = models / f"en_ewt.{name}.parsed.conllu"
        parser.parse_file(source, out)
        report = score_aligned(gold, read_treebank(out)).as_dict()
        scores[name] = (report["uas"], report["las_universal"], report["las"])
    words, raw = [], []
    for _ in range(rounds):  # alternated: the words alone, then tokenizing the raw text
        stats = parser.parse_file(tokenized, models / "en_ewt.speed.conllu")
        words.append(stats.timer.tokens / stats.timer.seconds)
        tick = time.perf_counter()
        tokenizer.tokenize(text)
        tokenize_seconds = time.perf_counter() - tick
        # from raw text: the same parse after the tokenizing
        raw.append(stats.timer.tokens / (stats.timer.seconds + tokenize_seconds))
    return {"model": model_dir.name, "scores": scores, "words": statistics.median(words),
            "raw": statistics.median(raw)}


def pipeline_table(p: dict) -> list[str]:
    raw, gold = p["scores"]["raw"], p["scores"]["gold"]
    return [
        f"## en_ewt test through {p['model']} (tagger and parser), from raw text", "",
        "| input | UAS F1 | LAS F1 | LAS F1 (whole DEPREL) |", "|---|---:|---:|---:|",
        f"| raw text (this tokenizer) | {raw[0]:.2f} | {raw[1]:.2f} | {raw[2]:.2f} |",
        f"| gold tokenization (the test file's words) | {gold[0]:.2f} | {gold[1]:.2f} | "
        f"{gold[2]:.2f} |",
        f"| what tokenization costs | {raw[0] - gold[0]:.2f} | {raw[1] - gold[1]:.2f} | "
        f"{raw[2] - gold[2]:.2f} |", "",
        f"Speed (medians of alternated rounds, tokens/sec): the pipeline on the tokenizer's "
        f"words {p['words']:,.0f}; from raw text (the tokenizing seconds added to the same "
        f"round's parse) "
        f"{p['raw']:,.0f}: {p['raw'] / p['words']:.2f}x.", ""]


def read_udpipe(path: Path) -> dict[str, tuple[float, float, float]]:
    """UDPipe 1's (Tokens, Sentences, Words) F1 by treebank from a ``--udpipe`` file."""
    figures = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 4:
            raise SystemExit(f"{path}:{number}: want treebank, Tokens, Sentences, Words F1 "
                             "separated by tabs")
        figures[cols[0]] = (float(cols[1]), float(cols[2]), float(cols[3]))
    return figures


def udpipe_table(rows: list[dict], udpipe: dict[str, tuple[float, float, float]]
                 ) -> list[str]:
    """dparse beside UDPipe 1 on the treebanks that have UDPipe figures."""
    lines = ["## Beside UDPipe 1", "",
             "UDPipe 1 (`ufal.udpipe`, its Python binding): a tokenizer alone trained with its "
             "default options on the same training file (dev.conllu as its held-out data where "
             "there is a train file), given the same raw text with each line as a UDPipe "
             "paragraph (lines joined by blank lines), its output scored against test.conllu "
             "by the official CoNLL 2018 script (`conll18_ud_eval.py`); nothing of UDPipe is "
             "in the project. Targets (issue 51): Tokens and Words F1 >= UDPipe's, Sentences "
             "F1 >= UDPipe's + 2.0.", "",
             "| treebank | UDPipe Tokens | UDPipe Sentences | UDPipe Words | dparse Tokens | "
             "dparse Sentences | dparse Words | targets met |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if r["name"] not in udpipe:
            continue
        tokens, sentences, words = udpipe[r["name"]]
        missed = [what for what, ok in (("Tokens", r["tokens"] >= tokens),
                                        ("Sentences", r["sentences"] >= sentences + 2.0),
                                        ("Words", r["words"] >= words)) if not ok]
        lines.append(f"| {r['name']} | {tokens:.2f} | {sentences:.2f} | {words:.2f} | "
                     f"{r['tokens']:.2f} | {r['sentences']:.2f} | {r['words']:.2f} | "
                     f"{'yes' if not missed else 'no: ' + ', '.join(missed)} |")
    return lines + [""]


def table(rows: list[dict], commit: str, rounds: int, load: str,
          piped: dict | None = None,
          udpipe: dict[str, tuple[float, float, float]] | None = None) -> str:
    lines = [
        "# The tokenizer from raw text on the UD treebanks of the data root",
        "",
        f"`python3 benchmarks/tokenize_ud.py` at dparse {commit} on x86_64, one core, one "
        f"treebank at a time (on the machine's 2 cores; one-minute load average {load}): "
        "for each treebank a "
        "tokenizer trained with `configs/ud/tokenizer.yaml` on train.conllu (dev.conllu where "
        "there is none, as the ud table does), its epoch chosen on dev.conllu; the raw text "
        "of test.conllu (`dparse tokenize --text-of`: the `# text` lines, one paragraph a "
        "line where the file marks `# newpar`, a blank line before each `# newdoc`) "
        "tokenized, written as CoNLL-U, read back and scored against test.conllu by the "
        "CoNLL 2018 alignment (`dparse.alignedscores.score_aligned`, what `dparse eval "
        "--aligned` prints). The expander alone, on the test file's own tokens: its multiword "
        "tokens expanded into gold's words, its one-word tokens split. Round trip: the text "
        "rebuilt from the output's tokens and spacing marks equals the raw text, character "
        "for character. Speed: MB (10^6 bytes of UTF-8) of raw text per second of "
        "`TokenizerModel.tokenize` alone (model loaded, text in memory; per second of wall "
        "time and of the process's CPU time, which waiting for the shared cores does not "
        "count), and with the CoNLL-U made too; median "
        f"of {rounds} rounds.",
        "",
        "| treebank | trained on | best epoch | training s | multiword tokens in test | "
        "of them expanded right | one-word tokens split | "
        "Tokens F1 | Sentences F1 | Words F1 | round trip exact | test MB | MB/s tokenize | "
        "MB per CPU second, tokenize | MB/s with CoNLL-U |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['train']} | {r['epoch']} | {r['train_seconds']:.1f} | "
            f"{r['multiword']} | {r['expanded_right']} | {r['split_wrongly']} | "
            f"{r['tokens']:.2f} | {r['sentences']:.2f} | "
            f"{r['words']:.2f} | {'yes' if r['exact'] else 'NO'} | {r['mb']:.3f} | "
            f"{r['alone']:.2f} | {r['cpu']:.2f} | {r['whole']:.2f} |")
    exact = sum(r["exact"] for r in rows)
    lines += ["", f"Round trip: {exact} of {len(rows)} test files rebuilt exactly.", ""]
    if udpipe:
        lines += udpipe_table(rows, udpipe)
    if piped is not None:
        lines += pipeline_table(piped)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--models", type=Path, required=True,
                        help="where the trained tokenizers and outputs go (scratch)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="these treebanks only")
    parser.add_argument("--pipeline", type=Path,
                        help="an en_ewt pipeline parser model (tagger and parser) to parse "
                             "en_ewt test from raw text with")
    parser.add_argument("--udpipe", type=Path,
                        help="UDPipe 1's figures to set beside (module doc)")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    udpipe = read_udpipe(args.udpipe) if args.udpipe else None
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    rows = []
    before = os.getloadavg()[0]
    for name in args.only or treebanks(args.data_root):
        rows.append(run(name, args.data_root, args.models, args.rounds))
        r = rows[-1]
        print(f"{name}: Tokens {r['tokens']:.2f} Sentences {r['sentences']:.2f} Words "
              f"{r['words']:.2f} exact {r['exact']} {r['alone']:.2f} MB/s", file=sys.stderr,
              flush=True)
    piped = (pipeline(args.pipeline, args.data_root, args.models, args.rounds)
             if args.pipeline else None)
    load = f"{before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    write_text(args.output, table(rows, commit, args.rounds, load, piped, udpipe))


if __name__ == "__main__":
    main()
