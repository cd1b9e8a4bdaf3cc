"""Loading a saved graph-based model of any order (first, second or third: the weights file
says which)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dparse.graph.model import ArcFactoredModel, GraphModel
from dparse.modeldir import WEIGHTS_FILE, check_model_dir, require_model_files


def load_model(directory: Path) -> GraphModel:
    """Load a first-, second- or third-order model directory (the weights file says which),
    checked against its manifest."""
    check_model_dir(directory)
    require_model_files(directory, WEIGHTS_FILE)
    with np.load(directory / WEIGHTS_FILE) as data:
        second_order = "sib_bits" in data.files
        third_order = "ho_bits" in data.files
    # The higher-order modules (and their extensions) are imported only for their models.
    if third_order:
        from dparse.graph.thirdorder import ThirdOrderModel

        return ThirdOrderModel.read_files(directory)
    if second_order:
        from dparse.graph.secondorder import SecondOrderModel

        return SecondOrderModel.read_files(directory)
    return ArcFactoredModel.read_files(directory)
