"""Reading the evaluations of a deployment: which records exist, their titles and current envelope versions.

Read through ``queries/evaluations.rq`` (the head graphs only, never the records' batches); the envelope
itself, its content and recomputed digest, is read by :mod:`service.envelope.records`, which builds on
this package, never the reverse.
"""

from __future__ import annotations

from pyoxigraph import NamedNode

from ..core.catalog import GraphKind
from ..core.graphs import GraphService
from .model import EnvelopeSummary, EvaluationSummary


def records_iri(graphs: GraphService) -> NamedNode:
    """``{base}evaluations/``, the IRI every evaluation record of the deployment lies under."""
    head = graphs.member(GraphKind.EVALUATION, "x").iri.value
    return NamedNode(head.removesuffix("x"))


def list_evaluations(graphs: GraphService) -> list[EvaluationSummary]:
    """Every evaluation of the deployment, by identifier, with the envelope version its record names as
    current and the digest recorded for it."""
    found = []
    for row in graphs.rows("evaluations", {"records": records_iri(graphs)}):
        envelope = None
        if "envelope" in row:
            envelope = EnvelopeSummary(row["envelope"].value, int(row["version"].value), row["digest"].value)
        found.append(EvaluationSummary(row["evaluation"].value, row["id"].value, row["title"].value, envelope))
    return found
