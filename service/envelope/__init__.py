"""Steps 1 and 2 of the methodology: an evaluation's scope and its versioned operational envelope.

The domain layer (no HTTP). Everything is stored in the evaluation's graph ``{base}evaluations/{id}``:
:mod:`.model` holds the values, :mod:`.rdf` the RDF shape and the envelope digest, :mod:`.checks`
the validation, :mod:`.records` the reads and the checked, transactional writes (the listing of
evaluations is :mod:`service.scope.records`). Approvals are in
:mod:`service.envelope.approvals`.
"""

from ..scope.model import (
    Assumption,
    EvaluationMethod,
    OperatingEnvironment,
    OutOfScope,
    Scope,
    Stratum,
    TestTarget,
    UseBoundary,
    VersionBoundary,
)
from .model import (
    DEFAULT_JUDGE_AGREEMENT,
    AgreementMeasure,
    Criterion,
    Envelope,
    EnvelopeContent,
    Evaluation,
    Judge,
    JudgeAgreement,
    Requirement,
)
from .rdf import Iris, envelope_digest
from .records import (
    AUTHORS,
    RdfPut,
    envelope_at,
    get_evaluation,
    iris_for,
    new_version,
    put_envelope,
    put_rdf,
    put_scope,
)

__all__ = [
    "AUTHORS",
    "DEFAULT_JUDGE_AGREEMENT",
    "AgreementMeasure",
    "Assumption",
    "Criterion",
    "Envelope",
    "EnvelopeContent",
    "Evaluation",
    "EvaluationMethod",
    "Iris",
    "Judge",
    "JudgeAgreement",
    "OperatingEnvironment",
    "OutOfScope",
    "RdfPut",
    "Requirement",
    "Scope",
    "Stratum",
    "TestTarget",
    "UseBoundary",
    "VersionBoundary",
    "envelope_at",
    "envelope_digest",
    "get_evaluation",
    "iris_for",
    "new_version",
    "put_envelope",
    "put_rdf",
    "put_scope",
]
