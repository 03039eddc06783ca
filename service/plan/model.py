"""Step 3's test plans as typed values: a plan as recorded, its allocation per criterion, its probes; a request
for a new plan and the probes :mod:`.testplan` plans for it.

IRIs are absolute strings, times ``xsd:dateTime`` lexical forms. JSON shapes are in
:mod:`service.api.shapes`; the reads that fill these are :mod:`.records`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..envelope.model import ApprovalRecord
from .allocation import Annotator, Strategy
from .openings import Opening


@dataclass(frozen=True)
class PlanApprovalStatus:
    """Whether a plan is approved now; ``digest`` is recomputed from its stored triples."""

    plan: str
    digest: str
    recorded_digest: str | None
    approved: bool
    reasons: tuple[str, ...]
    approvals: tuple[ApprovalRecord, ...]


@dataclass(frozen=True)
class CriterionAllocation:
    """One objective of a plan: the probes allocated to the criterion, the size of its prompt frame (distinct opening turns among its eligible scenarios),
    how many probes exercise it (a probe may exercise several criteria) and from how many scenarios."""

    criterion: str
    probes: int
    prompt_frame: int
    exercised_by: int
    scenarios: int


@dataclass(frozen=True)
class PlanView:
    """A test plan as recorded, with whether it is approved now.

    ``strategy`` is the allocation strategy's name (``epo:{strategy}``); ``recorded_digest`` the digest the
    plan records, ``approval.digest`` the one recomputed from its stored triples (they differ when the plan
    was changed behind the service).
    """

    iri: str
    number: int
    recorded_digest: str | None
    strategy: str
    budget: int
    seed: int
    frame_size: int
    eligible_frame_size: int
    envelope: str
    envelope_digest: str
    created_by: str
    created: str
    allocation: tuple[CriterionAllocation, ...]
    probes: int
    approval: PlanApprovalStatus
    without_templates: tuple[str, ...] = ()
    """The envelope's languages with no opening-turn templates: the plan has no probes in them."""

    @property
    def digest(self) -> str:
        """The digest of the plan's content as stored now."""
        return self.approval.digest


@dataclass(frozen=True)
class Probe:
    """One probe of a plan: the criterion it was allocated to, every criterion it exercises, the scenario it
    was drawn from, its opening turn and scripted follow-up turns (in order, in the same language); its
    language and annotator when it has them."""

    iri: str
    number: int
    criterion: str
    exercises: tuple[str, ...]
    scenario: str
    opening_prompt: str
    language: str | None
    assigned_to: str | None
    follow_ups: tuple[str, ...] = ()
    awaiting_native_review: bool = False
    """Its text comes from a template set no native speaker has reviewed (``epo:textReviewStatus``)."""


@dataclass(frozen=True)
class PlanRequest:
    strategy: Strategy
    budget: int
    seed: int
    annotators: tuple[Annotator, ...] = ()
    review_sample: int = 500
    """How many candidates (blocked or eligible) the derivation keeps for expert review."""


@dataclass(frozen=True)
class PlannedProbe:
    number: int
    scenario: int
    """The scenario's index in this plan's frame (stable for the plan's pinned inputs only)."""
    scenario_iri: str
    """The scenario's identity, by content."""
    criterion: str
    exercises: tuple[str, ...]
    opening: Opening
    language: str | None
    assigned_to: str | None
    stratum: str | None = None
    """The population stratum its asker was drawn from (strategy PopulationWeighted only)."""
