"""Tables 1 and 2 of Levi, Reichart and Rappoport (2016) on the treebanks under the data root.

For every treebank: trains D-MST (first-order, Chu-Liu-Edmonds), U-MST-df (directed features,
f = mean, undirected MST) and U-MST-uf (undirected features on length-dictionary-pruned
graphs); parses test with D-MST, U-MST-uf, U-MST-uf-lep (U-MST-uf + 5 LEP moves scored by
D-MST, which also labels the U-MST-uf arcs) and U-MST-df. Writes, in Markdown:

- Table 1: directed / undirected UAS (D-UAS/U-UAS) of the four models per treebank;
- Table 2: the share of sentences D-MST and U-MST-uf-lep each parse better, and the oracle UAS
  (+ its gain over D-MST);
- the pruning figures (undirected edges removed, gold arcs kept) and tokens/sec per model.

Models already present under --models are reused. Usage:
    python benchmarks/umst_tables.py --data ../shared/data --out results/umst-tables.md
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import TREEBANKS, config_for, missing_files

from dparse.batch.grid import Treebank
from dparse.config import load_config
from dparse.conll import Sentence, read_treebank
from dparse.decoders import get_decoder
from dparse.epochs import save_model
from dparse.graph.model import ArcFactoredModel
from dparse.graph.training import train
from dparse.metrics import evaluate, format_score
from dparse.oracle import oracle
from dparse.outputs import write_text
from dparse.prune import prune_stats
from dparse.timer import ParseTimer
from dparse.undirected.parser import UndirectedModel, UndirectedParser, train_undirected

MODELS = ("D-MST", "U-MST-uf-lep", "U-MST-uf", "U-MST-df")
# the configs trained per treebank (configs/en_ewt/NAME.yaml): the directed ones by row, and
# U-MST-uf, which parses with LEP moves and labels from the D-MST model
DIRECTED = {"D-MST": "o1-cle", "U-MST-df": "o1-umst-df"}
UNDIRECTED = "o1-umst-uf"


def timed(parse, sentences: list[Sentence]) -> tuple[list[Sentence], float]:
    """Parsed sentences and tokens/sec of inference (encoding, scoring, decoding)."""
    timer = ParseTimer()
    out = list(parse(sentences, timer))
    return out, timer.tokens_per_second


def run_treebank(tb: Treebank, data_root: str, models: Path, epochs: int | None,
                 punct: str, log) -> dict:
    test = read_treebank(Path(data_root) / tb.test, encoding=tb.encoding)
    result: dict = {"treebank": tb.name, "sentences": len(test)}
    # D-MST and U-MST-df: the directed first-order parser with the cle / umst-df decoders
    directed = {}
    for key, cname in DIRECTED.items():
        cfg = load_config(raw=config_for(cname, tb, epochs), data_root=data_root)
        out = models / cfg.name
        if not (out / "weights.bin").is_file():
            t0 = time.perf_counter()
            save_model(train(cfg, progress=False), cfg, out)
            log(f"{tb.name}: trained {key} in {time.perf_counter() - t0:.0f}s")
        model = ArcFactoredModel.load(out)
        directed[key] = model
        decoder = get_decoder(cfg.decoder.name)
        parsed, tps = timed(lambda s, t, m=model, d=decoder: m.parse(s, d, True, t), test)
        result[key] = (parsed, tps)
    # U-MST-uf, then with LEP; D-MST scores the LEP moves and labels the arcs
    raw = config_for(UNDIRECTED, tb, epochs)
    raw["umst"]["directed_model"] = str(models / f"{tb.name}-{DIRECTED['D-MST']}")
    cfg = load_config(raw=raw, data_root=data_root)
    out = models / cfg.name
    if not (out / "weights.bin").is_file():
        t0 = time.perf_counter()
        save_model(train_undirected(cfg, progress=False), cfg, out)
        log(f"{tb.name}: trained U-MST-uf in {time.perf_counter() - t0:.0f}s")
    umodel = UndirectedModel.load(out)
    steps_lep = load_config(raw={**raw, "umst": {**raw["umst"], "lep_steps": 5}}).umst.lep_steps
    for key, steps in (("U-MST-uf", 0), ("U-MST-uf-lep", steps_lep)):
        parser = UndirectedParser(umodel, directed["D-MST"], steps, True, cfg.umst.method)
        parsed, tps = timed(parser.parse, test)
        result[key] = (parsed, tps)
        if steps:
            result["lep_moves_per_sentence"] = parser.moves / max(len(test), 1)
    if umodel.pruner is not None:
        result["prune"] = prune_stats(umodel.pruner, test).as_dict()
    scores = {}
    for key in MODELS:
        parsed, tps = result.pop(key)
        rep = evaluate(test, parsed, punct=punct)
        scores[key] = {"uas": rep.uas, "u_uas": rep.u_uas, "las": rep.las,
                       "tokens_per_second": tps}
        result.setdefault("_parsed", {})[key] = parsed
    result["scores"] = scores
    orc = oracle(test, [result["_parsed"]["D-MST"], result["_parsed"]["U-MST-uf-lep"]],
                 ["D-MST", "U-MST-uf-lep"], punct)
    result["oracle"] = orc.as_dict()
    del result["_parsed"]
    return result


def write_report(results: list[dict], punct: str, path: Path) -> None:
    names = [r["treebank"] for r in results]
    lines = ["# Levi, Reichart and Rappoport (2016) on our data", "",
             f"Test sets; punctuation rule: {punct}. D-UAS/U-UAS in percent.", "",
             "## Table 1: directed / undirected UAS", "",
             "| model | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for key in MODELS:
        cells = [f"{format_score(r['scores'][key]['uas'], 0, 1)}/"
                 f"{format_score(r['scores'][key]['u_uas'], 0, 1)}" for r in results]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    lines += ["", "## Table 2: % sentences parsed better, oracle UAS (+ gain over D-MST)", "",
              "| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    lines.append("| D-MST | " + " | ".join(format_score(r["oracle"]["better"][0], 0, 1)
                                          for r in results) + " |")
    lines.append("| U-MST-uf-lep | " + " | ".join(format_score(r["oracle"]["better"][1], 0, 1)
                                                 for r in results) + " |")
    lines.append("| Oracle | " + " | ".join(
        f"{format_score(r['oracle']['oracle_uas'], 0)} "
        f"({format_score(r['oracle']['oracle_gain'], 0, sign=True)})"
        for r in results) + " |")
    lines += ["", "## Length-dictionary pruning (test graphs) and speed", "",
              "| treebank | edges removed % | gold arcs kept % | LEP moves/sent | "
              + " | ".join(f"{k} tok/s" for k in MODELS) + " |",
              "|---|---:|---:|---:|" + "---:|" * len(MODELS)]
    for r in results:
        p = r.get("prune", {})
        lines.append(
            f"| {r['treebank']} | {p.get('edges_removed_pct', 0):.1f} | "
            f"{p.get('gold_kept_pct', 100):.2f} | {r.get('lep_moves_per_sentence', 0):.2f} | "
            + " | ".join(f"{r['scores'][k]['tokens_per_second']:,.0f}" for k in MODELS) + " |")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "\n".join(lines) + "\n")
    write_text(path.with_suffix(".json"), json.dumps(results, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="../shared/data", help="data root")
    ap.add_argument("--out", default="results/umst-tables.md")
    ap.add_argument("--models", default="models", help="model directories (reused if present)")
    ap.add_argument("--treebanks", default=None, help="comma-separated subset of the setups")
    ap.add_argument("--epochs", type=int, default=None, help="override training epochs")
    ap.add_argument("--punct", default="include", help="punctuation rule for scoring")
    args = ap.parse_args()
    wanted = set(args.treebanks.split(",")) if args.treebanks else None
    results = []
    for tb in TREEBANKS:
        if wanted is not None and tb.name not in wanted:
            continue
        missing = missing_files(tb, args.data)
        if missing:
            print(f"skip {tb.name}: missing {', '.join(missing)}", flush=True)
            continue
        results.append(run_treebank(tb, args.data, Path(args.models), args.epochs, args.punct,
                                    lambda msg: print(msg, flush=True)))
        write_report(results, args.punct, Path(args.out))
        print(f"{tb.name}: " + ", ".join(f"{k} {format_score(v['uas'], 0)}/"
                                         f"{format_score(v['u_uas'], 0)}"
                                         for k, v in results[-1]["scores"].items())
              + f"; oracle {format_score(results[-1]['oracle']['oracle_uas'], 0)}", flush=True)


if __name__ == "__main__":
    main()
