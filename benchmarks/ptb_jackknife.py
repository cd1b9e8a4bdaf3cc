"""The built-in 10-fold jackknife of PTB part-of-speech tags, on the WSJ sample we have
(make ptb-sample-jackknife).

The papers' PTB tables train their parsers on tags a 10-fold jackknifed tagger gave the
training sections (``make data-ptb-jackknife`` does it on DATA/ptb with configs/ptb/tagger.yaml).
Here the same command runs on ``ptb_sample/dep`` (wsj_0001-0199 in Malt-TAB, its files joined
in name order): every fold tagged by the tagger trained on the other nine, without a dev file
(each column keeps its last epoch). The table gives the tag accuracy of the jackknifed file
against the gold tags and the wall time, and the file is kept in ``--work``.

    python benchmarks/ptb_jackknife.py --data ../shared/data --work models/ptb_sample.jackknife \\
        --jobs 2 --out results/ptb-sample-jackknife.md
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

from common import REPO

from dparse.conll import read_conll
from dparse.tagscores import score_tags


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="the data root")
    ap.add_argument("--work", type=Path, required=True, help="where the files are kept")
    ap.add_argument("--jobs", type=int, default=2, help="folds trained at a time")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--out", type=Path, required=True, help="the Markdown table")
    args = ap.parse_args()
    files = sorted((args.data / "ptb_sample" / "dep").glob("*.dp"))
    if not files:
        sys.exit(f"{args.data / 'ptb_sample' / 'dep'}: no .dp files")
    args.work.mkdir(parents=True, exist_ok=True)
    gold_file = args.work / "ptb_sample.malttab"
    # a file's last sentence ends without a blank line: one goes between files
    gold_file.write_text("".join(f.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
                                 for f in files), encoding="utf-8")
    tagged_file = args.work / "ptb_sample.jackknife.malttab"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dparse", "data", "jackknife", str(gold_file),
                    "-o", str(tagged_file), "--tagger-config",
                    str(REPO / "configs" / "ptb" / "tagger.yaml"), "--folds", str(args.folds),
                    "--jobs", str(args.jobs), "-q"], check=True)
    seconds = time.perf_counter() - start
    gold = list(read_conll(gold_file))
    tagged = list(read_conll(tagged_file))
    scores = score_tags(gold, tagged).as_dict()
    tokens = sum(map(len, gold))
    lines = [
        "# The built-in PTB jackknife on the WSJ sample (make ptb-sample-jackknife)", "",
        f"ptb_sample/dep ({len(files)} files, {len(gold)} sentences, {tokens} tokens) tagged by "
        f"a {args.folds}-fold jackknife with configs/ptb/tagger.yaml (each fold's tagger "
        "trained on the other folds, no dev file), `dparse data jackknife --tagger-config`, "
        f"folds trained {args.jobs} at a time, on {platform.machine()}.", "",
        "| POS accuracy of the jackknifed tags | wall time |", "|---:|---:|",
        f"| {scores['xpos']:.2f} | {seconds:.0f} s |", "",
        "Heads and words are kept; only the POS column is replaced. On the full WSJ, "
        "`make data-ptb-jackknife` does the same on DATA/ptb/train.conll (dev chooses the "
        "epochs there).", ""]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
