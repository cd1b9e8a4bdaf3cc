"""results/ud-table-tagged.md: the tagger, o1-cle and o2-eisner on predicted tags on every
treebank of make ud-table (issue 33, item 5: make ud-table TAGS=predicted).

Reads the cells of the grid configs/grids/ud-tagged.yaml under GRID_DIR (``dparse grid ...
--out GRID_DIR``; as ud_table.py reads the ud grid: every finished cell of the current configs,
else an earlier run's, marked *): per treebank, the tagger's UPOS, XPOS, UFeats, AllTags and
Lemmas on the test file tagged from its words alone, and the UAS / LAS of o1-cle and o2-eisner
trained on 10-fold jackknifed tags, parsing the test file from its words alone (their tagger
first). Beside each, the same config's UAS / LAS on gold tags from the ud grid's cells under
``--gold-grid`` (make ud-table's, when they exist) and the drop, gold - predicted. Punctuation
included, gold tokenization. Then the speeds and training times, and, when the ``--peers``
file exists, UDPipe 1's figures on the same files and dparse's margins over them against
issue 33's targets (:data:`TARGETS`): met, or the targets missed, among the scores both have;
a score of dparse's that the peer has no figure for is named as not compared.

The peers file (results/udpipe1-figures.json; the lead fills it, this script never writes it)
is JSON, one entry per treebank of configs/grids/treebanks/ud.yaml (benchmarks/tagging_bench.py
reads its en_ewt entry too)::

    {"system": "UDPipe 1.2.0",
     "how": "how the figures were made: version, calls, date",
     "treebanks": {
       "en_ewt": {"tags": {"upos": 93.6, "xpos": 92.9, "ufeats": 94.6, "alltags": 91.5,
                           "lemmas": 96.1},
                  "parse": {"uas": 80.2, "las": 77.1}},
       ...}}

In percent, on the test file, punctuation included; a score null or absent is not measured
(``-``). ``tags``: its tagger's accuracies (the keys of :data:`dparse.tagscores.TAG_SCORES`);
``parse``: its own pipeline's UAS and LAS (its tagger, then its parser). How they are
obtained, in a scratch folder (nothing of it committed): ``pip install ufal.udpipe``
(UDPipe 1); per treebank, with the grid's own files (train, dev, test: the small treebanks
train on dev with dev as heldout, esp and eus have no dev and so no heldout data, eus read
as ISO-8859-1 and given to UDPipe as UTF-8), one model trained with the default options and
no tokenizer (``Trainer.train("morphodita_parsito", train, heldout, "none",
Trainer.DEFAULT, Trainer.DEFAULT)``: gold tokenization); the test file with LEMMA, UPOS, XPOS
and FEATS blanked, read as CoNLL-U (its tokenization kept), tagged and parsed by it and written
as CoNLL-U; scored with ``dparse eval TEST OUTPUT --json`` (the CoNLL 2018 scorer's tag
counts). UDPipe's parser reads its own tagger's tags, so that output's tag scores are its
tagger's.

    python3 benchmarks/ud_table_tagged.py models/grids/ud-tagged --gold-grid models/grids/ud \\
        --peers results/udpipe1-figures.json -o results/ud-table-tagged.md
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path
from typing import Any

from common import (
    UD_GRID,
    UD_TAGGED_GRID,
    add_data_root,
    finished,
    finished_if_run,
    fmt_num,
    fmt_pair,
    fmt_speed,
    ok_by_cell,
    stale_mark,
    uas_las,
)

from dparse.batch.grid import load_grid
from dparse.outputs import write_text
from dparse.tagscores import TAG_SCORES

TAGGER = "tagger"  # the tagger config's stem in the grid
PARSERS = ("o1-cle", "o2-eisner")  # gold-tag configs; "<name>-tagged" on predicted tags
SUFFIX = "-tagged"
PEER_KEYS = {"tags": tuple(TAG_SCORES), "parse": ("uas", "las")}  # a peers file's entries
# issue 33's targets against UDPipe 1: dparse - UDPipe at least this (LAS: o2-eisner's)
TARGETS = {"upos": 0.3, "xpos": 0.0, "ufeats": 0.0, "lemmas": 0.0, "las": 3.0}


def load_peers(path: Path) -> dict[str, Any] | None:
    """The peers file (module doc), or None if there is none; ValueError naming the file and
    the treebank for a malformed one."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    treebanks = data.get("treebanks") if isinstance(data, dict) else None
    if not isinstance(treebanks, dict):
        raise ValueError(f"{path}: expected an object with a 'treebanks' object")
    for name, entry in treebanks.items():
        ok = isinstance(entry, dict) and set(entry) <= set(PEER_KEYS) and all(
            isinstance(part, dict) and set(part) <= set(PEER_KEYS[key])
            and all(v is None or isinstance(v, int | float) for v in part.values())
            for key, part in entry.items())
        if not ok:
            raise ValueError(f"{path}: treebank {name}: expected {{\"tags\": {{"
                             f"{', '.join(PEER_KEYS['tags'])}}}, \"parse\": {{uas, las}}}}, "
                             f"numbers or null; got {entry!r}")
    return data


def peer_score(peers: dict[str, Any], treebank: str, key: str) -> float | None:
    """The peer's score ``key`` (a tag score, ``uas`` or ``las``) on ``treebank``, if given."""
    entry = peers["treebanks"].get(treebank) or {}
    return (entry.get("parse" if key in PEER_KEYS["parse"] else "tags") or {}).get(key)


def _drop(gold: tuple[float, float] | None, predicted: tuple[float, float] | None) -> str:
    if gold is None or predicted is None:
        return "-"
    return f"{gold[0] - predicted[0]:.2f} / {gold[1] - predicted[1]:.2f}"


def _peer_rows(treebanks: list[str], ok: dict, peers: dict[str, Any]) -> list[str]:
    """The peer section: dparse / the peer (difference) per score and the targets missed."""
    system = peers.get("system", "UDPipe 1")
    name = {**TAG_SCORES, "las": "o2-eisner LAS"}
    lines = [f"## Beside {system} (same files, gold tokenization)", "",
             f"dparse / {system} (dparse - {system}): the tagger's accuracies, and o2-eisner on "
             f"predicted tags against {system}'s own pipeline (its tagger, then its parser). "
             "Targets (issue 33), dparse - peer at least: "
             + ", ".join(f"{TAG_SCORES.get(k, 'LAS')} {v:+.1f}" for k, v in TARGETS.items())
             + f". How its figures were made: {peers.get('how', 'not stated')}", "",
             "| treebank | " + " | ".join(name[k] for k in TARGETS) + " | targets |",
             "|" + "---|" * (len(TARGETS) + 2)]
    for tb in treebanks:
        tagger, parser = ok.get((tb, TAGGER)), ok.get((tb, PARSERS[-1] + SUFFIX))
        cells, missed, unchecked, compared = [], [], [], 0
        for key, target in TARGETS.items():
            mine = ((parser if key == "las" else tagger) or {}).get(key)
            theirs = peer_score(peers, tb, key)
            if mine is None or theirs is None:
                cells.append(f"{fmt_num(mine)} / {fmt_num(theirs)}")
                if mine is not None:  # a score of ours the peer has no figure for
                    unchecked.append(name[key])
                continue
            compared += 1
            if mine - theirs < target:
                missed.append(name[key])
            cells.append(f"{mine:.2f} / {theirs:.2f} ({mine - theirs:+.2f})")
        verdict = "-" if not compared else "missed: " + ", ".join(missed) if missed else "met"
        if compared and unchecked:
            verdict += "; not compared: " + ", ".join(unchecked)
        lines.append(f"| {tb} | " + " | ".join(cells) + f" | {verdict} |")
    return lines


def build(grid_dir: Path, records: list[dict], gold_records: list[dict],
          peers: dict[str, Any] | None = None, gold_dir: Path | None = None) -> str:
    """The Markdown report of the tagged grid's result ``records`` (cells under ``grid_dir``),
    the ud grid's ``gold_records`` (under ``gold_dir``) and the ``peers`` file's data."""
    treebanks = [tb.name for tb in load_grid(UD_TAGGED_GRID).treebanks if tb is not None]
    ok, gold = ok_by_cell(records), ok_by_cell(gold_records)
    now = datetime.datetime.now(datetime.UTC)
    source = f"and the gold-tag cells of `configs/grids/ud.yaml` ({gold_dir})" if gold_dir \
        else "(no gold-tag grid given)"
    lines = [
        "# Predicted tags on every treebank (issue 33)", "",
        f"Written {now:%Y-%m-%d %H:%M} UTC by `make ud-table TAGS=predicted` "
        f"(benchmarks/ud_table_tagged.py) from the grid `configs/grids/ud-tagged.yaml` "
        f"({grid_dir}) {source}. Machine: 2 cores shared with other jobs.",
        "Test files, gold tokenization, punctuation included; the treebanks' files and "
        "splits as in results/ud-table.md (`configs/grids/treebanks/ud.yaml`). Tagger "
        "(`configs/ud/tagger.yaml`): its accuracies on the test file tagged from its words "
        "alone (LEMMA, UPOS, XPOS and FEATS blanked; CoNLL 2018 scorer counts; '-': a column "
        "the treebank leaves empty). o1-cle and o2-eisner (`configs/ud/*-tagged.yaml`): "
        "trained on 10-fold jackknifed tags (dev tagged by the whole tagger), UAS / LAS "
        "parsing the test file from its words alone (their tagger first); gold: the same "
        "config on gold tags (`configs/ud/o1-cle.yaml`, `o2-eisner.yaml`, make ud-table); "
        "drop: gold - predicted. '-': not run (or failed; see the grids' results.md). *: from "
        "an earlier run of the cell whose resolved config differs from today's: rerun to "
        "refresh.", "",
        "| treebank | " + " | ".join(TAG_SCORES.values()) + " | "
        + " | ".join(f"{p} predicted | {p} gold | {p} drop" for p in PARSERS) + " |",
        "|" + "---|" * (1 + len(TAG_SCORES) + 3 * len(PARSERS))]
    for tb in treebanks:
        tagger = ok.get((tb, TAGGER))
        values = [(tagger or {}).get(k) for k in TAG_SCORES]
        cells = [fmt_num(v) + ("" if v is None else stale_mark(tagger)) for v in values]
        for p in PARSERS:
            pred, ref = ok.get((tb, p + SUFFIX)), gold.get((tb, p))
            cells += [fmt_pair(uas_las(pred)) + stale_mark(pred),
                      fmt_pair(uas_las(ref)) + stale_mark(ref),
                      _drop(uas_las(ref), uas_las(pred))]
        lines.append(f"| {tb} | " + " | ".join(cells) + " |")
    lines += ["", "## Speed (tokens/sec on the test file, one core: tagging alone, or tagging "
              "and parsing; x: relative to the same parser on gold tags in the ud grid, "
              "measured in other runs on shared cores, so only indicative) and training time "
              "(a parser's: its tagger, the jackknife and the parser)", "",
              "| treebank | tagger | " + " | ".join(p + SUFFIX for p in PARSERS) + " |",
              "|" + "---|" * (2 + len(PARSERS))]
    for tb in treebanks:
        cells = []
        for config, ref in ((TAGGER, None), *((p + SUFFIX, gold.get((tb, p))) for p in PARSERS)):
            cells.append(fmt_speed(ok.get((tb, config)), ref))
        lines.append(f"| {tb} | " + " | ".join(cells) + " |")
    if peers is not None:
        lines += ["", *_peer_rows(treebanks, ok, peers)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grid_dir", type=Path, help="the --out directory of the ud-tagged grid")
    parser.add_argument("--gold-grid", type=Path, default=None,
                        help="the --out directory of the ud grid (gold tags), if it was run")
    parser.add_argument("--peers", type=Path, default=Path("results/udpipe1-figures.json"),
                        help="UDPipe 1's figures (module doc), read if the file exists "
                        "[default: %(default)s]")
    parser.add_argument("-o", "--out", type=Path, default=Path("results/ud-table-tagged.md"))
    add_data_root(parser)
    args = parser.parse_args()
    gold_dir, gold = finished_if_run(args.gold_grid, args.data_root, UD_GRID)
    try:
        peers = load_peers(args.peers)
    except ValueError as exc:
        parser.error(str(exc))
    records = finished(args.grid_dir, args.data_root, UD_TAGGED_GRID)
    write_text(args.out, build(args.grid_dir, records, gold, peers, gold_dir))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
