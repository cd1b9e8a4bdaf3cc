"""Two models trained with ``--workers 2``, on local processes and on SLURM batch jobs
(``make mixing-slurm``, issue 35): are their weights the same bytes? Writes a small report
with the SHA-256 of each model's weight file and exits 1 when they differ. Usage:

    PYTHONPATH=. python benchmarks/mixing_slurm.py LOCAL_MODEL SLURM_MODEL --out report.md
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import sys
from pathlib import Path

from dparse.modeldir import WEIGHTS_FILE
from dparse.outputs import write_text


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("local", type=Path)
    ap.add_argument("slurm", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    digests = {name: hashlib.sha256((path / WEIGHTS_FILE).read_bytes()).hexdigest()
               for name, path in (("local", args.local), ("slurm", args.slurm))}
    same = digests["local"] == digests["slurm"]
    lines = [
        "# One model on several workers: SLURM against local processes",
        "",
        f"Measured {datetime.date.today()} by `make mixing-slurm`: configs/en_ewt/o2-eisner.yaml "
        "trained with `--workers 2` on two local worker processes and on two batch jobs of a "
        "single-node SLURM (`--cluster slurm`, ../shared/tools), uniform mixing.",
        "",
        "| workers | model | SHA-256 of the weights |",
        "|---|---|---|",
        f"| local | `{args.local}` | `{digests['local']}` |",
        f"| slurm | `{args.slurm}` | `{digests['slurm']}` |",
        "",
        "The same bytes." if same else "**The weights differ.**",
    ]
    write_text(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
