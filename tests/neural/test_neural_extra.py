"""The ``neural`` extra: the core, the linear families and their commands never import torch;
without torch, a neural config or model is a clear error naming ``pip install
'dparse[neural]'`` (exit 2, no traceback). Runs without torch installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NEURAL_CONFIG = REPO / "configs" / "en_ewt" / "neural-o1.yaml"


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_the_core_and_the_linear_families_import_no_torch() -> None:
    done = run_python(
        "import sys, dparse, dparse.api, dparse.cli\n"
        "from dparse.cli import cli\n"
        "from dparse.config import load_config\n"
        "from dparse.families import families\n"
        "cli.list_commands(None)\n"
        "for record in families():\n"
        "    pass\n"
        "load_config(sys.argv[1])\n"
        "load_config(sys.argv[2])  # a neural config is checked without torch\n"
        "import dparse.graph.model, dparse.graph.training, dparse.parsers\n"
        "import dparse.neural.vectors  # the vectors reader needs numpy only\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch' or m in\n"
        "             ('dparse.neural.model', 'dparse.neural.network')))\n",
        str(REPO / "configs" / "en_ewt" / "o1-cle.yaml"), str(NEURAL_CONFIG))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_torch_training_a_neural_config_names_the_extra(tmp_path: Path) -> None:
    done = run_python("import sys; sys.modules['torch'] = None\n"
                      "from dparse.cli import main\n"
                      "sys.argv = ['dparse', 'train', sys.argv[1], '--out', sys.argv[2],\n"
                      "            '--data-root', sys.argv[3]]\n"
                      "main()", str(NEURAL_CONFIG), str(tmp_path / "model"), str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "pip install 'dparse[neural]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "model").exists()
