"""The published queries (``queries/*.rq``) are documented and valid SPARQL 1.1 for any engine."""

from __future__ import annotations

import re

import pyoxigraph
import pytest
import rdflib
from rdflib.plugins.sparql import prepareQuery

from service.core import queries
from service.core.store import ChangeSet, EmbeddedStore
from service.core.store.base import bind

_VARIABLE = re.compile(r"\?([A-Za-z_][A-Za-z0-9_]*)")


def header_and_body(name: str) -> tuple[str, str]:
    """The leading comment block of a query, and the rest."""
    lines = queries.load(name).splitlines(keepends=True)
    count = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    return "".join(lines[:count]), "".join(lines[count:])


def parameters(name: str) -> list[str]:
    """The variables the header's ``Parameters`` paragraph names."""
    header, _ = header_and_body(name)
    section = header.split("Parameters", 1)[1].split("\n#\n", 1)[0]
    return sorted(set(_VARIABLE.findall(section)))


@pytest.mark.parametrize("name", queries.names())
def test_query_is_headed_by_a_comment_and_parses_everywhere(name: str) -> None:
    text = queries.load(name)
    header, body = header_and_body(name)
    assert text.startswith("# "), f"{name}.rq must open with a comment saying what it computes"
    assert "Parameters" in header and len(header.splitlines()) >= 3, f"{name}.rq: the header names its parameters"
    pyoxigraph.Store().query(text)
    EmbeddedStore().select(text)
    rdflib.Dataset().query(prepareQuery(text))  # parsed once (rdflib's parser takes longer than the run), then run
    assert "GRAPH" in body, f"{name}.rq reads named graphs (GRAPH patterns), not the union default graph"


@pytest.mark.parametrize("name", queries.names())
def test_every_named_parameter_is_used_and_can_be_bound(name: str) -> None:
    _, body = header_and_body(name)
    named = parameters(name)
    assert named, f"{name}.rq names no parameter in its header"
    used = set(_VARIABLE.findall(body))
    assert set(named) <= used, f"{name}.rq names parameters it never uses: {set(named) - used}"
    bound = bind(queries.load(name), {variable: pyoxigraph.NamedNode(f"urn:x:{variable}") for variable in named})
    pyoxigraph.Store().query(bound)


@pytest.mark.parametrize(
    ("listing", "count"),
    [("scenarios", "scenario-count"), ("scenario-order", "scenario-count"), ("probes", "probe-count")],
)
def test_a_listing_and_its_count_filter_alike(listing: str, count: str) -> None:
    """The total a page reports must count what the pages list: both files hold the same FILTERs."""

    def filters(name: str) -> list[str]:
        return [
            line.strip()
            for line in header_and_body(name)[1].splitlines()
            if line.strip().startswith("FILTER") and "BOUND(" in line
        ]

    assert filters(listing) and filters(listing) == filters(count)


def test_scenario_exists_answers_for_the_scenario_and_graph_bound() -> None:
    store = EmbeddedStore()
    graph = pyoxigraph.NamedNode("http://x.test/evaluations/e/scenarios")
    scenario = pyoxigraph.NamedNode(graph.value + "/k1")
    store.apply(
        ChangeSet(
            insert=[
                pyoxigraph.Quad(
                    scenario,
                    pyoxigraph.NamedNode(str(rdflib.RDF.type)),
                    pyoxigraph.NamedNode("https://w3id.org/ob-caie/epo/Scenario"),
                    graph,
                )
            ]
        )
    )
    text = queries.load("scenario-exists")
    assert len(store.select(text, {"graph": graph, "scenario": scenario})) == 1
    assert store.select(text, {"graph": graph, "scenario": pyoxigraph.NamedNode(scenario.value + "x")}) == []
    assert store.select(text, {"graph": pyoxigraph.NamedNode(graph.value + "x"), "scenario": scenario}) == []


def test_queries_exist() -> None:
    assert {
        "plan-traceability",
        "blocked-scenarios-by-rule",
        "scenarios",
        "scenario-count",
        "scenario-exists",
        "probes",
        "probe-count",
        "evaluations",
    } <= set(queries.names())
