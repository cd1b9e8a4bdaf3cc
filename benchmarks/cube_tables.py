"""Tables 1-4 of Zhang and McDonald (2012), generalized higher-order parsing with cube
pruning, on our data (en_ewt stands in for the Penn Treebank; gold POS).

- ``table1``: exact first-, second- and third-order parsers and the cube-pruning model on
  en_ewt test: UAS, LAS, tokens/sec (configs o1-eisner, o2-eisner, o3-exact, o3-cube);
- ``table2``: o1-eisner, o2-eisner and o3-cube on the other treebanks of the data root
  (benchmarks/treebanks.py: each setup's train file, epoch chosen on dev when there is one);
- ``table3``: the feature-group ablation on en_ewt, one config per row
  (configs/en_ewt/o3-cube-<row>.yaml, each derived from o3-cube.yaml by :func:`ablation_text`),
  with each row's gain over the row above;
- ``table4``: the o3-cube model with beam k = 2, 5, 10, with and without recombination (parse-
  time ``decoder.options.k`` / ``decoder.options.recombination``): UAS, LAS, tokens/sec and
  search errors (dparse.search_errors: sentences whose gold tree outscores the prediction);
- ``write-configs``: (re)write the Table 3 configs from o3-cube.yaml.

Every report gives, measured in the same run on the same test file, the tokens/sec of the
first-order o1-cle parser as the reference speed (the machine is shared: absolute speeds are
lower bounds, ratios to the reference are what compares across runs). Tokens/sec count
encoding, scoring and decoding on one core (model loading and file reading excluded), as
``dparse parse`` reports them.

A model is trained only when missing (``greedy_tables.find_or_train``): looked up as
``<folder>/<config name>`` in ``--models`` and then in each ``--reuse`` folder, taken if it was
trained with the same config; ``--model NAME=DIR`` names a model directory for a config
outright (e.g. one trained elsewhere). Usage::

    python benchmarks/cube_tables.py table1 --data ../shared/data --models models \\
        --out results/cube-table1.md
    python benchmarks/cube_tables.py table4 --model o3-cube=/tmp/o3/en_ewt-o3-cube \\
        --reference /tmp/ref/o1-cle --out results/cube-table4.md
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from greedy_tables import find_or_train
from treebanks import CONFIGS, TREEBANKS, Treebank, config_for, missing_files

from dparse.config import load_config
from dparse.conll import Sentence, read_treebank
from dparse.errors import DparseError
from dparse.graph.thirdorder_settings import parse_groups
from dparse.metrics import evaluate
from dparse.modeldir import CONFIG_FILE
from dparse.outputs import write_text
from dparse.parsers import check_model_overrides, load_parser
from dparse.search_errors import search_errors
from dparse.timer import ParseTimer

REFERENCE = "o1-cle"
# Table 1: (row, config, the paper's UAS, LAS, tokens/sec on PTB section 23; None: not given)
TABLE1 = [
    ("1st-order exact", "o1-eisner", (91.80, 90.50, 2070)),
    ("2nd-order exact", "o2-eisner", (92.40, 91.12, 1110)),
    ("3rd-order exact", "o3-exact", (92.81, None, 50)),
    ("this paper (cube pruning, k = 5)", "o3-cube", (93.06, 91.86, 220)),
]
# Table 2: (column, config)
TABLE2 = [("1st-order exact", "o1-eisner"), ("2nd-order exact", "o2-eisner"),
          ("this paper", "o3-cube")]
# Table 3: (row, config, feature groups on, the paper's UAS, LAS, tokens/sec); each row a
# superset of the one above; the last row is o3-cube itself (every group on)
TABLE3 = [
    ("none", "o3-cube-none", (), (91.74, 90.46, 1510)),
    ("McDonald (2006) features + labels", "o3-cube-sib", ("sib",), (92.48, 91.25, 860)),
    ("Carreras (2007) features + labels", "o3-cube-carreras", ("sib", "grand"),
     (92.85, 91.66, 540)),
    ("Koo (2010) features + labels", "o3-cube-koo", ("sib", "grand", "trisib", "gsib"),
     (92.92, 91.75, 300)),
    ("all features", "o3-cube", None, (93.06, 91.86, 220)),
]
# Table 4: (k, recombination, the paper's UAS, LAS, tokens/sec; None: not in the paper)
TABLE4 = [
    (2, False, (92.86, 91.63, 280)), (2, True, (92.89, 91.65, 260)),
    (5, False, (93.05, 91.85, 240)), (5, True, (93.06, 91.86, 230)),
    (10, False, None), (10, True, (93.05, 91.85, 140)),
]
CUBE = "o3-cube"

def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- models and measurements ----------------------------------------------------------------------

@dataclass
class Models:
    """Where models come from: ``explicit`` config name -> directory, else found or trained by
    ``find_or_train`` in ``folder`` (then ``reuse``); ``data`` the data root, ``overrides``
    patch every config that is trained here."""

    folder: Path
    reuse: list[Path]
    explicit: dict[str, Path]
    data: str
    overrides: list[str]

    def get(self, name: str, tb: Treebank | None = None) -> Path:
        """The model directory of config ``name`` (configs/en_ewt/NAME.yaml), on the treebank
        setup ``tb`` (None: the config's own files, en_ewt)."""
        key = name if tb is None else f"{tb.name}:{name}"
        if key in self.explicit:
            return self.explicit[key]
        if tb is None:
            cfg = load_config(CONFIGS / f"{name}.yaml", self.overrides, data_root=self.data)
        else:
            cfg = load_config(raw=config_for(name, tb, None), overrides=self.overrides,
                              data_root=self.data)
        return find_or_train(cfg, self.folder, self.reuse, log)


def measure(model_dir: Path, test: Sequence[Sentence], punct: str,
            overrides: Sequence[str] = ()) -> dict:
    """Parse ``test`` with the model (``overrides``: parse-time ``key=value`` settings, as
    ``dparse parse --set``): {"uas", "las", "tokens_per_second", "seconds", "tokens"}."""
    check_model_overrides(model_dir, overrides)
    cfg = load_config(model_dir / CONFIG_FILE, list(overrides))
    parser = load_parser(model_dir, cfg, None)
    timer = ParseTimer()
    parsed = list(parser.parse(test, timer))
    report = evaluate(test, parsed, punct=punct)
    return {"uas": report.uas, "las": report.las, "tokens_per_second": timer.tokens_per_second,
            "seconds": timer.seconds, "tokens": timer.tokens}


def count_search_errors(model_dir: Path, gold: Path, overrides: Sequence[str],
                        encoding: str = "utf-8") -> dict:
    """{"search_errors", "sentences", "unreachable", "unreachable_higher"} of the model's
    decoder (with ``overrides``) on ``gold`` by dparse.search_errors (labeled trees for a
    third-order cube model), or {"error": why} when they cannot be counted."""
    try:
        counts = search_errors(model_dir, gold, overrides=overrides, encoding=encoding).total
    except (DparseError, ValueError) as exc:
        return {"error": str(exc).splitlines()[0]}
    return {"search_errors": counts.search_errors, "sentences": counts.sentences,
            "unreachable": counts.unreachable, "unreachable_higher": counts.unreachable_higher}


# -- pure helpers: cells, rows, configs -----------------------------------------------------------

def cell(value: float | None, digits: int = 2) -> str:
    """A table cell: the number, or "-" for a missing one."""
    return "-" if value is None else f"{value:,.{digits}f}"


def paper_cells(paper: tuple | None) -> list[str]:
    """The paper's UAS, LAS and tokens/sec as cells ("-" where it gives none)."""
    if paper is None:
        return ["-", "-", "-"]
    return [cell(paper[0]), cell(paper[1]), cell(paper[2], 0)]


def speed_cells(row: Mapping, reference_tps: float) -> list[str]:
    """Tokens/sec and its ratio to the reference's of the same run."""
    tps = row["tokens_per_second"]
    return [f"{tps:,.0f}", f"{tps / reference_tps:.3f}" if reference_tps > 0 else "-"]


def header(title: str, punct: str, test: str, reference: Mapping, reference_dir: Path) -> list[str]:
    """Title, date, machine note, scoring rule and the same-run reference speed."""
    return [f"# {title}", "",
            f"{datetime.date.today()}, 2 shared cores (other jobs running: speeds are lower "
            "bounds; compare ratios to the reference). Test file: " + test + " of the data "
            "root; punctuation: "
            f"{punct}; UAS and LAS in percent (LAS: full DEPREL). Tokens/sec: encoding, scoring "
            "and decoding on one core, model loading excluded.", "",
            f"Reference speed, same run and file: {REFERENCE} (`{reference_dir}`) "
            f"{reference['tokens_per_second']:,.0f} tokens/sec (UAS {reference['uas']:.2f}, "
            f"LAS {reference['las']:.2f}).", ""]


def table1_lines(rows: Sequence[Mapping], reference_tps: float) -> list[str]:
    """Table 1: one row per {"row", "config", "paper", and measured uas, las,
    tokens_per_second} (a row without "uas" was not run: "-")."""
    lines = ["| parser | config | UAS | LAS | tokens/sec | x o1-cle speed | paper UAS | "
             "paper LAS | paper tok/s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        measured = ([cell(r["uas"]), cell(r["las"]), *speed_cells(r, reference_tps)]
                    if "uas" in r else ["-"] * 4)
        lines.append(f"| {r['row']} | {r['config']} | " + " | ".join(
            measured + paper_cells(r["paper"])) + " |")
    return lines


def table2_lines(results: Sequence[Mapping], columns: Sequence[str]) -> list[str]:
    """Table 2: one row per {"treebank", "scores": {column: {"uas", "las"}}}, UAS / LAS per
    column (best UAS of a row in bold), and the average over treebanks with every column."""
    lines = ["| treebank | " + " | ".join(f"{c} UAS / LAS" for c in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for r in results:
        uas = [r["scores"][c]["uas"] for c in columns if c in r["scores"]]
        best = max(uas) if uas else None
        cells = []
        for c in columns:
            s = r["scores"].get(c)
            if s is None:
                cells.append("-")
                continue
            text = f"{s['uas']:.2f} / {s['las']:.2f}"
            cells.append(f"**{text}**" if s["uas"] == best else text)
        lines.append(f"| {r['treebank']} | " + " | ".join(cells) + " |")
    full = [r for r in results if all(c in r["scores"] for c in columns)]
    if len(full) > 1:
        mean = {c: (np.mean([r["scores"][c]["uas"] for r in full]),
                    np.mean([r["scores"][c]["las"] for r in full])) for c in columns}
        lines.append(f"| average ({len(full)}) | " + " | ".join(
            f"{mean[c][0]:.2f} / {mean[c][1]:.2f}" for c in columns) + " |")
    return lines


def gains(rows: Sequence[Mapping]) -> list[tuple[float, float] | None]:
    """Each row's (UAS, LAS) gain over the row above (None for the first row and next to a row
    that was not run)."""
    out: list[tuple[float, float] | None] = [None]
    for above, row in zip(rows, rows[1:], strict=False):
        ok = "uas" in above and "uas" in row
        out.append((row["uas"] - above["uas"], row["las"] - above["las"]) if ok else None)
    return out


def table3_lines(rows: Sequence[Mapping], reference_tps: float) -> list[str]:
    """Table 3: per row its measures, its gain over the row above and the paper's figures."""
    lines = ["| higher-order features | config | UAS | LAS | gain UAS | gain LAS | tokens/sec | "
             "x o1-cle speed | paper UAS | paper LAS | paper tok/s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r, gain in zip(rows, gains(rows), strict=True):
        measured = ([cell(r["uas"]), cell(r["las"])] if "uas" in r else ["-", "-"])
        measured += ["-", "-"] if gain is None else [f"{gain[0]:+.2f}", f"{gain[1]:+.2f}"]
        measured += speed_cells(r, reference_tps) if "uas" in r else ["-", "-"]
        lines.append(f"| {r['row']} | {r['config']} | " + " | ".join(
            measured + paper_cells(r["paper"])) + " |")
    return lines


def table4_lines(rows: Sequence[Mapping], reference_tps: float) -> list[str]:
    """Table 4: per (k, recombination) setting its measures and search errors."""
    lines = ["| beam k | recombination | UAS | LAS | tokens/sec | x o1-cle speed | "
             "search errors | paper UAS | paper LAS | paper tok/s |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        se = r.get("search", {})
        errors = "n/a"
        if "search_errors" in se:
            errors = f"{se['search_errors']} / {se['sentences']}"
            if se.get("unreachable"):
                errors += (f" (gold unreachable: {se['unreachable']}, scoring higher in "
                           f"{se.get('unreachable_higher', 0)})")
        lines.append(f"| {r['k']} | {'yes' if r['recombination'] else 'no'} | "
                     f"{cell(r['uas'])} | {cell(r['las'])} | "
                     + " | ".join(speed_cells(r, reference_tps)) + f" | {errors} | "
                     + " | ".join(paper_cells(r["paper"])) + " |")
    return lines


def table4_overrides(k: int, recombination: bool) -> list[str]:
    """The parse-time settings of one Table 4 row."""
    return [f"decoder.options.k={k}",
            f"decoder.options.recombination={'true' if recombination else 'false'}"]


# Table 3 configs: o3-cube.yaml with its name and ``features.groups`` rewritten, comments kept

def feature_groups(text: str) -> tuple[str, ...]:
    """The feature groups (``features.groups``: "none" or comma-separated names, see
    dparse.graph.thirdorder) of a config text. DparseError if it names none or bad ones."""
    groups = (yaml.safe_load(text) or {}).get("features", {}).get("groups")
    if not isinstance(groups, str):
        raise DparseError("the config has no features.groups string of feature groups")
    try:
        return parse_groups(groups)
    except ValueError as exc:
        raise DparseError(str(exc)) from None


def ablation_text(base: str, name: str, row: str, enabled: Sequence[str]) -> str:
    """The config text of one Table 3 row: ``base`` (the o3-cube config text) with ``name``,
    a first comment naming the row, and ``features.groups`` set to ``enabled`` (in the base's
    order; "none" if empty), every other line and comment kept. DparseError for a group the
    base lacks."""
    groups = feature_groups(base)
    unknown = sorted(set(enabled) - set(groups))
    if unknown:
        raise DparseError(f"feature group(s) {', '.join(unknown)} not in the base config "
                          f"(it has {', '.join(groups) or 'none'})")
    value = ",".join(g for g in groups if g in enabled) or "none"
    out, section = [], None
    for line in base.splitlines(keepends=True):
        if re.match(r"^[A-Za-z_]", line):
            section = line.split(":", 1)[0]
            if section == "name":
                line = f"name: {name}\n"
        elif section == "features":
            line = re.sub(r"^(\s+groups:\s*)[^#\s][^#]*?(\s*(#.*)?)$", rf"\g<1>{value}\g<2>",
                          line.rstrip("\n")) + "\n"
        out.append(line)
    text = (f"# Table 3 row \"{row}\" of Zhang and McDonald (2012):\n# o3-cube.yaml "
            f"with the feature groups {value} (written by `make cube-configs`).\n"
            + "".join(out))
    derived = yaml.safe_load(text)
    if derived.get("name") != name or derived["features"]["groups"] != value:
        raise DparseError("could not rewrite the base config (its name and features.groups "
                          "must each be one 'KEY: value' line)")
    return text


def table3_configs(base: str) -> dict[str, str]:
    """Config file stem -> text of every Table 3 row but the last (o3-cube itself)."""
    return {config: ablation_text(base, f"en_ewt-{config}", row, groups)
            for row, config, groups, _ in TABLE3 if groups is not None}


# -- the tables -----------------------------------------------------------------------------------

def en_ewt_test(data: str) -> tuple[Path, list[Sentence]]:
    tb = TREEBANKS[0]
    path = Path(data) / tb.test
    return path, read_treebank(path, encoding=tb.encoding)


def run_reference(args: argparse.Namespace, models: Models,
                  test: Sequence[Sentence]) -> tuple[Path, dict]:
    ref_dir = Path(args.reference) if args.reference else models.get(REFERENCE)
    return ref_dir, measure(ref_dir, test, args.punct)


def run_table1(args: argparse.Namespace, models: Models) -> list[str]:
    _, test = en_ewt_test(args.data)
    dirs = {config: models.get(config) for _, config, _ in TABLE1 if config not in args.skip
            and ((CONFIGS / f"{config}.yaml").is_file() or config in models.explicit)}
    ref_dir, ref = run_reference(args, models, test)  # after any training
    rows, used = [], []
    for row, config, paper in TABLE1:
        entry = {"row": row, "config": config, "paper": paper}
        if config in dirs:
            model_dir = dirs[config]
            entry.update(measure(model_dir, test, args.punct))
            used.append(f"- {config}: `{model_dir}`")
            log(f"{config}: UAS {entry['uas']:.2f} LAS {entry['las']:.2f} "
                f"{entry['tokens_per_second']:,.0f} tok/s")
        elif config in args.skip:
            used.append(f"- {config}: not run (--skip)")
        else:
            used.append(f"- {config}: configs/en_ewt/{config}.yaml missing, not run")
        rows.append(entry)
    return (header("Table 1 of Zhang and McDonald (2012) on en_ewt", args.punct, TREEBANKS[0].test,
                   ref, ref_dir)
            + table1_lines(rows, ref["tokens_per_second"])
            + ["", "Paper: PTB (Penn2Malt), predicted POS, punctuation excluded; its "
               "3rd-order exact parser is unlabeled. Models:", "", *used, ""])


def run_table2(args: argparse.Namespace, models: Models) -> list[str]:
    wanted = set(args.treebanks.split(",")) if args.treebanks else None
    columns = [c for c, _ in TABLE2]
    results = []
    lines_models = []
    for tb in TREEBANKS:
        if (wanted is None and tb.name == "en_ewt") or (wanted and tb.name not in wanted):
            continue
        missing = missing_files(tb, args.data)
        if missing:
            log(f"skip {tb.name}: missing {', '.join(missing)}")
            continue
        test = read_treebank(Path(args.data) / tb.test, encoding=tb.encoding)
        result: dict = {"treebank": tb.name, "scores": {}}
        for column, config in TABLE2:
            model_dir = models.get(config, tb)
            result["scores"][column] = measure(model_dir, test, args.punct)
            lines_models.append(f"- {tb.name}, {config}: `{model_dir}`")
        results.append(result)
        log(f"{tb.name}: " + ", ".join(f"{c} {s['uas']:.2f}/{s['las']:.2f}"
                                       for c, s in result["scores"].items()))
        save(args, table2_report(args, results, columns, lines_models))  # after each treebank
    return table2_report(args, results, columns, lines_models)


def table2_report(args: argparse.Namespace, results: list[dict], columns: list[str],
                  lines_models: list[str]) -> list[str]:
    return ["# Table 2 of Zhang and McDonald (2012) on the other treebanks", "",
            f"{datetime.date.today()}, 2 shared cores. Test sets; punctuation: {args.punct}; "
            "UAS / LAS in percent, best UAS of each treebank in bold. Setups of "
            "benchmarks/treebanks.py: UD treebanks train on train and choose the epoch on "
            "dev; the small UD sets of the CoNLL languages train on dev (no model selection); "
            "esp and eus are the CoNLL 2007 subset (no dev).", "",
            *table2_lines(results, columns), "", "Models:", "", *lines_models, ""]


def run_table3(args: argparse.Namespace, models: Models) -> list[str]:
    _, test = en_ewt_test(args.data)
    dirs = {config: models.get(config) for _, config, _, _ in TABLE3}
    ref_dir, ref = run_reference(args, models, test)  # after any training
    rows, used = [], []
    for row, config, _, paper in TABLE3:
        entry = {"row": row, "config": config, "paper": paper}
        model_dir = dirs[config]
        entry.update(measure(model_dir, test, args.punct))
        used.append(f"- {config}: `{model_dir}`")
        log(f"{config}: UAS {entry['uas']:.2f} LAS {entry['las']:.2f}")
        rows.append(entry)
    return (header("Table 3 of Zhang and McDonald (2012) on en_ewt: feature-group ablation",
                   args.punct, TREEBANKS[0].test, ref, ref_dir)
            + table3_lines(rows, ref["tokens_per_second"])
            + ["", "Each row adds feature groups to the row above (configs/en_ewt/"
               "o3-cube-<row>.yaml, derived from o3-cube.yaml); every row decodes with cube "
               "pruning. Gain: over the row above. Models:", "", *used, ""])


def run_table4(args: argparse.Namespace, models: Models) -> list[str]:
    path, test = en_ewt_test(args.data)
    model_dir = models.get(CUBE)
    ref_dir, ref = run_reference(args, models, test)  # after any training
    rows = []
    for k, recombination, paper in TABLE4:
        overrides = table4_overrides(k, recombination)
        entry = {"k": k, "recombination": recombination, "paper": paper,
                 **measure(model_dir, test, args.punct, overrides)}
        entry["search"] = count_search_errors(model_dir, path, overrides)
        log(f"k={k} recombination={recombination}: UAS {entry['uas']:.2f} "
            f"LAS {entry['las']:.2f} {entry['tokens_per_second']:,.0f} tok/s, "
            f"search {entry['search']}")
        rows.append(entry)
    errors = sorted({r["search"]["error"] for r in rows if "error" in r["search"]})
    return (header("Table 4 of Zhang and McDonald (2012) on en_ewt: beam and recombination",
                   args.punct, TREEBANKS[0].test, ref, ref_dir)
            + table4_lines(rows, ref["tokens_per_second"])
            + ["", f"One model (`{model_dir}`), parsed with `--set decoder.options.k=K --set "
               "decoder.options.recombination=...`. Search errors: test sentences whose gold "
               "tree scores higher under the model than the predicted tree (`dparse "
               "search-errors`; for the third-order cube model both trees are scored "
               "labeled by the model). Gold trees the decoder "
               "cannot build (non-projective, an arc the pruner removed, a gold label outside "
               "the arc's candidate labels) are unreachable, never search errors; the "
               "parenthesis says how many, and in how many of them gold still scores higher.",
               *[f"Search errors n/a: {e}" for e in errors], ""])


def write_configs(args: argparse.Namespace) -> None:
    base = (CONFIGS / f"{CUBE}.yaml").read_text(encoding="utf-8")
    for stem, text in table3_configs(base).items():
        target = CONFIGS / f"{stem}.yaml"
        write_text(target, text)
        log(f"wrote {target}")


TABLES = {"table1": run_table1, "table2": run_table2, "table3": run_table3,
          "table4": run_table4}


def save(args: argparse.Namespace, lines: list[str]) -> Path:
    """Write the report (``--out``, default results/cube-<table>.md) whole."""
    out = Path(args.out or f"results/cube-{args.what}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, "\n".join(lines))
    return out


def parse_models(items: Sequence[str]) -> dict[str, Path]:
    """``NAME=DIR`` (or ``TREEBANK:NAME=DIR``) items -> {NAME: Path(DIR)}."""
    out = {}
    for item in items:
        name, sep, directory = item.partition("=")
        if not sep or not name or not directory:
            raise DparseError(f"--model takes NAME=DIR, got {item!r}")
        out[name] = Path(directory)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=[*TABLES, "write-configs"])
    ap.add_argument("--data", default="../shared/data", help="data root")
    ap.add_argument("--out", default=None, help="Markdown report [results/cube-<table>.md]")
    ap.add_argument("--models", default="models", help="where missing models are trained")
    ap.add_argument("--reuse", action="append", default=[],
                    help="another folder of models to take matching ones from (repeatable)")
    ap.add_argument("--model", action="append", default=[], metavar="NAME=DIR",
                    help="use DIR as the model of config NAME (TREEBANK:NAME for Table 2)")
    ap.add_argument("--reference", default=None,
                    help=f"the {REFERENCE} model directory [found or trained like the others]")
    ap.add_argument("--skip", action="append", default=[], metavar="CONFIG",
                    help="Table 1: leave the row of this config out (repeatable)")
    ap.add_argument("--treebanks", default=None,
                    help="Table 2: comma-separated setups [every one but en_ewt]")
    ap.add_argument("--punct", default="include", help="punctuation rule for scoring")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override of every config trained here (repeatable)")
    args = ap.parse_args()
    if args.what == "write-configs":
        write_configs(args)
        return
    models = Models(Path(args.models), [Path(p) for p in args.reuse], parse_models(args.model),
                    args.data, args.set)
    lines = TABLES[args.what](args, models)
    save(args, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
