"""Request bodies of the plan and run steps (4 and 5): a plan, its approval and exclusions, a run and its target.

The shared base (unknown fields refused, camelCase names, IRIs expanded) is :mod:`.models`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .models import Body, Identifier, Iri, Text


class AnnotatorBody(Body):
    agent: Identifier
    expertise: list[Iri] = Field(
        min_length=1, description="DSO concepts, dimensions or categories the annotator judges"
    )
    capacity: int = Field(ge=1, description="How many probes the annotator can judge")


class PlanBody(Body):
    strategy: Literal["ProportionalToWeight", "HighestWeightFirst", "Equal", "MatchedToExpertise", "PopulationWeighted"]
    budget: int = Field(ge=1, le=1_000_000, description="Total number of probes")
    seed: int = Field(ge=0, le=2**53 - 1)  # JSON numbers past 2^53 lose digits in JavaScript (RFC 7493 §2.2)
    annotators: list[AnnotatorBody] = []  # noqa: RUF012  # a pydantic model (ruff sees Body only in its file): copied
    reviewSample: int = Field(
        500, ge=0, le=20_000, description="Candidates kept for expert review, blocked or eligible"
    )


class PlanApprovalBody(Body):
    comment: str | None = None
    digest: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="The plan digest the expert reviewed; 409 when the plan is no longer that.",
    )


class ExclusionBody(Body):
    reason: Text


class DemoTargetBody(Body):
    kind: Literal["demo"]


class OpenAITargetBody(Body):
    kind: Literal["openai-compatible"]
    base_url: Annotated[str, Field(pattern=r"^https?://", max_length=2000)]
    model: Text
    parameters: dict[str, str | int | float | bool] = {}  # noqa: RUF012  # as in PlanBody: pydantic copies defaults
    system: str | None = None
    system_instructions: str | None = None
    api_key_env: Annotated[
        str | None,
        Field(
            pattern=r"^[A-Z_][A-Z0-9_]*$",
            max_length=100,
            description="The environment variable on the service holding the key; a key itself is never sent or stored",
        ),
    ] = None


class RunSettingsBody(Body):
    concurrency: int = Field(8, ge=1, le=64)
    rate_per_second: float | None = Field(None, gt=0, le=1000)
    timeout_seconds: float = Field(60.0, gt=0, le=600)
    retries: int = Field(2, ge=0, le=10)
    backoff_seconds: float = Field(0.5, ge=0, le=30)


class RunBody(Body):
    plan: int = Field(ge=1, description="The number of the approved plan to run")
    target: Annotated[DemoTargetBody | OpenAITargetBody, Field(discriminator="kind")]
    settings: RunSettingsBody = RunSettingsBody()
    outside_boundary: str | None = Field(
        default=None,
        description=(
            "Run a target outside the scope's version boundary on purpose: why (the run and its reports say so)."
        ),
    )


class ContinueBody(Body):
    target: Annotated[DemoTargetBody | OpenAITargetBody, Field(discriminator="kind")]
    settings: RunSettingsBody = RunSettingsBody()
