"""A report's charts, drawn on the server as SVG with matplotlib (its SVG backend: no CDN, no script).

Pure functions from plain values to an SVG document, each kept in process by the values it was drawn from:
coverage by requirement, the outcome distribution (by count and by weight) and probe pass rates with their
confidence intervals. Coverage and performance are
separate charts, never one, as the method requires. Text stays text (``svg.fonttype: none``), so a chart is
small and its labels can be searched; ids are salted with a constant and the date is left out, so equal
values give byte-equal charts. Pages show a chart as an ``<img>`` (:func:`data_uri`): matplotlib styles its
shapes with ``style`` attributes, which the pages' Content-Security-Policy forbids inline but an image may
carry.
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import wraps
from typing import TYPE_CHECKING, ParamSpec

from ..core.memo import Recent

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

Number = Fraction | Decimal | float | int
P = ParamSpec("P")

OUTCOMES = ("passed", "failed", "cantTell")
COLOURS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "cantTell": "#8d6e00",
    "uncovered": "#d0d5dd",
    "covered": "#1a56b0",
}
"""Distinguishable in grey too (dark green, red, dark amber); the outcome's name is written on every part."""

_RC: dict[RcKeyType, object] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "ob-caie-report",
    "font.size": 10,
    "font.family": "DejaVu Sans",
}
_LOCK = threading.Lock()  # rc_context changes matplotlib's global settings while a chart is drawn
_WIDTH = 7.5  # inches at 72 dpi in SVG: 540 px, the page's column


@dataclass(frozen=True)
class RequirementCoverage:
    """One requirement's share of the envelope: the weights of its applicable criteria, and of those covered."""

    label: str
    covered: Number
    applicable: Number


@dataclass(frozen=True)
class Interval:
    """One criterion's probe pass rate: ``passed`` of ``n`` determinations, and the interval around the rate."""

    label: str
    passed: int
    n: int
    lower: float
    upper: float


_DRAWN: Recent[tuple[str, str], str] = Recent(64)
"""Charts drawn, by function and values: equal values give byte-equal charts, so one drawn is never stale, and
drawing a report page's three took 1 to 3 s of matplotlib on each request."""


def _values(value: object) -> str:
    """What a chart is drawn from, exactly: a mapping by its sorted items, every number by its ``repr``
    (``Decimal('1.0')`` and ``1.0`` are equal, yet may be written differently on a chart)."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key!r}: {_values(item)}" for key, item in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_values(item) for item in value) + ")"
    return repr(value)


def _kept(draw: Callable[P, str]) -> Callable[P, str]:
    """``draw``, its SVG kept by the values it was given (:data:`_DRAWN`)."""

    @wraps(draw)
    def kept(*args: P.args, **kwargs: P.kwargs) -> str:
        key = (draw.__name__, _values((args, kwargs)))
        found = _DRAWN.get(key)
        if found is None:
            found = draw(*args, **kwargs)
            _DRAWN.put(key, found)
        return found

    return kept


@contextmanager
def _drawing() -> Iterator[None]:
    """Our settings while a chart is drawn; matplotlib is imported at the first chart, not with the service."""
    from matplotlib import rc_context

    with _LOCK, rc_context(_RC):
        yield


def _svg(figure: Figure) -> str:
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.StringIO()
    metadata = {"Date": None, "Creator": "OB-CAIE (matplotlib)"}
    FigureCanvasSVG(figure).print_svg(buffer, metadata=metadata)  # type: ignore[no-untyped-call]  # unannotated in matplotlib
    return buffer.getvalue()


def _figure(rows: int, *, row_height: float = 0.42, extra: float = 1.1) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(_WIDTH, extra + row_height * max(rows, 1)), layout="constrained")


def _empty(figure: Figure, message: str) -> str:
    axes = figure.add_subplot()
    axes.axis("off")
    axes.text(0.5, 0.5, message, ha="center", va="center", color="#6b7280")
    return _svg(figure)


def _short(label: str, limit: int = 36) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _share(part: Number, whole: Number) -> float:
    return float(Fraction(part) / Fraction(whole)) if whole else 0.0


def _plain(value: Number) -> str:
    """A weight as written: ``3``, ``0.25``."""
    fraction = Fraction(value)
    return (
        str(fraction.numerator) if fraction.denominator == 1 else format(Decimal(str(float(fraction))).normalize(), "f")
    )


def _percent_axis(axes: Axes, label: str) -> None:
    axes.set_xlim(0, 1)
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_xlabel(label)
    axes.spines[["top", "right"]].set_visible(False)


@_kept
def coverage_by_requirement(rows: Sequence[RequirementCoverage]) -> str:
    """One bar per requirement: the covered weight over the applicable weight of its criteria."""
    with _drawing():
        figure = _figure(len(rows))
        if not rows:
            return _empty(figure, "No applicable criteria")
        axes = figure.add_subplot()
        positions = range(len(rows))  # by position: two requirements may share a label
        axes.barh(positions, [1.0] * len(rows), color=COLOURS["uncovered"], height=0.6)
        axes.barh(
            positions, [_share(row.covered, row.applicable) for row in rows], color=COLOURS["covered"], height=0.6
        )
        axes.set_yticks(positions, [_short(row.label) for row in rows])
        for y, row in enumerate(rows):
            axes.text(1.01, y, f"{_plain(row.covered)} of {_plain(row.applicable)}", va="center", clip_on=False)
        axes.invert_yaxis()
        _percent_axis(axes, "covered weight / applicable weight")
        axes.set_title("Coverage by requirement", loc="left")
        return _svg(figure)


@_kept
def outcome_distribution(counts: Mapping[str, int], weights: Mapping[str, Number]) -> str:
    """Two stacked bars, by count and by weight, of the covered criteria's outcomes (each sums to 1)."""
    with _drawing():
        figure = _figure(2, row_height=0.55)
        if not sum(counts.get(outcome, 0) for outcome in OUTCOMES):
            return _empty(figure, "No covered criteria")
        axes = figure.add_subplot()
        for y, (name, values) in enumerate((("by count", counts), ("by weight", weights))):
            total = sum(Fraction(values.get(outcome, 0)) for outcome in OUTCOMES)
            left = 0.0
            for outcome in OUTCOMES:
                share = _share(values.get(outcome, 0), total)
                if share:
                    legend = f"{outcome}: {counts.get(outcome, 0)}, weight {_plain(weights.get(outcome, 0))}"
                    axes.barh(
                        name, share, left=left, color=COLOURS[outcome], height=0.6, label=legend if y == 0 else None
                    )
                    if share >= 0.15:  # a narrower part is named in the legend only
                        axes.text(
                            left + share / 2,
                            y,
                            f"{outcome} {_plain(values.get(outcome, 0))}",
                            ha="center",
                            va="center",
                            color="white",
                            fontsize=9,
                        )
                left += share
        axes.invert_yaxis()
        _percent_axis(axes, "share of covered criteria")
        figure.legend(loc="outside lower center", ncols=3, frameon=False, fontsize=9)
        axes.set_title("Outcome distribution of covered criteria", loc="left")
        return _svg(figure)


@_kept
def pass_rates(rows: Sequence[Interval], level: float) -> str:
    """Each criterion's probe pass rate as a point, with its confidence interval as a bar through it."""
    with _drawing():
        figure = _figure(len(rows), row_height=0.38)
        if not rows:
            return _empty(figure, "No criteria with probes")
        axes = figure.add_subplot()
        axes.set_yticks(range(len(rows)), [_short(row.label) for row in rows])
        for y, row in enumerate(rows):
            if not row.n:
                axes.text(0.01, y, "no probe-level determinations", va="center", color="#6b7280")
                continue
            rate = row.passed / row.n
            axes.errorbar(
                [rate],
                [y],
                xerr=[[rate - row.lower], [row.upper - rate]],
                fmt="o",
                color=COLOURS["covered"],
                ecolor="#4b5563",
                capsize=3,
            )
            axes.text(1.01, y, f"{row.passed}/{row.n}", va="center", clip_on=False)
        axes.set_ylim(len(rows) - 0.5, -0.5)
        _percent_axis(axes, f"probe pass rate, {level:.0%} interval")
        axes.set_title("Probe pass rates", loc="left")
        return _svg(figure)


def data_uri(svg: str) -> str:
    """The chart as a ``data:`` URL for an ``<img>`` (the pages' CSP allows ``img-src data:``)."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")
