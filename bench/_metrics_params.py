"""The metrics bench record's names and parameters (bench/_metrics_data.py builds it): its base URL and evaluation,
the annotator and the day its writes are dated from, the parameters that size it, and its values as plain Python for
the baseline."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

from service.core.config import Credential

BASE = "http://bench.test/"
EVALUATION_ID = "metrics-1m"
NORA = Credential(agent="nora", name="nora (bench annotator)", roles=frozenset({"annotator"}))
EPOCH = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Params:
    criteria: int = 1000
    out_of_scope: int = 20
    untested: int = 30
    answered: int = 62_500
    errors: int = 625
    exercises: int = 4
    judges: int = 4
    batch: int = 1000
    superseded: int = 50
    seed: int = 11

    @property
    def determinations(self) -> int:
        return self.answered * self.exercises * self.judges


@dataclass
class Plain:
    """The record's values as plain Python, for the baseline: criteria as (IRI, weight, in scope), the frame size
    per criterion, the run's cases as (probe, criteria it exercises), determinations as (criterion, probe, outcome),
    attestations as (IRI, criterion, outcome, superseded IRI or None)."""

    evaluation: str
    run: str
    criteria: list[tuple[str, Decimal, bool]] = field(default_factory=list)
    frames: dict[str, int] = field(default_factory=dict)
    cases: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    determinations: list[tuple[str, str, str]] = field(default_factory=list)
    attestations: list[tuple[str, str, str, str | None]] = field(default_factory=list)
