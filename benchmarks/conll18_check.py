"""results/conll18-metrics.md: ``dparse eval``'s CoNLL 2018 metrics against the official scorer
(issue 49, make conll18-check).

For each system file, runs the CoNLL 2018 UD shared task's scorer (``conll18_ud_eval.py``,
given by path: it is not part of dparse; it is in the shared task's repository, under
evaluation_script/) with ``--counts``, and :func:`dparse.evaluate` (punctuation included, as the
scorer counts), and compares every metric the two share: UPOS, XPOS, UFeats, AllTags, Lemmas,
UAS, LAS (dparse's ``las_universal``), CLAS, MLAS and BLEX. A metric is equal when dparse's
percentage is the scorer's F1 within 1e-9 and, for CLAS, MLAS and BLEX, the counts of correct,
gold and system content words are the scorer's too. A score dparse leaves n/a by design (a
column the system file lacks, zero content words) is shown as such, not counted as a difference.

System files: the files named, and under each folder named, every ``test.parsed.conllu`` of a
grid cell (``dparse grid``; its gold is the test file of the treebank its ``result.json``
names) and every ``*.test.conllu`` (its gold: the test file of the treebank whose name starts
the file name, ``en_ewt-o2-eisner.test.conllu`` -> ``en_ewt/test.conllu``), all under the data
root; ``--gold FILE`` gives one gold file for every system instead. A system whose gold is not
a CoNLL-U file under the data root (the CoNLL 2007 sets) is listed as skipped.

    python3 benchmarks/conll18_check.py --official ../conll18_ud_eval.py \\
        ../models-final/ -o results/conll18-metrics.md
    python3 benchmarks/conll18_check.py --official ../conll18_ud_eval.py \\
        models/grids/ud-tagged --only o2-eisner-tagged -o results/conll18-metrics.md
    python3 benchmarks/conll18_check.py --official ../conll18_ud_eval.py --aligned \\
        scratch/retokenized/ -o results/conll18-aligned.md

Exit status 1 when some metric differs or a scorer run fails (the table is written anyway).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dparse
from dparse.alignedscores import score_aligned
from dparse.batch.cells import PARSED_FILE, RESULT_FILE
from dparse.config import DEFAULT_DATA_ROOT
from dparse.conll import read_conll
from dparse.outputs import write_text

# metric name of the scorer -> how dparse reports it
METRICS = ("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS", "MLAS", "BLEX")
ALIGNED_METRICS = ("Tokens", "Sentences", "Words", *METRICS)  # compared with --aligned
_TAG_KEY = {"UPOS": "upos", "XPOS": "xpos", "UFeats": "ufeats", "AllTags": "alltags",
            "Lemmas": "lemmas"}
_PARSE_KEY = {"UAS": "uas", "LAS": "las_universal"}
# each metric's key in dparse.alignedscores (--aligned)
_ALIGNED_KEY = {"Tokens": "tokens", "Sentences": "sentences", "Words": "words", **_TAG_KEY,
                **_PARSE_KEY, "CLAS": "clas", "MLAS": "mlas", "BLEX": "blex"}
TOLERANCE = 1e-9


@dataclass(frozen=True)
class System:
    """A system file, its name in the table and its gold file (None: skipped, ``why``)."""

    path: Path
    name: str
    gold: Path | None
    why: str = ""


def _cell_system(path: Path, data_root: Path) -> System:
    record = json.loads((path.parent / RESULT_FILE).read_text(encoding="utf-8"))
    name = f"{record['treebank']}-{record['config']}"
    return _with_gold(path, name, data_root / record["treebank"] / "test.conllu")


def _with_gold(path: Path, name: str, gold: Path) -> System:
    if not gold.is_file():
        return System(path, name, None, f"no CoNLL-U gold file {gold}")
    return System(path, name, gold)


def find_systems(paths: list[Path], data_root: Path, gold: Path | None) -> list[System]:
    """The system files named or found under the folders of ``paths`` (module doc), in order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            cells = [p for p in path.rglob(PARSED_FILE) if (p.parent / RESULT_FILE).is_file()]
            files += sorted([*cells, *path.rglob("*.test.conllu")])
        else:
            files.append(path)
    systems = []
    for path in files:
        if gold is not None:
            systems.append(System(path, path.name, gold))
        elif path.name == PARSED_FILE and (path.parent / RESULT_FILE).is_file():
            systems.append(_cell_system(path, data_root))
        else:
            treebank = path.name.split(".")[0].split("-")[0]
            systems.append(_with_gold(path, path.name.removesuffix(".test.conllu"),
                                      data_root / treebank / "test.conllu"))
    return systems


def official_counts(script: Path, gold: Path, system: Path) -> dict[str, tuple[int, int, int]]:
    """(correct, gold, system) of each metric, from the scorer's ``--counts`` table."""
    out = subprocess.run([sys.executable, str(script), "--counts", str(gold), str(system)],
                         capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if cells[0] in ALIGNED_METRICS:
            counts[cells[0]] = (int(cells[1]), int(cells[2]), int(cells[3]))
    return counts


def ours(gold: Path, system: Path) -> dict[str, tuple[float | None, tuple[int, int, int] | None]]:
    """dparse's percentage of each metric and, for CLAS, MLAS and BLEX, its counts."""
    ev = dparse.evaluate(gold, system, punct="include")
    result: dict[str, tuple[float | None, tuple[int, int, int] | None]] = {}
    for metric in METRICS:
        if metric in _TAG_KEY:
            result[metric] = (getattr(ev, _TAG_KEY[metric]), None)
        elif metric in _PARSE_KEY:
            result[metric] = (getattr(ev, _PARSE_KEY[metric]), None)
        else:
            score = ev.content_report.scores[metric.lower()]
            result[metric] = (None, None) if score is None else (
                score.f1, (score.correct, score.gold, score.system))
    return result


def ours_aligned(gold: Path, system: Path
                 ) -> dict[str, tuple[float | None, tuple[int, int, int] | None]]:
    """dparse's F1 and counts of each metric through the CoNLL 2018 alignment (--aligned)."""
    report = score_aligned(list(read_conll(gold)), list(read_conll(system, require_heads=False)))
    result: dict[str, tuple[float | None, tuple[int, int, int] | None]] = {}
    for metric in ALIGNED_METRICS:
        score = report.scores[_ALIGNED_KEY[metric]]
        result[metric] = (None, None) if score is None else (
            score.f1, (score.correct, score.gold, score.system))
    return result


def compare(script: Path, sys_: System, aligned: bool = False) -> tuple[list[str], list[str]]:
    """The table cells of one system (the scorer's F1, or both figures where they differ) and
    the differences found, each described (``aligned``: through the CoNLL 2018 alignment)."""
    official = official_counts(script, sys_.gold, sys_.path)
    mine = ours_aligned(sys_.gold, sys_.path) if aligned else ours(sys_.gold, sys_.path)
    cells, diffs = [], []
    for metric in ALIGNED_METRICS if aligned else METRICS:
        correct, n_gold, n_system = official[metric]
        f1 = 200.0 * correct / (n_gold + n_system) if n_gold + n_system else 0.0
        value, counts = mine[metric]
        if value is None:
            cells.append(f"n/a ({f1:.2f})")
            continue
        same = abs(value - f1) <= TOLERANCE and counts in (None, official[metric])
        cells.append(f"{f1:.2f}" if same else f"**{value:.2f} vs {f1:.2f}**")
        if not same:
            diffs.append(f"{sys_.name} {metric}: dparse {value!r} {counts}, scorer {f1!r} "
                         f"{official[metric]}")
    return cells, diffs


def build(script: Path, systems: list[System], about: str = "", aligned: bool = False
          ) -> tuple[str, bool]:
    """The Markdown report (``about``: a paragraph on the systems, after the first) and
    whether every metric was equal (``aligned``: systems with their own tokenization)."""
    now = datetime.datetime.now(datetime.UTC)
    metrics = ALIGNED_METRICS if aligned else METRICS
    intro = [
        "# CoNLL 2018 metrics: dparse eval against the official scorer (issue 49)", "",
        f"Written {now:%Y-%m-%d %H:%M} UTC by benchmarks/conll18_check.py (`make conll18-check`): "
        f"each system file scored by `dparse.evaluate` (punctuation included) and by the CoNLL "
        f"2018 shared task's `conll18_ud_eval.py --counts` ({script.name}, run from a scratch "
        "folder, not in the repository). A cell is the scorer's F1 where dparse gives the same "
        f"figure (within {TOLERANCE:g}; for CLAS, MLAS and BLEX the same counts of correct, gold "
        "and system content words too), both figures in bold where they differ, n/a (the "
        "scorer's figure) where dparse leaves the score n/a by design.", ""]
    if aligned:
        intro = [
            "# CoNLL 2018 alignment: dparse eval of re-tokenized systems against the official "
            "scorer (issue 51)", "",
            f"Written {now:%Y-%m-%d %H:%M} UTC by benchmarks/conll18_check.py --aligned (`make "
            "conll18-aligned`): each system file, whose tokens, multiword tokens, words and "
            "sentences differ from gold's, scored by `dparse eval` (dparse.alignedscores, the "
            "CoNLL 2018 alignment through the characters) and by the CoNLL 2018 shared task's "
            f"`conll18_ud_eval.py --counts` ({script.name}, run from a scratch folder, not in the "
            "repository). A cell is the scorer's F1 where dparse gives the same counts of "
            "correct, gold and system items (so the same precision, recall and F1), both F1 in "
            "bold where they differ, n/a (the scorer's figure) where dparse leaves the score n/a "
            "by design (a column the system file does not carry). System files: made by "
            "benchmarks/retokenize.py (its doc says how) from a gold test file, or from a parser's "
            "output of it (the name says which), at the rate the name ends with (retok0.1: each "
            "change with probability 0.1).", ""]
    lines = [
        *intro,
        *([about, ""] if about else []),
        "| system | gold | " + " | ".join(metrics) + " |",
        "|---|---|" + "---:|" * len(metrics),
    ]
    all_diffs: list[str] = []
    failed: list[str] = []
    skipped = [s for s in systems if s.gold is None]
    compared = 0
    for sys_ in systems:
        if sys_.gold is None:
            continue
        try:
            cells, diffs = compare(script, sys_, aligned)
        except subprocess.CalledProcessError as error:
            last = (error.stderr.strip().splitlines() or ["no message"])[-1]
            failed.append(f"{sys_.name}: the scorer failed: {last}")
            continue
        compared += 1
        all_diffs += diffs
        lines.append(f"| {sys_.name} | {sys_.gold.parent.name}/{sys_.gold.name} | "
                     + " | ".join(cells) + " |")
    lines.append("")
    if all_diffs or failed:
        lines += [f"{len(all_diffs)} differences, {len(failed)} scorer failures in {compared} "
                  "systems:", ""] + [f"- {d}" for d in all_diffs + failed]
    else:
        lines.append(f"Every metric equal on all {compared} systems.")
    if skipped:
        lines += ["", "Skipped: " + "; ".join(f"{s.name} ({s.why})" for s in skipped) + "."]
    return "\n".join(lines) + "\n", not (all_diffs or failed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("systems", nargs="+", type=Path, help="system files or folders")
    ap.add_argument("--official", type=Path, required=True, help="path of conll18_ud_eval.py")
    ap.add_argument("--gold", type=Path, default=None, help="one gold file for every system")
    ap.add_argument("--data-root", type=Path,
                    default=Path(os.environ.get("DPARSE_DATA") or DEFAULT_DATA_ROOT),
                    help="the treebanks [default: $DPARSE_DATA or ../shared/data]")
    ap.add_argument("--only", default=None, help="keep the systems whose name contains this")
    ap.add_argument("--about", default="", help="a paragraph on the systems, for the report")
    ap.add_argument("--aligned", action="store_true",
                    help="systems with their own tokenization: score them through the CoNLL "
                    "2018 alignment, Tokens, Sentences and Words too")
    ap.add_argument("-o", "--out", default=None, help="Markdown file (default: stdout)")
    args = ap.parse_args()
    if not args.official.is_file():
        ap.error(f"--official {args.official}: no such file (the CoNLL 2018 scorer, "
                 "conll18_ud_eval.py)")
    systems = find_systems(args.systems, args.data_root, args.gold)
    if args.only:
        systems = [s for s in systems if args.only in s.name]
    if not systems:
        ap.error("no system file found" + (f" whose name contains {args.only!r}" if args.only
                                           else ""))
    text, equal = build(args.official, systems, args.about, args.aligned)
    write_text(args.out, text)
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
