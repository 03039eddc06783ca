"""Step 3's review as typed values: derived scenarios as an expert reviews them, and pages of a listing.

IRIs are absolute strings. JSON shapes are in :mod:`service.api.shapes`; the reads that fill these are
:mod:`.records`, through ``queries/scenarios.rq`` and its siblings.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from ..core.namespaces import EPO

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing: its items, how many items match in all, and where the page starts."""

    items: tuple[T, ...]
    total: int
    limit: int
    offset: int


class ScenarioStatus(Enum):
    """Whether a derived scenario may be probed; the value is the JSON name, :attr:`iri` the EPO class."""

    ELIGIBLE = "eligible"
    BLOCKED = "blocked"

    @property
    def iri(self) -> str:
        return EPO + ("EligibleScenario" if self is ScenarioStatus.ELIGIBLE else "BlockedScenario")

    @classmethod
    def from_iri(cls, iri: str) -> ScenarioStatus:
        return next(status for status in cls if status.iri == iri)


@dataclass(frozen=True)
class Exclusion:
    """An expert's exclusion of a scenario from sampling: why, by whom (agent IRI), when (``xsd:dateTime``)."""

    reason: str
    by: str
    at: str


@dataclass(frozen=True)
class RecordedExclusion:
    """An exclusion as stored: its IRI, the scenario it names, and the exclusion itself."""

    iri: str
    scenario: str
    exclusion: Exclusion


@dataclass(frozen=True)
class ReviewedScenario:
    """A derived scenario as the review shows it.

    ``facets`` are (property IRI, value) pairs of the scenario and of the person it describes, sorted;
    a property may have several values (``epo:personState``): one pair each, every value kept.
    ``blocked_by`` and ``messages`` are empty for an eligible scenario; ``exclusion`` is the latest, if an
    expert excluded it.
    """

    iri: str
    index: int
    status: ScenarioStatus
    blocked_by: tuple[str, ...]
    messages: tuple[str, ...]
    facets: tuple[tuple[str, str], ...]
    exclusion: Exclusion | None


@dataclass(frozen=True)
class RuleCount:
    """How many reviewed scenarios a rule blocked (``rule`` is ``epo:EligibleScenario`` for the eligible ones), and
    the rule's label when the store has one."""

    rule: str
    scenarios: int
    label: str | None = None


@dataclass(frozen=True)
class RuleBlocking:
    """How many candidates of a plan's frame a rule blocks, exactly (``queries/blocking-by-rule.rq``), of
    ``candidates`` in all and ``eligible`` unblocked ones; a candidate two rules block counts for both."""

    rule: str
    label: str | None
    blocked: int
    candidates: int
    eligible: int

    @property
    def share_of_blocked(self) -> float:
        return self.blocked / (self.candidates - self.eligible) if self.candidates > self.eligible else 0.0
