"""Compare dparse's PTB conversion with reference Malt-TAB files, head by head.

    python data_scripts/ptb_agreement.py MRG_DIR DEP_DIR

Prints the share of tokens whose head agrees and, for the disagreements, the phrase type whose
head choice differs from the reference (a constituent whose reference head is another child).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from dparse.conll import read_conll
from dparse.data import ptb


def head_choice_differences(tree: ptb.Node, gold: list[int]) -> Counter[str]:
    """Constituents (by label) whose lexical head is not the reference's head of their span."""
    differ: Counter[str] = Counter()
    position = 0

    def visit(node: ptb.Node) -> tuple[int, int, int]:
        nonlocal position
        if node.is_leaf:
            position += 1
            return position, position, position
        spans = [visit(child) for child in node.children]
        start, end, head = spans[0][0], spans[-1][1], spans[ptb.head_child(node)][2]
        outside = [i for i in range(start, end + 1) if not start <= gold[i - 1] <= end]
        if len(outside) == 1 and outside[0] != head:
            children = [s for s in spans if s[0] <= outside[0] <= s[1]]
            if children[0][2] == outside[0]:  # not an error propagated from below
                differ[node.label] += 1
        return start, end, head

    visit(tree)
    return differ


def main(mrg_dir: Path, dep_dir: Path) -> None:
    tokens = agree = 0
    differ: Counter[str] = Counter()
    for mrg in sorted(mrg_dir.glob("*.mrg")):
        trees = [t for t in (ptb.clean(t) for t in ptb.read_trees(mrg)) if t is not None]
        converted = ptb.convert_files([mrg])
        for tree, ours, ref in zip(trees, converted,
                                   read_conll(dep_dir / f"{mrg.stem}.dp", fmt="malttab"),
                                   strict=True):
            gold = ref.heads[1:].tolist()
            tokens += len(gold)
            agree += sum(int(h == g) for h, g in zip(ours.heads, gold, strict=True))
            differ += head_choice_differences(tree, gold)
    print(f"{agree}/{tokens} heads agree: {100 * agree / tokens:.2f}%")
    for label, count in differ.most_common():
        print(f"  {label}: {count} constituents with another head")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
