"""The operational envelope of an evaluation (methodology step 2) as plain values.

IRIs are absolute strings; local identifiers (evaluation, requirement, criterion, assumption,
out-of-scope declaration, dimension, category) are path segments the service mints IRIs from
(:mod:`service.envelope.rdf`, :mod:`service.envelope.scope_rdf`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import Enum

from ..scenarios.reference import Trigger  # a criterion's routing triggers (docs/routing.md)
from ..scope.model import Scope  # an Evaluation holds its scope


class Judge(Enum):
    """How a criterion is to be judged; the value is the JSON name, the IRI is the EPO individual."""

    HUMAN = "human"
    RULE = "rule"
    MODEL = "model"

    @property
    def local_name(self) -> str:
        return {"human": "HumanJudge", "rule": "RuleJudge", "model": "ModelJudge"}[self.value]


@dataclass(frozen=True)
class Requirement:
    """A broad rule in the stakeholders' words; ``parent`` is the requirement it refines."""

    id: str
    statement: str
    parent: str | None = None
    concepts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion: checkable against one response, weighted by deployment sensitivity."""

    id: str
    requirement: str
    statement: str
    weight: Decimal | None
    weight_rationale: str
    judged_by: Judge | None
    dimension: str
    category: str
    concepts: tuple[str, ...] = ()
    expected_result: str | None = None
    in_scope: bool = True
    triggers: tuple[Trigger, ...] = ()
    """The scenario facts that make the criterion bear on a probe (``epo:bearsWhen``), all of them together."""


class AgreementMeasure(Enum):
    """A chance-corrected agreement coefficient; the value is the JSON name, the IRI is the EPO individual."""

    KRIPPENDORFF_ALPHA = "krippendorff-alpha"
    COHEN_KAPPA = "cohen-kappa"

    @property
    def local_name(self) -> str:
        return {"krippendorff-alpha": "KrippendorffAlpha", "cohen-kappa": "CohenKappa"}[self.value]


@dataclass(frozen=True)
class JudgeAgreement:
    """How far an automatic judge must agree with people on a criterion to decide its cases alone.

    ``minimum`` is the lowest coefficient (``measure``, nominal, unit = criterion x response) and
    ``minimum_units`` the fewest units both the judge and a person determined; below either, the judge's
    determinations count only where a person also determined the case (docs/envelope.md).
    """

    minimum: Decimal
    measure: AgreementMeasure
    minimum_units: int


DEFAULT_JUDGE_AGREEMENT = JudgeAgreement(Decimal("0.8"), AgreementMeasure.KRIPPENDORFF_ALPHA, 10)
"""What an envelope that declares no threshold is read with (Krippendorff's own rule of thumb: 0.8)."""


@dataclass(frozen=True)
class EnvelopeContent:
    """Step 2: the requirements and criteria, as the client writes them (no version, no digest).

    ``judge_agreement`` is the declared threshold, ``None`` when absent (then :attr:`agreement_threshold`
    is :data:`DEFAULT_JUDGE_AGREEMENT`).
    """

    requirements: tuple[Requirement, ...]
    criteria: tuple[Criterion, ...]
    statement: str | None = None
    judge_agreement: JudgeAgreement | None = None

    @property
    def agreement_threshold(self) -> JudgeAgreement:
        return self.judge_agreement or DEFAULT_JUDGE_AGREEMENT

    def criterion(self, criterion_id: str) -> Criterion | None:
        return next((c for c in self.criteria if c.id == criterion_id), None)


@dataclass(frozen=True)
class Envelope:
    """One stored version of an evaluation's operational envelope."""

    iri: str
    version: int
    digest: str
    content: EnvelopeContent
    revision_of: str | None = None


@dataclass(frozen=True)
class Evaluation:
    """What is stored about an evaluation: its scope and, once written, its current envelope."""

    iri: str
    scope: Scope
    envelope: Envelope | None = None
    versions: tuple[int, ...] = field(default=())


@dataclass(frozen=True)
class ApprovalRecord:
    """One stored approval; ``outcome`` is ``passed`` (relevant, appropriate, approved) or ``failed``.

    ``envelope_digest`` and ``plan_digest`` name the content it approved; it approves nothing else (a DSO
    appropriateness assessment names none of them: the DSO's digest is in its input pin).
    """

    iri: str
    kind: str
    subject: str
    agent: str
    time: datetime
    outcome: str
    comment: str | None
    envelope_digest: str | None
    plan_digest: str | None


@dataclass(frozen=True)
class EnvelopeStatus:
    """Where the current envelope stands on its way to sign-off (``digest`` recomputed from its content)."""

    envelope: str
    version: int
    digest: str
    signed_off: bool
    appropriate: str | None
    relevance: dict[str, str | None]
    missing: list[str]
    dso_appropriate: str | None = None
