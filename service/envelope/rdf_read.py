"""An envelope version read back from the evaluation's graph (:class:`.rdf.Index`): its requirements, criteria
and judge agreement threshold as :mod:`.model` values, as :func:`.rdf.envelope_triples` wrote them.
"""

from __future__ import annotations

from decimal import Decimal

from ..core.namespaces import EPO, PROV
from .model import AgreementMeasure, Criterion, Envelope, EnvelopeContent, Judge, JudgeAgreement, Requirement
from .rdf import (
    Index,
    Iris,
    envelope_digest,
    envelope_versions,
    identifier_of,
    owned_by,
    parse_decimal,
    read_triggers,
    tail,
    version_of,
)


def read_content(envelope_iri: str, index: Index) -> EnvelopeContent:
    """The requirements and criteria of one envelope version."""
    dimensions_prefix = envelope_iri + "/dimensions/"
    requirements = tuple(
        Requirement(
            id=identifier_of(index, r),
            statement=index.one(r, EPO + "statement") or "",
            parent=identifier_of(index, p) if (p := index.one(r, EPO + "refines")) else None,
            concepts=tuple(index.all(r, EPO + "bearsOnConcept")),
        )
        for r in index.subjects(EPO + "partOfEnvelope", envelope_iri)
    )
    criteria = []
    for r in index.subjects(EPO + "partOfEnvelope", envelope_iri):
        for c in index.subjects(EPO + "criterionOf", r):
            dimension = index.one(c, EPO + "dimension") or ""
            judge = tail(index.one(c, EPO + "judgedBy") or "", EPO)
            in_scope = index.term(c, EPO + "inScope")
            criteria.append(
                Criterion(
                    id=identifier_of(index, c),
                    requirement=identifier_of(index, r),
                    statement=index.one(c, EPO + "statement") or "",
                    expected_result=index.one(c, EPO + "expectedResult"),
                    weight=parse_decimal(index.one(c, EPO + "weight")),
                    weight_rationale=index.one(c, EPO + "weightRationale") or "",
                    in_scope=in_scope is None or in_scope.value == "true",
                    judged_by=next((j for j in Judge if j.local_name == judge), None),
                    dimension=tail(dimension, dimensions_prefix),
                    category=tail(index.one(c, EPO + "category") or "", dimension + "/"),
                    concepts=tuple(index.all(c, EPO + "bearsOnConcept")),
                    triggers=read_triggers(index, c, "bearsWhen"),
                )
            )
    return EnvelopeContent(
        requirements=requirements,
        criteria=tuple(sorted(criteria, key=lambda c: c.id)),
        statement=index.one(envelope_iri, EPO + "statement"),
        judge_agreement=_judge_agreement(index.one(envelope_iri, EPO + "judgeAgreement"), index),
    )


def _judge_agreement(node: str | None, index: Index) -> JudgeAgreement | None:
    if node is None:
        return None
    measure = tail(index.one(node, EPO + "agreementMeasure") or "", EPO)
    return JudgeAgreement(
        minimum=parse_decimal(index.one(node, EPO + "minimumAgreement")) or Decimal(0),
        measure=next((m for m in AgreementMeasure if m.local_name == measure), AgreementMeasure.KRIPPENDORFF_ALPHA),
        minimum_units=int(index.one(node, EPO + "minimumUnits") or 0),
    )


def read_envelope(envelope_iri: str, index: Index) -> Envelope:
    triples = [t for t in index.triples if owned_by(envelope_iri, t)]
    return Envelope(
        iri=envelope_iri,
        version=version_of(envelope_iri),
        digest=envelope_digest(envelope_iri, triples),
        content=read_content(envelope_iri, index),
        revision_of=index.one(envelope_iri, PROV + "wasRevisionOf"),
    )


def current_envelope_iri(iris: Iris, index: Index) -> str | None:
    """The evaluation's current envelope version: the one it links, else the latest."""
    linked = index.one(iris.evaluation, EPO + "operationalEnvelope")
    versions = envelope_versions(iris, index)
    return linked or (versions[-1] if versions else None)
