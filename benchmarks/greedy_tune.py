"""Hyper-parameter search for greedy inference (Tchernowitz, Yedidsion and Reichart 2016,
Section 8): the dev UAS of a trained graph model under every setting of a YAML grid.

The grid (default configs/en_ewt/greedy-grid.yaml, every key commented there) names the decoder
and a list of stages; each stage maps keys to lists of values and decodes every combination,
and its best setting (highest dev UAS, the first on ties) is kept for the later stages. The
keys ``gamma1`` and ``gamma2`` are the ensemble's biases (Section 7): a stage with them decodes
biased towards ``--other`` (the exact parser's dev output; repeated, several parsers' outputs,
each raising its own parts as ``dparse ensemble`` does) and is skipped without it (gamma2
stays at its starting value for a first-order model, which has no parts it could raise); every
other key is a keyword option of the decoder. Settings start from the model config's decoder
options (when it names the same decoder) and its ensemble gammas.

The dev file is scored once: each sentence's arc, label and part arrays are kept in memory
(part arrays in float32 when float64 would need more than ``--cache-gb``; re-scored on every
pass if even that is too much), then every setting only decodes. Writes a Markdown report (a
table per stage: setting, dev UAS, decoding tokens/sec; the best in bold; the best setting as
config YAML) and the same as JSON next to it. Usage:

    python benchmarks/greedy_tune.py --model models/greedy/en_ewt-o1-bgi-pp \\
        --dev ../shared/data/en_ewt/dev.conllu --other dev.o1-cle.conllu \\
        --grid configs/en_ewt/greedy-grid.yaml --out results/greedy-tune-o1.md
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from dparse.config import load_config
from dparse.conll import Sentence, read_treebank
from dparse.decoders import check_decoder, configured_decoder
from dparse.errors import DparseError
from dparse.graph.ensemble import aligned, bias_parts, decode_scored
from dparse.graph.load import load_model
from dparse.graph.model import GraphModel
from dparse.metrics import evaluate, format_score
from dparse.modeldir import CONFIG_FILE
from dparse.outputs import write_text

GAMMAS = ("gamma1", "gamma2")
DEFAULT_GRID = Path(__file__).resolve().parents[1] / "configs" / "en_ewt" / "greedy-grid.yaml"


@dataclass
class Stage:
    """One stage of the grid: its name and the values of each key, in order."""

    name: str
    values: dict[str, list]

    @property
    def ensemble(self) -> bool:
        return any(key in GAMMAS for key in self.values)

    def settings(self) -> Iterator[dict]:
        """Every combination of the stage's values, the last key varying fastest."""
        keys = list(self.values)
        for combo in itertools.product(*self.values.values()):
            yield dict(zip(keys, combo, strict=True))


@dataclass
class Grid:
    decoder: str | None
    stages: list[Stage]


def load_grid(path: str | Path) -> Grid:
    """Read and check a grid file; DparseError naming the file and the bad entry."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DparseError(f"{path}: cannot read the grid: {exc}") from None
    if not isinstance(raw, dict) or set(raw) - {"decoder", "stages"}:
        raise DparseError(f"{path}: a grid is a mapping with the keys decoder and stages")
    decoder = raw.get("decoder")
    if decoder is not None and not isinstance(decoder, str):
        raise DparseError(f"{path}: decoder must be a decoder name or null")
    stages = raw.get("stages")
    if not isinstance(stages, list) or not stages:
        raise DparseError(f"{path}: stages must be a non-empty list")
    out = []
    for i, stage in enumerate(stages, 1):
        if not isinstance(stage, dict):
            raise DparseError(f"{path}: stage {i} must be a mapping")
        stage = dict(stage)
        name = str(stage.pop("name", f"stage {i}"))
        for key, values in stage.items():
            if not isinstance(values, list) or not values:
                raise DparseError(f"{path}: stage {i} ({name}): {key} must be a non-empty list")
            if key in GAMMAS and not all(isinstance(v, int | float) and v >= 0 for v in values):
                raise DparseError(f"{path}: stage {i} ({name}): {key} values must be >= 0")
        if not stage:
            raise DparseError(f"{path}: stage {i} ({name}) has no keys")
        out.append(Stage(name, stage))
    return Grid(decoder, out)


class DevScores:
    """The scores (arc, label, parts) of every dev sentence, computed once when they fit in
    ``budget`` bytes (parts in float32 when float64 does not fit), else on every pass;
    ``seconds`` is the time the first scoring took."""

    def __init__(self, model: GraphModel, sentences: list[Sentence], budget: float) -> None:
        t0 = time.perf_counter()
        self.model = model
        self.sentences = sentences
        self.encoded = [model.vocab.encode(s) for s in sentences]
        n_parts = len(model.score_parts(self.encoded[0], None, False)[2]) if sentences else 0
        self.higher_order = n_parts > 0
        sizes = np.array([len(s) + 1 for s in sentences], dtype=np.float64)
        first = float((sizes**2).sum()) * 12  # arc float64 + label int32
        higher = float((sizes**3).sum()) * n_parts
        self.dtype: type | None = None
        for dtype in (np.float64, np.float32):
            if first + higher * np.dtype(dtype).itemsize <= budget:
                self.dtype = dtype
                break
        self.cache = list(self._score()) if self.dtype is not None else None
        self.seconds = time.perf_counter() - t0

    def _score(self) -> Iterator[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
        for enc in self.encoded:
            arc, label, parts = self.model.score_parts(enc, None, False)
            if self.dtype is not None:
                parts = {k: v.astype(self.dtype, copy=False) for k, v in parts.items()}
            yield arc, label, parts

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
        return iter(self.cache) if self.cache is not None else self._score()

    @property
    def storage(self) -> str:
        if self.dtype is None:
            return "re-scored on every pass (too big to keep)"
        return f"kept in memory ({np.dtype(self.dtype).name} part arrays)"


def decode_all(scores: DevScores, decoder_name: str, options: dict, gammas: dict | None,
               others: list[list[Sentence]], single_root: bool) -> tuple[list[Sentence], float]:
    """The dev sentences parsed with one setting (biased towards ``others``, the other
    parsers' dev outputs, when ``gammas`` are given), and the decoding (and biasing) seconds."""
    decoder = configured_decoder(decoder_name, options)
    names = scores.model.vocab.labels
    parsed = []
    seconds = 0.0
    for k, (sent, (arc, label, parts)) in enumerate(zip(scores.sentences, scores, strict=True)):
        t0 = time.perf_counter()
        if gammas is not None:
            arc, parts = bias_parts(arc, parts, [other[k].heads for other in others],
                                    gammas["gamma1"], gammas["gamma2"])
        heads, labels = decode_scored(decoder, arc, label, parts, single_root)
        seconds += time.perf_counter() - t0
        parsed.append(sent.with_parse(heads, [""] + [names[i] for i in labels[1:]]))
    return parsed, seconds


def tune(model_dir: Path, scores: DevScores, grid: Grid, others: list[list[Sentence]],
         punct: str, log: Callable[[str], None] = print) -> dict:
    """Run the grid's stages over ``scores`` (the dev file scored by the model in
    ``model_dir``); returns the report as plain data (see ``write_report``)."""
    cfg = load_config(model_dir / CONFIG_FILE)
    decoder = grid.decoder or cfg.decoder.name
    options = dict(cfg.decoder.options) if decoder == cfg.decoder.name else {}
    gammas = {"gamma1": cfg.ensemble.gamma1, "gamma2": cfg.ensemble.gamma2}
    for stage in grid.stages:  # every decoder setting is valid before anything runs
        for setting in stage.settings():
            opts = {**options, **{k: v for k, v in setting.items() if k not in GAMMAS}}
            check_decoder(f"grid {stage.name!r}", "decoder", decoder, "options", opts)
    dev = scores.sentences
    list(aligned(dev, *others))
    report = {"model": str(model_dir), "decoder": decoder, "sentences": len(dev),
              "tokens": sum(len(s) for s in dev), "punct": punct, "storage": scores.storage,
              "score_seconds": scores.seconds, "start": {**options, **gammas},
              "stages": []}
    for stage in grid.stages:
        if stage.ensemble and not others:
            report["stages"].append({"name": stage.name, "skipped": "no --other parse"})
            log(f"{stage.name}: skipped (no --other parse)")
            continue
        if "gamma2" in stage.values and not scores.higher_order:
            # no sibling or grandparent parts: gamma2 changes nothing, keep the starting value
            stage = Stage(stage.name, {**stage.values, "gamma2": [gammas["gamma2"]]})
        rows = []
        for setting in stage.settings():
            opts = {**options, **{k: v for k, v in setting.items() if k not in GAMMAS}}
            gam = {**gammas, **{k: v for k, v in setting.items() if k in GAMMAS}}
            parsed, seconds = decode_all(scores, decoder, opts, gam if stage.ensemble else None,
                                         others, cfg.decoder.single_root)
            uas = evaluate(dev, parsed, punct=punct).uas
            rows.append({"setting": setting, "uas": uas,
                         "decode_tokens_per_second": report["tokens"] / max(seconds, 1e-9)})
            log(f"{stage.name}: {setting} -> UAS {format_score(uas, 0)}")
        best = max(range(len(rows)), key=lambda i: (rows[i]["uas"], -i))
        chosen = rows[best]["setting"]
        options.update({k: v for k, v in chosen.items() if k not in GAMMAS})
        gammas.update({k: v for k, v in chosen.items() if k in GAMMAS})
        report["stages"].append({"name": stage.name, "ensemble": stage.ensemble, "rows": rows,
                                 "best": best})
    report["best"] = {"decoder": {"name": decoder, "options": options}, "ensemble": gammas}
    return report


def write_report(report: dict, path: Path) -> None:
    lines = [f"# Greedy inference: dev tuning of `{report['model']}`", "",
             f"Decoder `{report['decoder']}`; {report['sentences']} dev sentences, "
             f"{report['tokens']} tokens, punctuation rule {report['punct']}; scores "
             f"{report['storage']}, computed in {report['score_seconds']:.1f}s. Starting "
             f"setting: {report['start']}. Each stage keeps its best setting (bold) for the "
             "next; decoding tokens/sec exclude scoring (lower bounds on a busy machine).", ""]
    for stage in report["stages"]:
        lines += [f"## {stage['name']}", ""]
        if "skipped" in stage:
            lines += [f"Skipped: {stage['skipped']}.", ""]
            continue
        keys = list(stage["rows"][0]["setting"])
        what = "ensemble dev UAS" if stage["ensemble"] else "dev UAS"
        lines += ["| " + " | ".join(keys) + f" | {what} | decoding tok/s |",
                  "|" + "---:|" * (len(keys) + 2)]
        for i, row in enumerate(stage["rows"]):
            cells = [f"{row['setting'][k]:g}" for k in keys]
            cells += [f"{row['uas']:.2f}", f"{row['decode_tokens_per_second']:,.0f}"]
            if i == stage["best"]:
                cells = [f"**{c}**" for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    best = report["best"]
    lines += ["## Best setting", "", "```yaml",
              yaml.safe_dump({"decoder": {"options": best["decoder"]["options"]},
                              "ensemble": best["ensemble"]}, sort_keys=False).rstrip(), "```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "\n".join(lines))
    write_text(path.with_suffix(".json"), json.dumps(report, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a trained graph model directory")
    ap.add_argument("--dev", required=True, help="the dev file (gold trees)")
    ap.add_argument("--grid", default=str(DEFAULT_GRID), help="the grid YAML file")
    ap.add_argument("--other", action="append", default=[],
                    help="another parser's output on the dev file: tunes the ensemble gammas "
                    "(repeat it for an ensemble with several parsers)")
    ap.add_argument("--out", default="results/greedy-tune.md")
    ap.add_argument("--punct", default="include", help="punctuation rule for dev UAS")
    ap.add_argument("--encoding", default="utf-8", help="encoding of --dev and --other")
    ap.add_argument("--cache-gb", type=float, default=2.0,
                    help="memory for the dev scores (beyond it: float32, then re-scoring)")
    args = ap.parse_args()
    try:
        grid = load_grid(args.grid)
        dev = read_treebank(args.dev, encoding=args.encoding)
        others = [read_treebank(path, encoding=args.encoding) for path in args.other]
        model_dir = Path(args.model)
        scores = DevScores(load_model(model_dir), dev, args.cache_gb * 2**30)
        report = tune(model_dir, scores, grid, others, args.punct,
                      log=lambda msg: print(msg, flush=True))
    except DparseError as exc:
        print(f"greedy_tune: error: {exc}", file=sys.stderr)
        sys.exit(2)
    write_report(report, Path(args.out))
    print(f"best: {report['best']}; report written to {args.out}")


if __name__ == "__main__":
    main()
