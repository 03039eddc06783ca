"""Request and response bodies of ``/evaluations``: pydantic models that map to :mod:`service.envelope`.

Field names are those of the JSON-LD context ``/contexts/evaluation.jsonld``. IRIs may be written in
full or as compact IRIs with the context's prefixes (``kg:kenya/country``, or an installed domain's); answers
use the compact form. Unknown fields are refused (422 naming them).

This module holds what every body shares (:class:`Body`, :data:`Iri`, ...) and the bodies of the scope, envelope
and approval steps (1 and 2); :mod:`.models_runs` those of plans and runs, :mod:`.models_judgments` those of
judgments and reports.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from ..core.namespaces import DCTERMS, EARL, EPO, PROV, SKOS, VOCAB_BASE
from ..core.plugins import domain_prefixes
from ..envelope import (
    AgreementMeasure,
    Assumption,
    Criterion,
    EnvelopeContent,
    EvaluationMethod,
    Judge,
    JudgeAgreement,
    OperatingEnvironment,
    OutOfScope,
    Requirement,
    Scope,
    Stratum,
    TestTarget,
    UseBoundary,
    VersionBoundary,
)
from ..scenarios import Trigger

CONTEXT_PREFIXES: dict[str, str] = {
    **domain_prefixes(),  # each installed domain package's, read once when the API is built
    "kg": VOCAB_BASE + "kg/",
    "epo": EPO,
    "skos": SKOS,
    "prov": PROV,
    "earl": EARL,
    "dcterms": DCTERMS,
}
"""The prefixes the JSON-LD context declares (and that JSON bodies may use)."""


def expand(value: str) -> str:
    """A full IRI from a full IRI or a compact IRI with a known prefix."""
    prefix, colon, rest = value.partition(":")
    if colon and prefix in CONTEXT_PREFIXES and not rest.startswith("//"):
        return CONTEXT_PREFIXES[prefix] + rest
    if value.startswith(("http://", "https://", "urn:")) and " " not in value:
        return value
    known = ", ".join(f"{p}:" for p in CONTEXT_PREFIXES)
    raise PydanticCustomError(
        "iri",
        "'{value}' is not an absolute IRI or a compact IRI with a known prefix ({known})",
        {"value": value, "known": known},
    )


def compact(iri: str) -> str:
    """The compact form of ``iri`` with the longest matching context prefix, else ``iri``."""
    best = max(
        (p for p, ns in CONTEXT_PREFIXES.items() if iri.startswith(ns) and len(iri) > len(ns)),
        key=lambda p: len(CONTEXT_PREFIXES[p]),
        default=None,
    )
    return f"{best}:{iri[len(CONTEXT_PREFIXES[best]) :]}" if best else iri


HTTP_IRI = r"https?://[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?:/[A-Za-z0-9._~-]*)*"
"""An http(s) IRI of unreserved characters, which every IRI parser reads alike: the OpenAPI document promises
that text of this form (or a compact IRI) is read as an IRI; the service reads more (:func:`expand`)."""
_IRI_SCHEMA = {"type": "string", "pattern": rf"^(?:(?:{'|'.join(CONTEXT_PREFIXES)}):[A-Za-z0-9._-]+|{HTTP_IRI})$"}
Iri = Annotated[str, AfterValidator(expand), WithJsonSchema(_IRI_SCHEMA)]
Identifier = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
Text = Annotated[str, Field(min_length=1)]


def _unicode_only(value: object) -> None:
    """Refuses text JSON can carry but Unicode cannot: a lone surrogate (``"\\udcff"``), which nothing stores."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise PydanticCustomError(
                "unicode", "the text holds a lone surrogate (\\ud800 to \\udfff), which is not Unicode"
            ) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _unicode_only(key)
            _unicode_only(item)
    elif isinstance(value, list):
        for item in value:
            _unicode_only(item)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _unicode(cls, data: object) -> object:
        _unicode_only(data)
        return data


class VersionBoundaryBody(Body):
    model_release: Text
    configuration: str


class TestTargetBody(Body):
    name: Text
    kind: Text
    version_boundary: VersionBoundaryBody


class UseBoundaryBody(Body):
    statement: Text
    users: list[Iri] = []
    tasks: list[Iri] = []
    languages: list[Iri] = []
    countries: list[Iri] = []


class AssumptionBody(Body):
    id: Identifier
    statement: Text


class OperatingEnvironmentBody(Body):
    statement: Text
    settings: list[Iri] = []
    assumptions: list[AssumptionBody] = []


class OutOfScopeBody(Body):
    id: Identifier
    statement: Text
    concepts: list[Iri] = []


class EvaluationMethodBody(Body):
    name: Text
    method_version: Text = Field(description="The method version (judges, scoring and interpretation rules).")
    statement: str | None = None


class StratumBody(Body):
    """A group of the system's users and its share of them; its members' scenarios meet every fact in ``when``."""

    id: Identifier
    label: Text
    share: Annotated[Decimal, WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "maximum": 1})] = Field(
        description="The group's share of the system's users, greater than 0 and at most 1."
    )
    when: list[TriggerBody] = Field(min_length=1, description="Scenario facts every member's scenario meets.")

    @field_validator("share")
    @classmethod
    def _a_share(cls, share: Decimal) -> Decimal:
        if not share.is_finite() or not 0 < share <= 1:
            raise PydanticCustomError(
                "share",
                "a population share is a decimal greater than 0 and at most 1, not {share}",
                {"share": str(share)},
            )
        return share

    def to_domain(self) -> Stratum:
        return Stratum(self.id, self.label, self.share, tuple(t.to_domain() for t in self.when))


class EvaluationBody(Body):
    """The scope of an evaluation (step 1)."""

    id: Identifier | None = Field(default=None, description="Required by POST; PUT takes it from the path.")
    title: Text
    risk_question: str | None = None
    evaluation_method: EvaluationMethodBody | None = None
    dso: Identifier = Field(description="Identifier of a loaded DSO graph (/graphs/dso/{dso}).")
    knowledge_graphs: list[Identifier] = Field(min_length=1, description="Identifiers of loaded KG graphs.")
    test_target: TestTargetBody
    use_boundary: UseBoundaryBody
    operating_environment: OperatingEnvironmentBody
    out_of_scope: list[OutOfScopeBody] = []
    population: list[StratumBody] = Field(
        default=[],
        description=(
            "Who uses the system, in shares adding up to 1 (docs/allocation.md); a PopulationWeighted plan follows them."
        ),
    )

    @field_validator("population")
    @classmethod
    def _shares_add_up(cls, population: list[StratumBody]) -> list[StratumBody]:
        ids = [stratum.id for stratum in population]
        if twice := sorted({i for i in ids if ids.count(i) > 1}):
            raise PydanticCustomError(
                "population", "population groups need distinct ids: {ids} used twice", {"ids": ", ".join(twice)}
            )
        if population and (total := sum(stratum.share for stratum in population)) != 1:
            raise PydanticCustomError(
                "population", "the population's shares must add up to 1, not {total}", {"total": str(total)}
            )
        return population

    def to_domain(self, evaluation_id: str) -> Scope:
        t, u, o = self.test_target, self.use_boundary, self.operating_environment
        return Scope(
            id=evaluation_id,
            title=self.title,
            risk_question=self.risk_question,
            dso=self.dso,
            knowledge_graphs=tuple(self.knowledge_graphs),
            test_target=TestTarget(
                t.name, t.kind, VersionBoundary(t.version_boundary.model_release, t.version_boundary.configuration)
            ),
            use_boundary=UseBoundary(
                u.statement, tuple(u.users), tuple(u.tasks), tuple(u.languages), tuple(u.countries)
            ),
            operating_environment=OperatingEnvironment(
                o.statement, tuple(o.settings), tuple(Assumption(a.id, a.statement) for a in o.assumptions)
            ),
            out_of_scope=tuple(OutOfScope(d.id, d.statement, tuple(d.concepts)) for d in self.out_of_scope),
            method=(EvaluationMethod(m.name, m.method_version, m.statement) if (m := self.evaluation_method) else None),
            population=tuple(stratum.to_domain() for stratum in self.population),
        )


class RequirementBody(Body):
    id: Identifier
    statement: Text
    parent: str | None = Field(default=None, description="The id of the requirement this one refines.")
    concepts: list[Iri] = []


class TriggerBody(Body):
    """A scenario fact that makes the criterion bear on a probe (docs/routing.md)."""

    facet: Iri = Field(description="The DSO's scenario facet (an epo:ScenarioFacet).")
    values: list[Iri | bool] = Field(
        min_length=1,
        description=(
            "Values of the facet that meet the trigger (a narrower value meets it too); true or false for a boolean facet."
        ),
    )

    def to_domain(self) -> Trigger:
        return Trigger(self.facet, tuple(sorted({str(v).lower() if isinstance(v, bool) else v for v in self.values})))


class CriterionBody(Body):
    id: Identifier
    requirement: str = Field(description="The id of the requirement this criterion is decomposed from.")
    statement: Text
    expected_result: str | None = None
    weight: Annotated[Decimal, WithJsonSchema({"type": "number", "exclusiveMinimum": 0})] = Field(
        description="Deployment-sensitivity weight, a decimal greater than zero."
    )
    weight_rationale: Text
    in_scope: bool = True
    dimension: Identifier
    category: Identifier
    concepts: list[Iri] = Field(default=[], description="DSO concepts the criterion bears on.")
    bears_when: list[TriggerBody] = Field(
        default=[],
        description=(
            "The scenario facts that make the criterion bear on a probe, all together; without any, the criterion is "
            "routed from its concepts (docs/routing.md)."
        ),
    )
    judged_by: Literal["human", "rule", "model"]

    @field_validator("weight")
    @classmethod
    def _positive(cls, weight: Decimal) -> Decimal:
        if not weight.is_finite() or weight <= 0:
            raise PydanticCustomError(
                "weight",
                "the weight must be a decimal greater than zero (the criterion's deployment sensitivity), not {weight}",
                {"weight": str(weight)},
            )
        return weight


class JudgeAgreementBody(Body):
    """The agreement an automatic judge needs with people on a criterion to decide its cases alone."""

    minimum: Annotated[Decimal, WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1})] = Field(
        description="The lowest agreement coefficient, from 0 to 1."
    )
    measure: Literal["krippendorff-alpha", "cohen-kappa"] = Field(
        description="The coefficient, nominal, over units criterion x response."
    )
    minimum_units: int = Field(ge=1, description="The fewest units both the judge and a person determined.")

    @field_validator("minimum")
    @classmethod
    def _coefficient(cls, minimum: Decimal) -> Decimal:
        if not minimum.is_finite() or not 0 <= minimum <= 1:
            raise PydanticCustomError(
                "minimum",
                "the agreement minimum must be a decimal from 0 to 1, not {minimum}",
                {"minimum": str(minimum)},
            )
        return minimum

    def to_domain(self) -> JudgeAgreement:
        return JudgeAgreement(self.minimum, AgreementMeasure(self.measure), self.minimum_units)


class EnvelopeBody(Body):
    """Requirements decomposed into acceptance criteria (step 2)."""

    statement: str | None = None
    requirements: list[RequirementBody] = Field(min_length=1)
    criteria: list[CriterionBody] = Field(min_length=1)
    judge_agreement: JudgeAgreementBody | None = Field(
        default=None, description="Absent: minimum 0.8, krippendorff-alpha, minimumUnits 10 (docs/envelope.md)."
    )

    def to_domain(self) -> EnvelopeContent:
        return EnvelopeContent(
            judge_agreement=self.judge_agreement.to_domain() if self.judge_agreement else None,
            statement=self.statement,
            requirements=tuple(Requirement(r.id, r.statement, r.parent, tuple(r.concepts)) for r in self.requirements),
            criteria=tuple(
                Criterion(
                    id=c.id,
                    requirement=c.requirement,
                    statement=c.statement,
                    weight=c.weight,
                    weight_rationale=c.weight_rationale,
                    judged_by=Judge(c.judged_by),
                    dimension=c.dimension,
                    category=c.category,
                    concepts=tuple(c.concepts),
                    expected_result=c.expected_result,
                    in_scope=c.in_scope,
                    triggers=tuple(t.to_domain() for t in c.bears_when),
                )
                for c in self.criteria
            ),
        )


class RelevanceBody(Body):
    relevant: bool
    rationale: Text


class AppropriatenessBody(Body):
    appropriate: bool
    rationale: Text


class SignOffBody(Body):
    comment: str | None = None
