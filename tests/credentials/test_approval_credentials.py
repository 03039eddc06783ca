"""Issue 27: the people's other decisions signed. Each approval recorded over REST (the DSO's, the criteria's and
the envelope's assessments, the envelope's sign-off, the plan's approval) is signed by its person's own key in the
same write, a credential whose subject is the approval's own RDF, and so is an annotator's batch of determinations
(as a judge's batch is: its graph's digest); a report's presentation carries them, and digitalbazaar's verifier
(under Node, offline) accepts it."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import NamedNode

from service.core.digest import graph_digest
from service.credentials.presentations import check

from ..conftest import EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from ..reports.conftest import attested
from ..reports.test_reports_api import BODY
from .test_attestation_credentials import PROV, node_verifies, status_lists

pytestmark = EMBEDDED_ONLY
EPO = "https://w3id.org/ob-caie/epo/"
__all__ = ["attested"]


def test_approvals_are_signed_by_their_people_and_in_the_reports_presentation(
    attested: Service, tmp_path: Path
) -> None:
    made = attested.http.post(f"/evaluations/{ID}/reports", json=BODY, headers=attested.auth("theo"))
    assert made.status_code == 201, made.text
    presentation = attested.http.get(f"/evaluations/{ID}/reports/1/credentials").json()
    approvals = attested.http.get(f"/evaluations/{ID}/approvals").json()["approvals"]
    by_subject = {c["credentialSubject"]["id"]: c for c in presentation["verifiableCredential"]}

    kinds = {a["kind"] for a in approvals}
    assert {"relevance", "envelope-sign-off", "plan-approval"} <= kinds  # the record's, made over REST
    for approval in approvals:  # each signed, by the key of the person it is attributed to
        credential = by_subject[approval["@id"]]
        assert credential["id"] == f"{approval['@id']}/credential"
        (person,) = credential["credentialSubject"][PROV + "wasAttributedTo"]
        assert person["id"].endswith(f"/agents/{approval['agent']}")
    issuers = {a["agent"]: by_subject[a["@id"]]["issuer"] for a in approvals}
    assert len(set(issuers.values())) == len(issuers) > 1  # one key per person, not the service's

    # the annotator's determinations (the fixture's): one batch, signed by the annotator's key as its digest
    digests = [c for c in presentation["verifiableCredential"] if EPO + "graphDigest" in c["credentialSubject"]]
    ((batch, person),) = [
        (c["credentialSubject"]["id"], c["credentialSubject"][PROV + "wasAttributedTo"][0]["id"]) for c in digests
    ]
    (signed,) = digests[0]["credentialSubject"][EPO + "graphDigest"]
    assert signed["@value"] == graph_digest(attested.store.graph_triples(NamedNode(batch)))
    listed = attested.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
    assert {d["judge"] for d in listed if d["determination"].startswith(batch + "/")} == {person}
    assert "/agents/" in person and digests[0]["issuer"] not in issuers.values()  # a person, the annotator

    verdict = node_verifies(presentation, tmp_path, status_lists(attested, presentation))
    assert (verdict["verified"], verdict["errors"]) == (True, [])
    assert [c.problems for c in map(check, presentation["verifiableCredential"])] == [
        () for _ in presentation["verifiableCredential"]
    ]
