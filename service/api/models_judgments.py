"""Request bodies of the judging and report steps (5 and 6): rulings on probes, a criterion's attestation, a report
and its sign-off.

The shared base (unknown fields refused, camelCase names, IRIs expanded) is :mod:`.models`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .models import Body, Text

OutcomeName = Literal["passed", "failed", "cantTell", "inapplicable"]


class PointerBody(Body):
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class RulingBody(Body):
    probe: Annotated[str, Field(pattern=r"^https?://", max_length=2000)]
    criterion: Annotated[
        str, Field(min_length=1, max_length=2000, description="The criterion's IRI, or its identifier")
    ]
    turn: int = Field(1, ge=1, le=1000)
    outcome: OutcomeName
    rationale: Text
    pointer: PointerBody | None = None


class DeterminationsBody(Body):
    determinations: list[RulingBody] = Field(min_length=1, max_length=10_000)


class AttestationBody(Body):
    criterion: Annotated[
        str, Field(min_length=1, max_length=2000, description="The criterion's IRI, or its identifier")
    ]
    outcome: OutcomeName
    rationale: Text
    sufficiency: Literal["sufficient", "insufficient"]
    appropriateness: Literal["appropriate", "inappropriate"]
    supersedes: Annotated[str | None, Field(pattern=r"^https?://", max_length=2000)] = None
    reason: str | None = None


class ReportBody(Body):
    run: int = Field(ge=1, description="The number of the run the report covers")
    limitations: list[Text] = Field(default_factory=list, max_length=100)
    recommendations: list[Text] = Field(default_factory=list, max_length=100)
    fitness: Literal["FitToDeploy", "FitWithConditions", "NotFit"]


class ReportSignOffBody(Body):
    comment: str | None = Field(None, max_length=10_000)
