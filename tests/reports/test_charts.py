"""The report's charts (service/reports/charts.py): SVG drawn on the server from plain values.

What a reader checks: the bars are as long as the figures say (measured on the drawn rectangles), every label
and figure is written on the chart, nothing in it loads or runs anything, and equal values give the same chart.
"""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET
from fractions import Fraction

from service.reports.charts import (
    COLOURS,
    Interval,
    RequirementCoverage,
    coverage_by_requirement,
    data_uri,
    outcome_distribution,
    pass_rates,
)

SVG = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _texts(svg: str) -> list[str]:
    return ["".join(node.itertext()).strip() for node in ET.fromstring(svg).iter(f"{SVG}text")]


def _bars(svg: str, colour: str) -> list[tuple[float, float, float]]:
    """The rectangles filled with ``colour``: (top y, left x, width), top to bottom."""
    bars = []
    for path in ET.fromstring(svg).iter(f"{SVG}path"):
        if f"fill: {colour}" not in (path.get("style") or ""):
            continue
        numbers = [float(n) for n in NUMBER.findall(path.get("d", ""))]
        xs, ys = numbers[0::2], numbers[1::2]
        bars.append((round(min(ys), 3), min(xs), max(xs) - min(xs)))
    return sorted(bars)


def _loads_nothing(svg: str) -> None:
    root = ET.fromstring(svg)
    assert not list(root.iter(f"{SVG}script")) and not list(root.iter(f"{SVG}image"))
    hrefs = [value for node in root.iter() for name, value in node.attrib.items() if name.endswith("href")]
    assert all(href.startswith("#") for href in hrefs), hrefs


def test_coverage_bars_are_the_covered_share_of_each_requirement() -> None:
    rows = [
        RequirementCoverage("REQ-1 schedules", 3, 5),
        RequirementCoverage("REQ-2 safety", 0, 2),
        RequirementCoverage("REQ-3 language", Fraction(1, 2), Fraction(1, 2)),
    ]
    svg = coverage_by_requirement(rows)
    whole, covered = _bars(svg, COLOURS["uncovered"]), _bars(svg, COLOURS["covered"])
    assert len(whole) == len(covered) == 3
    shares = [round(part[2] / full[2], 6) for part, full in zip(covered, whole)]
    assert shares == [0.6, 0.0, 1.0]  # 3 of 5, 0 of 2, 1/2 of 1/2
    assert {"REQ-1 schedules", "REQ-2 safety", "REQ-3 language", "3 of 5", "0 of 2", "0.5 of 0.5"} <= set(_texts(svg))
    _loads_nothing(svg)


def test_outcome_distribution_by_count_and_by_weight() -> None:
    svg = outcome_distribution({"passed": 3, "failed": 1, "cantTell": 1}, {"passed": 6, "failed": 2, "cantTell": 2})
    passed, failed, tell = (_bars(svg, COLOURS[o]) for o in ("passed", "failed", "cantTell"))
    # Both bars have the same proportions here: 3/5, 1/5, 1/5 by count; 6/10, 2/10, 2/10 by weight.
    for row in range(2):
        total = passed[row][2] + failed[row][2] + tell[row][2]
        assert [round(bar[row][2] / total, 6) for bar in (passed, failed, tell)] == [0.6, 0.2, 0.2]
        assert round(failed[row][1], 3) == round(passed[row][1] + passed[row][2], 3)  # stacked, left to right
    texts = _texts(svg)
    assert {"by count", "by weight", "passed 3", "passed 6"} <= set(texts)
    assert "failed: 1, weight 2" in texts and "cantTell: 1, weight 2" in texts  # the legend names every part
    _loads_nothing(svg)


def test_outcome_distribution_leaves_out_an_outcome_no_criterion_has() -> None:
    svg = outcome_distribution({"passed": 4, "failed": 1, "cantTell": 0}, {"passed": 7, "failed": 3})
    assert _bars(svg, COLOURS["cantTell"]) == []
    assert not any(text.startswith("cantTell") for text in _texts(svg))


def test_pass_rates_draw_each_interval_around_its_rate() -> None:
    svg = pass_rates(
        [Interval("AC-1", 8, 10, 0.5, 0.9), Interval("AC-2", 0, 0, 0.0, 1.0), Interval("AC-3", 1, 4, 0.05, 0.7)], 0.95
    )
    texts = _texts(svg)
    assert {"AC-1", "AC-2", "AC-3", "8/10", "1/4", "no probe-level determinations"} <= set(texts)
    assert "probe pass rate, 95% interval" in texts
    # The error bars are the horizontal segments in their colour (the caps are vertical, of no width).
    segments = [
        [float(n) for n in NUMBER.findall(p.get("d", ""))]
        for p in ET.fromstring(svg).iter(f"{SVG}path")
        if "stroke: #4b5563" in (p.get("style") or "") and len(NUMBER.findall(p.get("d", ""))) == 4
    ]
    widths = sorted(width for s in segments if (width := round(abs(s[2] - s[0]), 3)))
    assert len(widths) == 2  # AC-2 has no interval drawn
    assert abs(widths[1] / widths[0] - 0.65 / 0.4) < 1e-4  # AC-3 spans 0.65, AC-1 spans 0.4 (drawn to 1e-6 pt)


def test_empty_inputs_say_what_is_missing() -> None:
    assert "No applicable criteria" in _texts(coverage_by_requirement([]))
    assert "No covered criteria" in _texts(outcome_distribution({}, {}))
    assert "No criteria with probes" in _texts(pass_rates([], 0.95))


def test_equal_values_give_the_same_chart_and_a_data_uri_for_img() -> None:
    rows = [RequirementCoverage("REQ-1", 1, 2)]
    first, second = coverage_by_requirement(rows), coverage_by_requirement(rows)
    assert first == second
    uri = data_uri(first)
    assert uri.startswith("data:image/svg+xml;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]).decode() == first
