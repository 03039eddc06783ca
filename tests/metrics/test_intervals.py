"""The pass-rate interval (docs/metrics.md, "Pass rates"): Wilson's score interval, with z² scaled by the
finite-population correction f = (N - n)/(N - 1), checked against published and hand-computed values."""

from __future__ import annotations

import pytest

from service.metrics.intervals import correction, wilson_fpc, z_for


def bounds(k: int, n: int, frame: int | None, level: float = 0.95) -> tuple[float, float]:
    interval = wilson_fpc(k, n, frame, level)
    assert interval is not None and interval.method == "wilson-fpc" and interval.level == level
    return interval.lower, interval.upper


def test_without_a_frame_it_is_wilsons_interval() -> None:
    assert z_for(0.95) == pytest.approx(1.959964, abs=1e-6)
    # Newcombe (1998), Statistics in Medicine 17:857, Table I: 81/263 -> 0.2553 to 0.3662; 0/10 -> 0 to 0.2775
    assert bounds(81, 263, None) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    assert bounds(0, 10, None) == pytest.approx((0.0, 0.2775), abs=5e-5)


def test_the_finite_population_correction_narrows_it() -> None:
    # 3 of 5 from a frame of 10, by hand: f = 5/9, z'² = 3.841459 * 5/9 = 2.134144, p = 0.6;
    # centre = (0.6 + 2.134144/10) / (1 + 2.134144/5) = 0.813414 / 1.426829 = 0.570085;
    # half = sqrt(2.134144 * 0.24/5 + 2.134144²/100) / 1.426829 = sqrt(0.102439 + 0.045546) / 1.426829 = 0.269610
    assert correction(5, 10) == pytest.approx(5 / 9)
    assert bounds(3, 5, 10) == pytest.approx((0.570085 - 0.269610, 0.570085 + 0.269610), abs=2e-6)
    plain = bounds(3, 5, None)
    assert plain[0] < bounds(3, 5, 10)[0] and bounds(3, 5, 10)[1] < plain[1]


def test_a_census_has_no_uncertainty_and_nothing_judged_has_no_interval() -> None:
    assert bounds(7, 12, 12) == (7 / 12, 7 / 12)
    assert bounds(1, 1, 1) == (1.0, 1.0)
    assert wilson_fpc(0, 0, 5) is None
    with pytest.raises(ValueError):
        wilson_fpc(3, 2, 5)
    with pytest.raises(ValueError):
        z_for(1.0)
