"""Certification rate and speed of the dd2 decoder on synthetic planted second-order scores.

Each instance plants a random tree (mostly short arcs) of n words; arc scores are N(0, 1) noise
plus ``--arc-gold`` on the planted arcs, sibling and grandparent scores N(0, ``--so-noise``)
noise plus ``--so-gold`` on the planted tree's parts, so the second-order parts mostly agree
with the arcs. Arcs outside each word's ``--keep`` best heads are pruned (-inf), as a
first-order pruner of full recall would (the planted arcs are kept). Prints one table row per
n: share certified, mean iterations, ms per
sentence, words/sec of decoding alone and UAS against the planted tree.

    python benchmarks/dd2_certification.py [--sizes 10 20 40] [--count 100] [--keep 10] \
        [--max-nodes 100 --node-iter 20 --step 2 --max-iter 100]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import planted_scores, planted_tree

from dparse.decoders import get_decoder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--count", type=int, default=100, help="instances per size")
    parser.add_argument("--arc-gold", type=float, default=2.0)
    parser.add_argument("--so-gold", type=float, default=1.0)
    parser.add_argument("--so-noise", type=float, default=0.5)
    parser.add_argument("--keep", type=int, default=10, help="heads kept per word (pruning)")
    parser.add_argument("--max-iter", type=int, default=500)
    parser.add_argument("--step", type=float, default=1.0)
    parser.add_argument("--max-nodes", type=int, default=0,
                        help="branch-and-bound nodes for open gaps (0: plain dual decomposition)")
    parser.add_argument("--node-iter", type=int, default=50, help="iterations per node")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    decoder = get_decoder("dd2")
    print("    n  certified  iterations  ms/sent  words/s    UAS")
    for n in args.sizes:
        rng = np.random.default_rng([args.seed, n])
        decoder.reset_stats()
        seconds = correct = 0.0
        for _ in range(args.count):
            gold = planted_tree(rng, n)
            arc, sib, grand = planted_scores(
                rng, gold, args.arc_gold, args.so_gold, args.so_noise, args.keep
            )
            start = time.perf_counter()
            heads = decoder.decode(
                arc, sib=sib, grand=grand, max_iter=args.max_iter, step=args.step,
                max_nodes=args.max_nodes, node_iter=args.node_iter,
            )
            seconds += time.perf_counter() - start
            correct += np.count_nonzero(heads[1:] == gold[1:])
        print(
            f"{n:5d}  {decoder.certified_share:9.1%}  {decoder.iterations / decoder.calls:10.1f}"
            f"  {1000 * seconds / args.count:7.3f}  {n * args.count / seconds:7.0f}"
            f"  {correct / (n * args.count):6.1%}"
        )


if __name__ == "__main__":
    main()
