"""The caie-spec measles record, imported over HTTP, has its numbers recomputed by OUR metric queries.

The import stores the record as sent and, beside it, the record read in our vocabulary (the graph
``{evaluation}/aligned``, made by queries/transforms/caie-materialize.rq over the EPO's equivalences). Our
published queries (queries/coverage.rq and queries/outcome-distribution.rq, run here through ``/sparql`` with
their parameters bound as the service binds them) then count the record's raw attestations: nothing reads the
numbers the record states. They must equal what it states, for the final report and for the draft (attestations
dated up to the draft's date), and the values worked out by hand from the record (shared/DESIGN.md):
- criteria a1..a5 weigh 2, 1, 2, 2, 1; each has an attestation with an outcome by the draft: coverage 8/8 = 1;
- draft (up to 2026-08-11T11:00Z): a1, a4, a5 passed, a3 failed, a2 cantTell: 3/5, 1/5, 1/5;
- final: a2 also attested passed (2026-08-12); a criterion is failed if any attestation failed, else passed if any
  passed: a1, a2, a4, a5 passed, a3 failed: 4/5, 1/5, 0.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import rdflib
from pyoxigraph import Literal, NamedNode

from service.core import queries
from service.core.namespaces import EARL, XSD
from service.core.store.base import bind

from ..conftest import BASE_URL, Service
from .common import MEASLES, post_record, shared_path

EVALUATION = BASE_URL + "evaluations/measles"
STATED = bind(
    """
PREFIX caie: <https://w3id.org/og-caie/epo#>
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?draft ?at ?coverage ?pass ?fail ?cantTell WHERE {
  GRAPH ?evaluation {
    ?report a caie:Report ; caie:draft ?draft ; prov:generatedAtTime ?at ; caie:coverage ?coverage ;
            caie:passRate ?pass ; caie:failRate ?fail ; caie:cantTellRate ?cantTell .
  }
}""",
    {"evaluation": NamedNode(EVALUATION)},
)
BY_HAND = {
    "draft": (Fraction(1), Fraction(3, 5), Fraction(1, 5), Fraction(1, 5)),
    "final": (Fraction(1), Fraction(4, 5), Fraction(1, 5), Fraction(0)),
}


def select(service: Service, query: str) -> list[dict[str, str]]:
    answer = service.http.post("/sparql", data={"query": query}, headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.text
    return [{name: cell["value"] for name, cell in row.items()} for row in answer.json()["results"]["bindings"]]


def recomputed(service: Service, as_of: str) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Coverage and the passed, failed and cantTell shares, as our published queries count them."""
    bindings = {"evaluation": NamedNode(EVALUATION), "asOf": Literal(as_of, datatype=NamedNode(XSD + "dateTime"))}
    [coverage] = select(service, bind(queries.load("coverage"), bindings))
    by_outcome = {
        row["outcome"]: int(row["criteria"])
        for row in select(service, bind(queries.load("outcome-distribution"), bindings))
    }
    covered = int(coverage["covered"])
    assert sum(by_outcome.values()) == covered
    shares = tuple(Fraction(by_outcome.get(EARL + o, 0), covered) for o in ("passed", "failed", "cantTell"))
    return (Fraction(Decimal(coverage["coveredWeight"])) / Fraction(Decimal(coverage["applicableWeight"])), *shares)


def test_our_queries_recompute_the_measles_reports_from_its_attestations(service: Service) -> None:
    answer = post_record(service, shared_path(*MEASLES).read_bytes(), "measles")
    assert answer.status_code == 201, answer.text  # it conforms to caie-spec's shapes and to ours

    reports = {("draft" if row["draft"] == "true" else "final"): row for row in select(service, STATED)}
    assert set(reports) == {"draft", "final"}
    for kind, stated in reports.items():
        numbers = recomputed(service, stated["at"])
        assert numbers == BY_HAND[kind], kind
        assert numbers == tuple(Fraction(Decimal(stated[n])) for n in ("coverage", "pass", "fail", "cantTell")), kind


def test_the_exported_record_gives_the_same_numbers_with_rdflib(service: Service) -> None:
    """Anyone can recompute them: the record's TriG export (the record and its reading in our terms), queried
    with rdflib's own SPARQL engine."""
    assert post_record(service, shared_path(*MEASLES).read_bytes(), "measles").status_code == 201
    trig = service.http.get("/evaluations/measles/record", headers={"Accept": "application/trig"})
    assert trig.status_code == 200
    dataset = rdflib.Dataset()
    dataset.parse(data=trig.text, format="trig")
    bindings = {"evaluation": rdflib.URIRef(EVALUATION)}
    [coverage] = dataset.query(queries.load("coverage"), initBindings=bindings)
    assert (int(coverage.applicable), int(coverage.covered)) == (5, 5)
    assert Decimal(str(coverage.coveredWeight)) == Decimal(str(coverage.applicableWeight)) == 8
    counts = {
        str(row.outcome): int(row.criteria)
        for row in dataset.query(queries.load("outcome-distribution"), initBindings=bindings)
    }
    assert counts == {EARL + "passed": 4, EARL + "failed": 1}
