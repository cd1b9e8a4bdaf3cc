"""Loading a saved graph-based model of any order (first, second or third: the weights file
says which)."""

from __future__ import annotations

from pathlib import Path

from dparse.calibration import read_calibration
from dparse.graph.model import ArcFactoredModel, GraphModel
from dparse.modeldir import PRUNER_DIR, PRUNER_FILE, WEIGHTS_FILE, check_model_dir, load_arrays


def load_model(directory: Path) -> GraphModel:
    """Load a first-, second- or third-order model directory (the weights file says which),
    checked against its manifest, with its pruner (``pruner/``) if it has one and its
    temperature fitted at training (``calibration.json``) if it has one."""
    model = _load(directory)
    model.calibration = read_calibration(directory)
    return model


def _load(directory: Path) -> GraphModel:
    check_model_dir(directory)
    data = load_arrays(directory / WEIGHTS_FILE)
    second_order = "sib_bits" in data
    third_order = "ho_bits" in data
    # The higher-order modules (and their extensions) are imported only for their models.
    if third_order:
        from dparse.graph.thirdorder import ThirdOrderModel

        return ThirdOrderModel.read_files(directory)
    if second_order:
        from dparse.graph.secondorder import SecondOrderModel

        return SecondOrderModel.read_files(directory)
    model = ArcFactoredModel.read_files(directory)
    if (directory / PRUNER_DIR / PRUNER_FILE).is_file():  # pruner.first_order
        from dparse.graph.pruner import Pruner

        model.pruner = Pruner.read_files(directory / PRUNER_DIR)
    return model
