"""The whole record downloads as one dataset that a third party checks with tools of its own: rdflib
runs the published approvals query over it and finds what the service reports, and every graph's
digest, recomputed from the download, equals the one its catalog entry records."""

from __future__ import annotations

import pytest
import rdflib
from pyoxigraph import NamedNode, Quad, RdfFormat, parse

from service.core import queries
from service.core.digest import graph_digest

from ..conftest import BASE_URL, Service
from .test_evaluations import ID

pytestmark = pytest.mark.backends("embedded", "remote", "virtuoso")

DIGEST = NamedNode("https://w3id.org/ob-caie/catalog/digest")


def test_record_download_is_recomputable_elsewhere(signed: Service) -> None:
    response = signed.http.get(f"/evaluations/{ID}/record", headers={"Accept": "application/n-quads"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/n-quads")
    quads = list(parse(response.content, format=RdfFormat.N_QUADS))
    catalog = NamedNode(BASE_URL + "graphs")
    recorded = {q.subject.value: q.object.value for q in quads if q.graph_name == catalog and q.predicate == DIGEST}
    graphs: dict[str, list[Quad]] = {}
    for quad in quads:
        if quad.graph_name != catalog:
            graphs.setdefault(quad.graph_name.value, []).append(quad)
    assert BASE_URL + f"evaluations/{ID}" in graphs and len(graphs) > 12  # the head and one graph per approval
    assert {name: graph_digest(content) for name, content in graphs.items()} == {
        name: recorded[name] for name in graphs
    }

    dataset = rdflib.Dataset()
    dataset.parse(data=response.content, format="nquads")
    evaluation = rdflib.URIRef(BASE_URL + f"evaluations/{ID}")
    theirs = {
        str(row.approval) for row in dataset.query(queries.load("approvals"), initBindings={"evaluation": evaluation})
    }
    ours = {a["@id"] for a in signed.http.get(f"/evaluations/{ID}/approvals").json()["approvals"]}
    assert theirs == ours and len(ours) > 10

    turtle_only = signed.http.get(f"/evaluations/{ID}/record", headers={"Accept": "text/turtle"})
    assert turtle_only.status_code == 406
    assert signed.http.get("/evaluations/nothing-here/record").status_code == 404
