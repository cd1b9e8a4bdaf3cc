"""The weights' moving average and the linear learning-rate schedule: the average's update
rule, swapping it in and out exactly, and training with both (deterministic; the saved weights
are the average's)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from neural_tiny import tiny_config, train_tiny, write_slices  # noqa: E402

from dparse.modeldir import WEIGHTS_FILE, file_sha256  # noqa: E402
from dparse.neural.averaging import WeightAverage  # noqa: E402


def test_the_average_follows_the_warm_up_rule_and_swaps_back_exactly() -> None:
    layer = torch.nn.Linear(3, 2)
    start = layer.weight.detach().clone()
    average = WeightAverage(layer, 0.9)
    expected = start.clone()
    for step, value in enumerate([1.0, -2.0, 0.5, 4.0] * 5, start=1):
        with torch.no_grad():
            layer.weight.fill_(value)
        average.update()
        rate = 1.0 - min(0.9, (1.0 + step) / (10.0 + step))
        expected = expected + rate * (torch.full_like(expected, value) - expected)
    assert torch.allclose(average.average["weight"], expected, atol=1e-6)
    own = layer.weight.detach().clone()
    with average.swapped_in():
        assert not torch.equal(layer.weight, own)
        assert torch.allclose(layer.weight, expected, atol=1e-6)
    assert torch.equal(layer.weight, own)
    assert torch.allclose(average.average["weight"], expected, atol=1e-6)


def test_training_with_a_schedule_and_an_average_is_deterministic(tmp_path: Path) -> None:
    folder = write_slices(tmp_path, train=30, dev=5)
    training = {"training": {"epochs": 2, "seed": 5}}

    def digest(name: str, **neural: object) -> str:
        return file_sha256(train_tiny(folder, tiny_config(**neural) | training, tmp_path / name)
                           / WEIGHTS_FILE)

    both = [digest(name, schedule="linear", average=0.9) for name in ("a", "b")]
    schedule_only = digest("s", schedule="linear")
    plain = digest("p")
    assert both[0] == both[1]
    assert len({both[0], schedule_only, plain}) == 3
