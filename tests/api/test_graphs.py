"""``/graphs`` over real HTTP on both backends: writes are checked before storing, and refused writes change nothing."""

from __future__ import annotations

import pytest
from pyoxigraph import RdfFormat, parse

from ..conftest import REPO, Service

TURTLE = {"Content-Type": "text/turtle"}
SMALL = b"@prefix ex: <http://example.org/> . ex:a ex:p ex:b ; ex:q \"text\" ."


def catalog(service: Service) -> list[dict]:
    response = service.http.get("/graphs", headers={"Accept": "application/json"})
    assert response.status_code == 200
    return response.json()["graphs"]


def snapshot(service: Service) -> bytes:
    """Everything in the store, to prove a refused write changed nothing."""
    answer = service.store.answer("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "application/n-triples", union=True)
    return b"\n".join(sorted(answer.body.splitlines()))


def load_dso(service: Service) -> None:
    response = service.http.put(
        "/graphs/dso/vaccine-education",
        content=(REPO / "ontologies/dso/vaccine-education.ttl").read_bytes(),
        headers={**TURTLE, **service.auth()},
    )
    assert response.status_code == 201, response.text


def test_put_get_append_delete(service: Service) -> None:
    created = service.http.put("/graphs/evaluations/demo?title=Demo", content=SMALL, headers={**TURTLE, **service.auth("theo")})
    assert created.status_code == 201, created.text
    assert created.headers["location"] == "/graphs/evaluations/demo"
    entry = created.json()
    assert (entry["triples"], entry["title"], entry["loadedBy"], entry["kind"]) == (2, "Demo", "theo", "evaluations")
    assert len(entry["digest"]) == 64

    again = service.http.put("/graphs/evaluations/demo", content=SMALL, headers={**TURTLE, **service.auth()})
    assert again.status_code == 200 and again.json()["digest"] == entry["digest"]

    appended = service.http.post(
        "/graphs/evaluations/demo", content=b'<http://example.org/c> <http://example.org/p> "new" .',
        headers={"Content-Type": "application/n-triples", **service.auth()},
    )
    assert appended.status_code == 200 and appended.json()["triples"] == 3
    assert appended.json()["digest"] != entry["digest"]

    for media, rdf_format in [("text/turtle", RdfFormat.TURTLE), ("application/ld+json", RdfFormat.JSON_LD),
                              ("application/rdf+xml", RdfFormat.RDF_XML), ("application/n-quads", RdfFormat.N_QUADS)]:
        got = service.http.get("/graphs/evaluations/demo", headers={"Accept": media})
        assert got.status_code == 200 and got.headers["content-type"].startswith(media)
        assert len(list(parse(got.content, format=rdf_format))) == 3

    [listed] = [g for g in catalog(service) if g["identifier"] == "demo"]
    assert listed["triples"] == 3 and listed["loadedBy"] == "admin"

    assert service.http.delete("/graphs/evaluations/demo", headers=service.auth()).status_code == 204
    assert service.http.get("/graphs/evaluations/demo").status_code == 404
    assert all(g["identifier"] != "demo" for g in catalog(service))


def test_replace_is_whole(service: Service) -> None:
    headers = {**TURTLE, **service.auth()}
    service.http.put("/graphs/evaluations/r", content=SMALL, headers=headers)
    service.http.put("/graphs/evaluations/r", content=b"<http://example.org/z> <http://example.org/p> 1 .", headers=headers)
    body = service.http.get("/graphs/evaluations/r", headers={"Accept": "application/n-triples"}).content
    assert body.count(b"\n") == 1 and b"example.org/z" in body


def test_formats_are_read(service: Service) -> None:
    jsonld = b'{"@id": "http://example.org/a", "http://example.org/p": {"@id": "http://example.org/b"}}'
    rdfxml = (b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">'
              b'<rdf:Description rdf:about="http://example.org/a"><ex:p rdf:resource="http://example.org/b"/></rdf:Description></rdf:RDF>')
    trig = b"<http://example.org/a> <http://example.org/p> <http://example.org/b> ."
    for media, body in [("application/ld+json", jsonld), ("application/rdf+xml", rdfxml), ("application/trig", trig),
                        ("application/n-quads", trig)]:
        response = service.http.put("/graphs/evaluations/f", content=body, headers={"Content-Type": media, **service.auth()})
        assert response.status_code in (200, 201), (media, response.text)
        assert response.json()["triples"] == 1


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "words"),
    [
        ("/graphs/evaluations/x", b"@prefix ex: <http://e/> . ex:a ex:p", TURTLE, 400, "not valid"),
        ("/graphs/evaluations/x", b"GRAPH <http://e/g> { <http://e/a> <http://e/p> 1 }", {"Content-Type": "application/trig"}, 400, "not valid"),
        ("/graphs/widgets/x", SMALL, TURTLE, 404, "unknown graph kind 'widgets'"),
        ("/graphs/evaluations/bad%20id", SMALL, TURTLE, 400, "invalid graph identifier"),
        ("/graphs/evaluations/x", SMALL, {"Content-Type": "application/pdf"}, 415, "cannot read application/pdf"),
        ("/graphs/evaluations/x", b"<a> <b> <c> ." * 200_000, {"Content-Type": "application/n-triples"}, 413, "at most"),
        ("/graphs/dso/x", SMALL, TURTLE, 422, "owl:Ontology"),
        ("/graphs/shapes/x", SMALL, TURTLE, 422, "sh:NodeShape"),
    ],
)
def test_bad_writes_are_refused_and_change_nothing(service: Service, path: str, body: bytes, headers: dict,
                                                   status: int, words: str) -> None:
    service.http.put("/graphs/evaluations/x", content=SMALL, headers={**TURTLE, **service.auth()})
    before = snapshot(service)
    response = service.http.put(path, content=body, headers={**headers, **service.auth()})
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert words in response.json()["detail"]
    assert snapshot(service) == before


def test_writes_need_a_valid_credential(service: Service) -> None:
    before = snapshot(service)
    for headers in [{}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic abc"}]:
        response = service.http.put("/graphs/evaluations/x", content=SMALL, headers={**TURTLE, **headers})
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert service.http.delete("/graphs/evaluations/x").status_code == 401
    assert snapshot(service) == before


def test_knowledge_graph_checked_against_its_dso(service: Service) -> None:
    load_dso(service)
    kenya = (REPO / "ontologies/kg/kenya.ttl").read_bytes()
    ok = service.http.put("/graphs/kg/kenya", content=kenya, headers={**TURTLE, **service.auth()})
    assert ok.status_code == 201, ok.text
    assert ok.json()["conformsTo"] == "https://w3id.org/ob-caie/dso/vaccine-education"
    assert "Kenya" in ok.json()["title"]

    before = snapshot(service)
    broken = kenya + b"\n<https://w3id.org/ob-caie/kg/kenya/ghost> a <https://w3id.org/ob-caie/dso/vaccine-education/NoSuchClass> .\n"
    refused = service.http.put("/graphs/kg/kenya", content=broken, headers={**TURTLE, **service.auth()})
    assert refused.status_code == 422
    problem = refused.json()
    assert problem["conforms"] is False and "violates its DSO" in problem["detail"]
    assert any("ghost" in v["focus_node"] for v in problem["violations"])
    as_rdf = service.http.put("/graphs/kg/kenya", content=broken, headers={**TURTLE, **service.auth(), "Accept": "text/turtle"})
    assert as_rdf.status_code == 422 and as_rdf.headers["content-type"].startswith("text/turtle")
    report = [q.triple for q in parse(as_rdf.content, format=RdfFormat.TURTLE)]
    assert any(t.object.value == "http://www.w3.org/ns/shacl#ValidationReport" for t in report)
    assert snapshot(service) == before


def test_knowledge_graph_without_a_known_dso_is_refused(service: Service) -> None:
    body = b"@prefix ex: <http://example.org/> . ex:a ex:p ex:b ."
    response = service.http.put("/graphs/kg/nowhere", content=body, headers={**TURTLE, **service.auth()})
    assert response.status_code == 422 and "must name its DSO" in response.json()["detail"]


def test_catalog_in_rdf_and_html(service: Service) -> None:
    service.http.put("/graphs/evaluations/x", content=SMALL, headers={**TURTLE, **service.auth()})
    turtle = service.http.get("/graphs", headers={"Accept": "text/turtle"})
    triples = [q.triple for q in parse(turtle.content, format=RdfFormat.TURTLE)]
    assert any(t.predicate.value == "http://rdfs.org/ns/void#triples" and t.object.value == "2" for t in triples)
    page = service.http.get("/graphs", headers={"Accept": "text/html"})
    assert page.headers["content-type"].startswith("text/html") and "evaluations/x" in page.text
    assert service.http.get("/graphs", headers={"Accept": "image/png"}).status_code == 406

