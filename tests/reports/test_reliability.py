"""dparse.reports.reliability: the reliability diagram's SVG draws each bin where its mean
probability and accuracy say, one series per system, with the ECE in the legend."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from dparse.calibration import calibration
from dparse.reports.reliability import MARGIN, PAD, SIZE, reliability_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_points_sit_at_mean_probability_and_accuracy() -> None:
    over = calibration([0.95, 0.95, 0.35, 0.35, 0.35, 0.35], [True, False, True, True, True,
                                                                False])
    fine = calibration([0.9, 0.1], [True, False])
    root = ET.fromstring(reliability_svg([("over <sys>", over), ("fine", fine)], "a & b"))
    lines = root.findall(f"{SVG}polyline")
    assert len(lines) == 2
    for line, cal in zip(lines, (over, fine), strict=True):
        points = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        want = [(MARGIN + mean * SIZE, PAD + 18 + (1 - acc) * SIZE)
                for _, _, n, mean, acc in cal.bins if n]
        assert points == pytest.approx(want, abs=0.06)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert f"over <sys>: ECE {100 * over.ece:.2f}%, 6 words" in texts
    assert "a & b" in texts and "fine: ECE 10.00%, 2 words" in texts


def test_series_count_is_checked() -> None:
    with pytest.raises(ValueError, match="1 to 7 series"):
        reliability_svg([])
