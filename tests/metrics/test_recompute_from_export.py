"""Issue 11, "Done when" 2: the record exported as TriG (GET /evaluations/{id}/record), read by rdflib's own SPARQL
engine (a Dataset without a union default graph: the queries read named graphs), gives the same numbers from each
metric query (queries/*.rq, parameters given as rdflib's own initBindings, the substitution each header allows) as the service answers over HTTP:
every query with no optional parameter, and the ones a date or a run changes with those.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache

import rdflib
from pyoxigraph import Literal, NamedNode
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.sparql import Query

from service.core import queries
from service.core.namespaces import XSD

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, graphs_over
from .conftest import EVALUATION, ID, LEVEL_OUTCOMES, before_correction, tree_levels

pytestmark = EMBEDDED_ONLY  # the export is the same dataset from either store; the numbers checked are rdflib's


def exported(service: Service) -> rdflib.Dataset:
    answer = service.http.get(f"{EVALUATION}/record", headers={"Accept": "application/trig"})
    assert answer.status_code == 200, answer.text
    dataset = rdflib.Dataset(default_union=False)
    dataset.parse(data=answer.text, format="trig")
    return dataset


def select(dataset: rdflib.Dataset, name: str, **params: NamedNode | Literal | None) -> list[dict[str, str]]:
    """Rows of query ``name``, the evaluation and ``params`` substituted (one given as ``None`` left unbound), as
    the query's header allows: rdflib's own parameters (``initBindings``) on its parse of the file."""
    bound = {"evaluation": NamedNode(f"{BASE_URL}evaluations/{ID}"), **params}
    values = {rdflib.Variable(name): from_oxigraph(term) for name, term in bound.items() if term is not None}
    return [
        {str(k): str(v) for k, v in row.asdict().items()} for row in dataset.query(parsed(name), initBindings=values)
    ]


@cache
def parsed(name: str) -> Query:
    """rdflib's parse of a query file, made once: parsing takes rdflib longer than answering, and the tests ask
    each query under several parameters. Parsed with no prefixes but the query's own, as a third party's engine
    reads it."""
    return prepareQuery(queries.load(name))


def from_oxigraph(term: NamedNode | Literal) -> rdflib.term.Identifier:
    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    return rdflib.Literal(term.value, lang=term.language, datatype=None if term.language else term.datatype.value)


def coverage(dataset: rdflib.Dataset, **params: NamedNode | Literal | None) -> tuple:
    [row] = select(dataset, "coverage", **params)
    return int(row["applicable"]), int(row["covered"]), Decimal(row["applicableWeight"]), Decimal(row["coveredWeight"])


def served_coverage(body: dict) -> tuple:
    c = body["coverage"]
    return c["applicable"], c["covered"], Decimal(c["applicableWeight"]), Decimal(c["coveredWeight"])


def shares(dataset: rdflib.Dataset, **params: NamedNode | Literal) -> dict[str, tuple]:
    return {
        row["outcome"].rsplit("#", 1)[-1]: (int(row["criteria"]), Decimal(row["outcomeWeight"]))
        for row in select(dataset, "outcome-distribution", **params)
    }


def served_shares(body: dict) -> dict[str, tuple]:
    return {
        o["outcome"]: (o["criteria"], Decimal(o["weight"])) for o in body["distribution"]["outcomes"] if o["criteria"]
    }


def counts(dataset: rdflib.Dataset, **params: NamedNode | Literal) -> dict[tuple[str, str], tuple]:
    return {
        (r["criterion"], r["run"]): (int(r["k"]), int(r["n"]), int(r["frame"]), int(r["cases"]))
        for r in select(dataset, "pass-rate-counts", **params)
    }


def served_counts(body: dict) -> dict[tuple[str, str], tuple]:
    return {(p["criterion"], p["run"]): (p["k"], p["n"], p["N"], p["cases"]) for p in body["passRates"]}


def levels(dataset: rdflib.Dataset, **params: NamedNode | Literal | None) -> dict[tuple[str, str | None], tuple]:
    """drill-down.rq's rows as :func:`tree_levels` flattens the served tree."""
    found: dict[tuple[str, str | None], tuple] = {}
    for r in select(dataset, "drill-down", **params):
        if r["level"] == "criterion":
            found[("criterion", r["criterion"])] = (
                r["outcome"].rsplit("#", 1)[-1],
                r["weight"],
                int(r["cases"]),
                int(r["determinations"]),
            )
        else:
            found[(r["level"], r.get(r["level"]))] = (
                tuple(int(r[o]) for o in LEVEL_OUTCOMES),
                r["weight"],
                r["coveredWeight"],
                int(r["cases"]),
                int(r["determinations"]),
            )
    return found


def test_every_metric_query_recomputes_the_services_numbers_from_the_exported_record(measured: Service) -> None:
    http, dataset = measured.http, exported(measured)
    body = http.get(f"{EVALUATION}/metrics").json()
    assert coverage(dataset) == served_coverage(body) == (3, 2, Decimal(6), Decimal(5))
    assert shares(dataset) == served_shares(body)
    assert counts(dataset) == served_counts(body)
    assert [r["criterion"] for r in select(dataset, "gaps")] == [g["criterion"] for g in body["gaps"]]
    assert select(dataset, "failures") == body["failures"] == []
    assert select(dataset, "execution-errors") == body["executionErrors"] == []
    drilled = levels(dataset)
    assert drilled == tree_levels(http.get(f"{EVALUATION}/drill-down").json()["summary"])
    assert (len(drilled), drilled[("summary", None)]) == (3 + 2 + 3 + 1, ((1, 0, 1, 1), "6", "5", 5, 6))
    links = http.get(f"{EVALUATION}/trace").json()["links"]
    assert {
        (r["criterion"], r["case"], r.get("determination"), r.get("attestation"))
        for r in select(dataset, "trace-requirement")
    } == {(link["criterion"], link["case"], link["determination"], link["attestation"]) for link in links}

    as_of = before_correction(measured)
    date = Literal(as_of, datatype=NamedNode(XSD + "dateTime"))
    body = http.get(f"{EVALUATION}/metrics", params={"asOf": as_of}).json()
    assert coverage(dataset, asOf=date) == served_coverage(body)
    assert shares(dataset, asOf=date) == served_shares(body) == {"failed": (1, Decimal(3)), "cantTell": (1, Decimal(2))}
    assert [r["criterion"] for r in select(dataset, "failures", asOf=date)] == [
        f["criterion"] for f in body["failures"]
    ]
    assert counts(dataset, asOf=date) == served_counts(body)
    assert levels(dataset, asOf=date) == tree_levels(
        http.get(f"{EVALUATION}/drill-down", params={"asOf": as_of}).json()["summary"]
    )
    traced = http.get(f"{EVALUATION}/failures/trace", params={"asOf": as_of}).json()["traces"]
    assert (
        [(r["attestation"], r["determination"], r["judge"]) for r in select(dataset, "trace-failure", asOf=date)]
        == [(t["attestation"], t["determination"], t["judge"]) for t in traced]
        != []
    )

    run = NamedNode(f"{BASE_URL}evaluations/{ID}/runs/2")
    body = http.get(f"{EVALUATION}/metrics", params={"run": 2}).json()
    assert coverage(dataset, run=run) == served_coverage(body)
    assert counts(dataset, run=run) == served_counts(body)
    assert [r["criterion"] for r in select(dataset, "gaps", run=run)] == [g["criterion"] for g in body["gaps"]]
    drilled = levels(dataset, run=run)
    assert drilled == tree_levels(http.get(f"{EVALUATION}/drill-down", params={"run": 2}).json()["summary"])
    assert drilled[("summary", None)] == ((0, 0, 0, 3), "6", "0", 1, 1)
    # the per-criterion outcomes that report pages and comparisons read agree with coverage under every parameter
    for params in ({}, {"asOf": date}, {"run": run}):
        outcomes, counted = select(dataset, "criterion-outcomes", **params), coverage(dataset, **params)
        covered = [row for row in outcomes if not row["outcome"].endswith("#untested")]
        assert (len(outcomes), len(covered)) == counted[:2]
        by_requirement = select(dataset, "coverage-by-requirement", **params)
        assert (
            sum(int(r["applicable"]) for r in by_requirement),
            sum(int(r["covered"]) for r in by_requirement),
            sum(Decimal(r["applicableWeight"]) for r in by_requirement),
            sum(Decimal(r["coveredWeight"]) for r in by_requirement),
        ) == counted
        assert outcomes == [
            {name: str(term.value) for name, term in row.items()}
            for row in graphs_over(measured.store).rows(
                "criterion-outcomes", {"evaluation": NamedNode(f"{BASE_URL}evaluations/{ID}"), **params}
            )
        ]
    # the envelope given instead of the evaluation, its link still in the record
    envelope = NamedNode(f"{BASE_URL}evaluations/{ID}/envelope/v1")
    assert coverage(dataset, evaluation=None, envelope=envelope) == (3, 2, Decimal(6), Decimal(5))


def test_a_record_without_in_scope_triples_or_an_evaluation_link_is_read_by_its_envelope(measured: Service) -> None:
    """A record made elsewhere (caie-spec's) states no epo:inScope and links no evaluation to its envelope: bound to
    the envelope, the queries count its criteria as applicable all the same."""
    dataset = exported(measured)
    epo = rdflib.Namespace("https://w3id.org/ob-caie/epo/")
    for predicate in (epo.inScope, epo.operationalEnvelope, epo.inEvaluation):
        for quad in list(dataset.quads((None, predicate, None, None))):
            dataset.remove(quad)
    envelope = NamedNode(f"{BASE_URL}evaluations/{ID}/envelope/v1")
    assert coverage(dataset, evaluation=None, envelope=envelope) == (3, 2, Decimal(6), Decimal(5))
    assert coverage(dataset) == (0, 0, Decimal(0), Decimal(0))  # no envelope to read without the link
