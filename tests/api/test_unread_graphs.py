"""Shapes and judges graphs nothing will read are reported over HTTP, when loaded and at the envelope's sign-off
(issue 25 item 5, docs/new-domain.md "Graphs nothing reads"), on a domain ``caie init`` made; a judges graph that
names no DSO is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from service.cli import main
from service.core.bootstrap import spec_files
from service.core.catalog import GraphKind

from ..conftest import EMBEDDED_ONLY, Service
from ..test_new_domain import DOC, DOMAIN, replay, walk
from .test_graphs import snapshot

pytestmark = EMBEDDED_ONLY  # what is reported is the catalog's and the graphs' content, not the transport
TURTLE = {"Content-Type": "text/turtle"}
OTHER_DSO = "https://example.org/no-such/dso"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    assert main(["init", DOMAIN, str(tmp_path / DOMAIN)]) == 0
    return tmp_path / DOMAIN


def put(service: Service, resource: str, body: bytes) -> dict:
    answer = service.http.put(f"/graphs/{resource}", content=body, headers={**TURTLE, **service.auth("admin")})
    return {"status": answer.status_code, **answer.json()}


def test_each_graph_nothing_reads_is_named_with_why_when_it_is_loaded(service: Service, folder: Path) -> None:
    rules, judges = (folder / "scenario-rules.ttl").read_bytes(), (folder / "judges.ttl").read_bytes()
    before_dso = put(service, f"shapes/scenario-{DOMAIN}", rules)  # its DSO not loaded yet
    assert before_dso["status"] == 201 and len(before_dso["warnings"]) == 1, before_dso
    assert (
        "which no loaded DSO declares" in before_dso["warnings"][0]
        and "no derivation reads them" in before_dso["warnings"][0]
    )

    assert put(service, f"dso/{DOMAIN}", (folder / "dso.ttl").read_bytes())["warnings"] == []
    assert put(service, f"shapes/scenario-{DOMAIN}", rules)["warnings"] == []  # read now
    assert put(service, f"judges/{DOMAIN}", judges)["warnings"] == []

    misnamed = put(service, f"shapes/{DOMAIN}-rules", rules)
    assert misnamed["status"] == 201, misnamed
    [why] = misnamed["warnings"]
    assert why.startswith(f"<{misnamed['graph']}> is read by nothing") and "1 scenario rule(s)" in why, why
    assert f"load it as /graphs/shapes/scenario-{DOMAIN}-rules" in why, why

    kg_shapes = (
        b"@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        b"<https://example.org/shapes/loose> a owl:Ontology .\n"
        b"<https://example.org/shapes/loose/S> a sh:NodeShape ; sh:targetClass <https://example.org/C> .\n"
    )
    [loose] = put(service, "shapes/loose", kg_shapes)["warnings"]
    assert "<https://example.org/shapes/loose>" in loose and "epo:knowledgeGraphShapes" in loose, loose

    elsewhere = put(
        service,
        "judges/elsewhere",
        judges.replace(f"https://example.org/{DOMAIN}/dso>".encode(), f"{OTHER_DSO}>".encode()),
    )
    [other] = elsewhere["warnings"]
    assert f"it judges for <{OTHER_DSO}>" in other and "no loaded DSO declares" in other, other


def test_a_judges_graph_naming_no_dso_is_refused_and_stores_nothing(service: Service, folder: Path) -> None:
    before = snapshot(service)
    nameless = (folder / "judges.ttl").read_text(encoding="utf-8").replace("dcterms:conformsTo", "rdfs:seeAlso")
    refused = put(service, f"judges/{DOMAIN}", nameless.encode())
    assert refused["status"] == 422 and "dcterms:conformsTo" in refused["detail"], refused
    assert snapshot(service) == before


def test_the_sign_off_names_the_graphs_nothing_reads(service: Service, folder: Path) -> None:
    """The doc's walk up to the sign-off, with the scenario rules also loaded under a name derivation does not read."""
    steps = walk(DOC.read_text(encoding="utf-8"))
    upto = next(n for n, step in enumerate(steps) if step[:2] == ["call", "POST"] and step[2].endswith("/sign-off"))
    assert put(service, f"shapes/{DOMAIN}-rules", (folder / "scenario-rules.ttl").read_bytes())["status"] == 201
    answers = replay(service.http, service.auth, folder, steps[: upto + 1])
    signed = answers[-1][1]
    assert signed["kind"] == "envelope-sign-off" and len(signed["warnings"]) == 1, signed
    assert f"graphs/shapes/{DOMAIN}-rules> is read by nothing" in signed["warnings"][0], signed


def test_the_worked_examples_graphs_are_all_read(service: Service) -> None:
    """The vaccine-education DSO, every shapes file (the engine's own KG and record shapes among them) and the worked
    example's judges, loaded in the order ``caie serve --examples`` loads them: nothing to report, so that a warning
    means something."""
    files = [spec for spec in spec_files() if spec.kind in (GraphKind.DSO, GraphKind.SHAPES, GraphKind.JUDGES)]
    assert {spec.kind for spec in files} == {GraphKind.DSO, GraphKind.SHAPES, GraphKind.JUDGES}
    for spec in files:
        loaded = put(service, f"{spec.kind.value}/{spec.identifier}", spec.path.read_bytes())
        assert (loaded["status"], loaded["warnings"]) == (201, []), loaded
