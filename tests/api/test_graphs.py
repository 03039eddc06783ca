"""``/graphs`` over real HTTP on both backends: writes are checked before storing, refused writes change nothing,
each kind is written only by the roles that may write it, and evaluation graphs are never written here."""

from __future__ import annotations

from pyld import jsonld
from pyoxigraph import RdfFormat, parse

from ..conftest import BASE_URL, REPO, Service
from ..test_envelope import snapshot as record_snapshot
from .test_dereference import context_loader
from .test_evaluations import ID

TURTLE = {"Content-Type": "text/turtle"}
SMALL = b"@prefix ex: <http://example.org/> . ex:a ex:p ex:b ; ex:q \"text\" ."
ONTOLOGY = (
    b"@prefix ex: <http://example.org/> . @prefix owl: <http://www.w3.org/2002/07/owl#> . "
    b"ex:onto a owl:Ontology . ex:a ex:p ex:b ."
)
"""A small graph any kind-neutral write test can use: the ``ontologies`` kind only asks for one owl:Ontology."""


def catalog(service: Service) -> list[dict]:
    response = service.http.get("/graphs", headers={"Accept": "application/json"})
    assert response.status_code == 200
    return response.json()["graphs"]


def snapshot(service: Service) -> bytes:
    """Everything in the store, to prove a refused write changed nothing."""
    answer = service.store.answer("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "application/n-triples", union=True)
    return b"\n".join(sorted(answer.body.splitlines()))


def load_dso(service: Service, agent: str = "admin") -> None:
    response = service.http.put(
        "/graphs/dso/vaccine-education",
        content=(REPO / "ontologies/dso/vaccine-education.ttl").read_bytes(),
        headers={**TURTLE, **service.auth(agent)},
    )
    assert response.status_code == 201, response.text
    assert response.json()["loadedBy"] == agent


def test_put_get_append_delete(service: Service) -> None:
    created = service.http.put(
        "/graphs/ontologies/demo?title=Demo", content=ONTOLOGY, headers={**TURTLE, **service.auth()}
    )
    assert created.status_code == 201, created.text
    assert created.headers["location"] == "/graphs/ontologies/demo"
    entry = created.json()
    assert (entry["triples"], entry["title"], entry["loadedBy"], entry["kind"]) == (2, "Demo", "admin", "ontologies")
    assert entry["definesOntology"] == "http://example.org/onto" and len(entry["digest"]) == 64

    again = service.http.put("/graphs/ontologies/demo", content=ONTOLOGY, headers={**TURTLE, **service.auth()})
    assert again.status_code == 200 and again.json()["digest"] == entry["digest"]

    appended = service.http.post(
        "/graphs/ontologies/demo",
        content=b'<http://example.org/c> <http://example.org/p> "new" .',
        headers={"Content-Type": "application/n-triples", **service.auth()},
    )
    assert appended.status_code == 200 and appended.json()["triples"] == 3
    assert appended.json()["digest"] != entry["digest"]

    for media, rdf_format in [
        ("text/turtle", RdfFormat.TURTLE),
        ("application/rdf+xml", RdfFormat.RDF_XML),
        ("application/n-quads", RdfFormat.N_QUADS),
    ]:
        got = service.http.get("/graphs/ontologies/demo", headers={"Accept": media})
        assert got.status_code == 200 and got.headers["content-type"].startswith(media)
        assert len(list(parse(got.content, format=rdf_format))) == 3
    # JSON-LD is compacted with the published context, by IRI: read by a client that loads contexts (pyld)
    compacted = service.http.get("/graphs/ontologies/demo", headers={"Accept": "application/ld+json"}).json()
    assert compacted["@context"] == BASE_URL + "contexts/ob-caie.jsonld"
    nquads = jsonld.to_rdf(compacted, {"format": "application/n-quads", "documentLoader": context_loader(service)})
    assert len(nquads.splitlines()) == 3

    [listed] = [g for g in catalog(service) if g["identifier"] == "demo"]
    assert listed["triples"] == 3 and listed["loadedBy"] == "admin"

    assert service.http.delete("/graphs/ontologies/demo", headers=service.auth()).status_code == 204
    assert service.http.get("/graphs/ontologies/demo").status_code == 404
    assert all(g["identifier"] != "demo" for g in catalog(service))


def test_replace_is_whole(service: Service) -> None:
    headers = {**TURTLE, **service.auth()}
    service.http.put("/graphs/ontologies/r", content=ONTOLOGY, headers=headers)
    service.http.put(
        "/graphs/ontologies/r",
        content=b"<http://example.org/z> a <http://www.w3.org/2002/07/owl#Ontology> .",
        headers=headers,
    )
    body = service.http.get("/graphs/ontologies/r", headers={"Accept": "application/n-triples"}).content
    assert body.count(b"\n") == 1 and b"example.org/z" in body


def test_formats_are_read(service: Service) -> None:
    owl = "http://www.w3.org/2002/07/owl#Ontology"
    jsonld = b'{"@id": "http://example.org/a", "@type": "%s"}' % owl.encode()
    rdfxml = (
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:owl="http://www.w3.org/2002/07/owl#">'
        b'<owl:Ontology rdf:about="http://example.org/a"/></rdf:RDF>'
    )
    trig = b"<http://example.org/a> a <%s> ." % owl.encode()
    for media, body in [
        ("application/ld+json", jsonld),
        ("application/rdf+xml", rdfxml),
        ("application/trig", trig),
        (
            "application/n-quads",
            b"<http://example.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <%s> ." % owl.encode(),
        ),
    ]:
        response = service.http.put(
            "/graphs/ontologies/f", content=body, headers={"Content-Type": media, **service.auth()}
        )
        assert response.status_code in (200, 201), (media, response.text)
        assert response.json()["triples"] == 1


BAD_WRITES = [
    ("/graphs/ontologies/x", b"@prefix ex: <http://e/> . ex:a ex:p", TURTLE, 400, "not valid"),
    (
        "/graphs/ontologies/x",
        b"GRAPH <http://e/g> { <http://e/a> <http://e/p> 1 }",
        {"Content-Type": "application/trig"},
        400,
        "not valid",
    ),
    ("/graphs/widgets/x", SMALL, TURTLE, 404, "unknown graph kind 'widgets'"),
    ("/graphs/ontologies/bad%20id", SMALL, TURTLE, 400, "space"),
    ("/graphs/ontologies/bad$id", SMALL, TURTLE, 400, "invalid graph identifier"),
    ("/graphs/ontologies/x", SMALL, {"Content-Type": "application/pdf"}, 415, "cannot read application/pdf"),
    ("/graphs/ontologies/x", b"<a> <b> <c> ." * 200_000, {"Content-Type": "application/n-triples"}, 413, "at most"),
    ("/graphs/dso/x", SMALL, TURTLE, 422, "owl:Ontology"),
    ("/graphs/ontologies/x", SMALL, TURTLE, 422, "owl:Ontology"),
    ("/graphs/shapes/x", SMALL, TURTLE, 422, "sh:NodeShape"),
]
"""(path, body, headers, status, words in the problem's detail)"""


def test_bad_writes_are_refused_and_change_nothing(service: Service) -> None:
    """Each bad write in turn on one store per backend, the store compared after each."""
    service.http.put("/graphs/ontologies/x", content=ONTOLOGY, headers={**TURTLE, **service.auth()})
    before = snapshot(service)
    for path, body, headers, status, words in BAD_WRITES:
        case = (path, headers, status, words)
        response = service.http.put(path, content=body, headers={**headers, **service.auth()})
        assert response.status_code == status, (case, response.text)
        assert response.headers["content-type"] == "application/problem+json", case
        assert words in response.json()["detail"], case
        assert snapshot(service) == before, case


WRONG_ROLES = [
    ("theo", "PUT", "/graphs/kg/kenya", "admin or domain_expert"),
    ("dana", "POST", "/graphs/kg/kenya", "admin or domain_expert"),
    ("vera", "DELETE", "/graphs/kg/kenya", "admin or domain_expert"),
    ("theo", "PUT", "/graphs/dso/vaccine-education", "admin or domain_expert"),
    ("annie", "PUT", "/graphs/shapes/record", "admin"),
    ("annie", "DELETE", "/graphs/ontologies/epo", "admin"),
    ("theo", "POST", "/graphs/ontologies/epo", "admin"),
]
"""(agent, method, path, the roles the refusal names)"""


def test_writes_need_a_valid_credential_and_the_kinds_role(service: Service) -> None:
    """Authentication comes first: without a valid token every write is 401, evaluation graphs included. Then
    each kind is written only by its roles: 403, naming the roles and the agent. Nothing is stored."""
    before = snapshot(service)
    for path in ["/graphs/ontologies/x", "/graphs/evaluations/x"]:
        for headers in [{}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic abc"}]:
            response = service.http.put(path, content=b"not even RDF", headers={**TURTLE, **headers})
            assert response.status_code == 401
            assert response.headers["www-authenticate"].startswith("Bearer")
        assert service.http.delete(path).status_code == 401
    assert snapshot(service) == before
    for agent, method, path, roles in WRONG_ROLES:
        response = service.http.request(
            method, path, content=b"not even RDF", headers={**TURTLE, **service.auth(agent)}
        )
        assert response.status_code == 403, (agent, method, path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        detail = response.json()["detail"]
        assert f"needs the role {roles};" in detail and repr(agent) in detail, detail
        assert snapshot(service) == before, (agent, method, path)


def test_knowledge_graph_checked_against_its_dso(service: Service) -> None:
    load_dso(service, "annie")  # a domain expert writes a DSO
    kenya = (REPO / "ontologies/kg/kenya.ttl").read_bytes()
    # the DSO declares its KGs' shapes (epo:knowledgeGraphShapes): no KG is checked by less while they are missing
    missing = service.http.put("/graphs/kg/kenya", content=kenya, headers={**TURTLE, **service.auth("annie")})
    assert missing.status_code == 422 and "<https://w3id.org/ob-caie/shapes/vaccine-education-kg>" in missing.text
    shapes = service.http.put(
        "/graphs/shapes/vaccine-education-kg",
        headers={**TURTLE, **service.auth()},
        content=(REPO / "shapes/vaccine-education-kg.ttl").read_bytes(),
    )
    assert shapes.status_code == 201, shapes.text
    ok = service.http.put("/graphs/kg/kenya", content=kenya, headers={**TURTLE, **service.auth("annie")})
    assert ok.status_code == 201, ok.text
    assert ok.json()["conformsTo"] == "https://w3id.org/ob-caie/dso/vaccine-education"
    assert "Kenya" in ok.json()["title"] and ok.json()["loadedBy"] == "annie"

    before = snapshot(service)
    broken = (
        kenya
        + b"\n<https://w3id.org/ob-caie/kg/kenya/ghost> a <https://w3id.org/ob-caie/dso/vaccine-education/NoSuchClass> .\n"
    )
    refused = service.http.put("/graphs/kg/kenya", content=broken, headers={**TURTLE, **service.auth()})
    assert refused.status_code == 422
    problem = refused.json()
    assert problem["conforms"] is False and "violates its DSO" in problem["detail"]
    assert any("ghost" in v["focus_node"] for v in problem["violations"])
    as_rdf = service.http.put(
        "/graphs/kg/kenya", content=broken, headers={**TURTLE, **service.auth(), "Accept": "text/turtle"}
    )
    assert as_rdf.status_code == 422 and as_rdf.headers["content-type"].startswith("text/turtle")
    report = [q.triple for q in parse(as_rdf.content, format=RdfFormat.TURTLE)]
    assert any(t.object.value == "http://www.w3.org/ns/shacl#ValidationReport" for t in report)
    assert snapshot(service) == before


def test_knowledge_graph_without_a_known_dso_is_refused(service: Service) -> None:
    body = b"@prefix ex: <http://example.org/> . ex:a ex:p ex:b ."
    response = service.http.put("/graphs/kg/nowhere", content=body, headers={**TURTLE, **service.auth()})
    assert response.status_code == 422 and "must name its DSO" in response.json()["detail"]


def test_signed_off_record_cannot_be_changed_through_graphs(signed: Service) -> None:
    """Nobody, admin included, rewrites a signed-off envelope, forges an approval or deletes the record via /graphs."""
    path = f"/graphs/evaluations/{ID}"
    envelope = signed.http.get(f"/evaluations/{ID}/envelope").json()
    assert envelope["status"]["signedOff"] is True
    [entry] = [g for g in catalog(signed) if g["identifier"] == ID]
    before = record_snapshot(signed.store)
    record = signed.http.get(path, headers={"Accept": "application/n-triples"}).text
    forged_weight = record.replace(
        '"10"^^<http://www.w3.org/2001/XMLSchema#decimal>', '"1"^^<http://www.w3.org/2001/XMLSchema#decimal>'
    )
    assert forged_weight != record
    forged = f"<{BASE_URL}evaluations/{ID}/approvals/forged>"
    forged_approval = (
        f"{forged} a <https://w3id.org/ob-caie/epo/EnvelopeSignOff> .\n"
        f"{forged} <http://www.w3.org/ns/prov#wasAttributedTo> <{BASE_URL}agents/dana> ."
    )
    attempts = [("PUT", forged_weight), ("POST", forged_approval), ("DELETE", None)]
    for agent in ("theo", "dana", "annie", "admin"):
        for method, body in attempts:
            response = signed.http.request(
                method, path, content=body, headers={"Content-Type": "application/n-triples", **signed.auth(agent)}
            )
            assert response.status_code == 403, (agent, method, response.text)
            detail = response.json()["detail"]
            assert f"PUT /evaluations/{ID}/envelope" in detail and f"POST /evaluations/imports?id={ID}" in detail, (
                detail
            )
    assert record_snapshot(signed.store) == before
    assert [g for g in catalog(signed) if g["identifier"] == ID] == [entry]
    assert signed.http.get(f"/evaluations/{ID}/envelope").json() == envelope


def test_catalog_in_rdf_and_html(service: Service) -> None:
    service.http.put("/graphs/ontologies/x", content=ONTOLOGY, headers={**TURTLE, **service.auth()})
    turtle = service.http.get("/graphs", headers={"Accept": "text/turtle"})
    triples = [q.triple for q in parse(turtle.content, format=RdfFormat.TURTLE)]
    assert any(t.predicate.value == "http://rdfs.org/ns/void#triples" and t.object.value == "2" for t in triples)
    page = service.http.get("/graphs", headers={"Accept": "text/html"})
    assert page.headers["content-type"].startswith("text/html") and "ontologies/x" in page.text
    assert service.http.get("/graphs", headers={"Accept": "image/png"}).status_code == 406
