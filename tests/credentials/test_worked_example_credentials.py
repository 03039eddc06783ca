"""The worked example's report, as ``caie serve --examples`` builds it through the engine's functions: the domain
expert's attestations imported from a file are signed by her own key, as one recorded over REST is, and so are the
report's sign-off (hers) and acceptance (the organizational expert's, by another key); the report's presentation
holds a credential for each attestation of its run and for each sign-off, and digitalbazaar's verifier (under
Node, offline) accepts it."""

from __future__ import annotations

from pathlib import Path

from service.credentials.presentations import check

from ..conftest import EMBEDDED_ONLY, Service
from .test_attestation_credentials import PROV, caie_lines, node_verifies, status_lists

pytestmark = EMBEDDED_ONLY


def test_the_worked_examples_presentation_verifies(example: Service, tmp_path: Path) -> None:
    served = example.http.get("/evaluations/measles/reports/1/credentials")
    assert served.status_code == 200, served.text
    presentation = served.json()
    # the evaluation's status list, signed by the service, travels with the credentials it speaks of
    (status_list,) = [c for c in presentation["verifiableCredential"] if "BitstringStatusListCredential" in c["type"]]
    credentials = [c for c in presentation["verifiableCredential"] if c is not status_list]
    report = example.http.get("/evaluations/measles/reports/1").json()
    listed = example.http.get("/evaluations/measles/attestations").json()["attestations"]
    of_run = [a for a in listed if a["run"] == report["run"]]
    assert sum(a["current"] for a in of_run) == 13 and len(of_run) == 14  # c08's first attestation superseded
    by_subject = {c["credentialSubject"]["id"]: c for c in credentials}
    attested = {a["attestation"] for a in of_run}
    # one credential per attestation of the run, the superseded one's too, each signed by the expert who made it
    # and one for the sign-off and one for the acceptance, whose subject is the sign-off's own RDF
    signed = {report[kind]["iri"]: report[kind]["agent"] for kind in ("signOff", "acceptance")}
    assert sorted(by_subject) == sorted([*attested, *signed])
    assert len(credentials) == len(by_subject)
    people = {a["attestation"]: a["expert"] for a in of_run} | signed
    for subject_iri, person in people.items():
        assert by_subject[subject_iri]["credentialSubject"][PROV + "wasAttributedTo"] == [{"id": person}]
    (annie,) = {by_subject[a]["issuer"] for a in attested}  # one person, one key: hers signs the sign-off too
    acceptance = by_subject[report["acceptance"]["iri"]]
    assert by_subject[report["signOff"]["iri"]]["issuer"] == annie != acceptance["issuer"]
    approved = acceptance["credentialSubject"]["https://w3id.org/ob-caie/epo/approves"]
    assert approved == [
        {
            "id": report["report"],
            "https://w3id.org/ob-caie/epo/isDraft": [
                {"@value": "false", "@type": "http://www.w3.org/2001/XMLSchema#boolean"}
            ],
        }
    ]

    assert status_lists(example, presentation) == {status_list["id"]: status_list}  # the one the service serves
    verdict = node_verifies(presentation, tmp_path, status_lists(example, presentation))
    assert (verdict["verified"], verdict["errors"]) == (True, [])
    # each attestation's status: c08's first one superseded, the others current (sign-offs carry none)
    superseded = {by_subject[a["attestation"]]["id"]: not a["current"] for a in of_run}
    assert verdict["statuses"] == superseded and sum(superseded.values()) == 1
    assert [c.problems for c in map(check, credentials)] == [() for _ in credentials]
    # caie verify-credentials reads the statuses from the file alone, as digitalbazaar's verifier does
    code, lines = caie_lines(presentation, tmp_path)
    assert code == 0 and all(line["verified"] for line in lines)
    read = {line["credential"]: line["status"] for line in lines if "status" in line}
    assert read == {iri: "superseded" if gone else "current" for iri, gone in superseded.items()}
