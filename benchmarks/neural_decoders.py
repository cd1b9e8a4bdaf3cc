"""results/neural-decoders.md: seed 000's question (is greedy inference enough?) asked of a
second-order neural network's scores (make neural-decoders).

One second-order neural model (``neural.order: 2``, e.g. configs/en_ewt/neural-o2.yaml trained
into ``--model``; with ``--config``, trained first when missing) scores the test file once, in
batches, on one torch thread; each row decodes those scores with one decoder: the exact
projective second-order Eisner of sibling and grandparent parts (``eisner2-sibgp``, the
reference for SARC), sibling parts only (``eisner2-sib``), dual decomposition (``dd2``), the
greedy ``bgi`` and ``bgi-pp``, ``bgi-pp`` with post-search improvement (``improve``) and a beam
(``beam``), and the first-order arc scores alone by Chu-Liu-Edmonds (``cle``: what the
second-order parts add). The input is the test file's words alone for a model that reads no tags
(LEMMA, UPOS, XPOS, FEATS blanked), else the file as it is.

Measures (punctuation included): UAS, LAS, SARC (the share of tokens whose head agrees with the
exact decoder's), and tokens/sec on one core: the network's scoring time, shared by every row,
plus the row's own decoding time; the ratio to the reference model's tokens/sec
(``--reference``, o1-cle, parsed in the same run).

    python benchmarks/neural_decoders.py --model models/en_ewt-neural-o2 \\
        --config configs/en_ewt/neural-o2.yaml --reference models/en_ewt-o1-cle \\
        --test ../shared/data/en_ewt/test.conllu \\
        --out results/neural-decoders.md
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import dparse.cli  # noqa: F401  (numpy's BLAS on one thread, as in dparse parse)
from dparse.conll import Sentence, read_treebank
from dparse.decoders import configured_decoder
from dparse.metrics import evaluate
from dparse.parsers import ParserSpec
from dparse.timer import ParseTimer

# (row, decoder, options): the exact reference first
ROWS = [
    ("exact (eisner2-sibgp)", "eisner2-sibgp", {}),
    ("eisner2-sib (no grandparents)", "eisner2-sib", {}),
    ("DD (dd2)", "dd2", {"max_iter": 100, "step": 2.0}),
    ("BGI", "bgi", {}),
    ("BGI-PP", "bgi-pp", {"alpha": 0.25, "beta": 0.6}),
    ("BGI-PP + i", "bgi-pp", {"alpha": 0.25, "beta": 0.6, "improve": 5}),
    ("BGI-PP + i + b", "bgi-pp", {"alpha": 0.25, "beta": 0.6, "improve": 5, "beam": 3}),
    ("first order only (cle)", "cle", {}),
]


def decode_all(model_dir: Path, test: list[Sentence]) -> tuple[float, dict[str, tuple[float,
                                                                                     list]]]:
    """The scoring seconds and, for each row, its decoding seconds (the part arrays filled,
    decoding, the labels of the tree's arcs: what a parse spends after the network) and its
    parses."""
    from dparse.graph.model import PartScratch
    from dparse.neural.model import NeuralModel

    model = NeuralModel.read_files(model_dir)
    t0 = time.perf_counter()
    encoded = [enc for _, _, enc in model.encoded(((s, None) for s in test), ParseTimer())]
    scoring = time.perf_counter() - t0
    names = model.vocab.labels
    rows = {}
    for row, name, options in ROWS:
        decoder = configured_decoder(name, options)
        scratch = PartScratch(zeroed=decoder.reads_pruned_parts)
        parsed = []
        t1 = time.perf_counter()
        for sent, enc in zip(test, encoded, strict=True):
            heads, labels = model.predict(enc, decoder, True, scratch=scratch)
            parsed.append(sent.with_parse(heads, [""] + [names[i] for i in labels[1:]]))
        rows[row] = (time.perf_counter() - t1, parsed)
    return scoring, rows


def build(model_dir: Path, reference: Path, test_file: Path) -> str:
    gold = list(read_treebank(test_file))
    from dparse.config import load_config

    cfg = load_config(model_dir / "config.yaml")
    given = gold if cfg.neural.tags != "none" else [s.words_only() for s in gold]
    tokens = sum(len(s) for s in gold)
    ref_timer = ParseTimer()
    list(ParserSpec(str(reference)).load().parse(gold, ref_timer))
    ref_speed = ref_timer.tokens_per_second
    scoring, rows = decode_all(model_dir, given)
    exact = rows[ROWS[0][0]][1]
    lines = [
        "# Decoders on second-order neural scores (en_ewt test)", "",
        f"Written {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC by `make neural-decoders` "
        f"(benchmarks/neural_decoders.py) on {platform.machine()}, {os.cpu_count()} cores, one "
        f"torch thread. Model `{model_dir.name}` (`{cfg.name}`: {cfg.decoder.name} in "
        f"training, neural.tags {cfg.neural.tags}); input: "
        f"{'the test file' if given is gold else 'its words alone'}; {tokens:,} tokens, "
        "punctuation included. The network scores every sentence once "
        f"({scoring:.1f} s, {tokens / scoring:,.0f} tokens/sec); each row's speed is that "
        "scoring time plus its own decoding. SARC: tokens whose head the row shares with the "
        f"exact row. Reference: {reference.name}, {ref_speed:,.0f} tokens/sec in the same run.",
        "", "| decoder | UAS | LAS | SARC | decoding s | tokens/sec | x reference |",
        "|---|---:|---:|---:|---:|---:|---:|"]
    for row, _, _ in ROWS:
        seconds, parsed = rows[row]
        rep = evaluate(gold, parsed, punct="include", other=exact)
        speed = tokens / (scoring + seconds)
        lines.append(f"| {row} | {rep.uas:.2f} | {rep.las:.2f} | {rep.sarc:.2f} | "
                     f"{seconds:.1f} | {speed:,.0f} | {speed / ref_speed:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True,
                        help="a second-order neural model (neural.order: 2)")
    parser.add_argument("--config", type=Path,
                        help="the model's config, to train it first when it is missing (as "
                             "make neural-en-ewt trains: benchmarks/neural_table.py)")
    parser.add_argument("--reference", type=Path, required=True,
                        help="the linear model timed beside it (o1-cle)")
    parser.add_argument("--test", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("results/neural-decoders.md"))
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    if args.config is not None and not (args.model / "manifest.json").is_file():
        from neural_table import train

        train(args.config.resolve(), args.model, args.model.parent / "en_ewt.tagged")
    text = build(args.model, args.reference, args.test)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
