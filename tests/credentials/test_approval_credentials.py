"""Issue 27: the people's other decisions signed. Each approval recorded over REST (the DSO's, the criteria's and
the envelope's assessments, the envelope's sign-off, the plan's approval) is signed by its person's own key in the
same write, a credential whose subject is the approval's own RDF; a report's presentation carries them, and
digitalbazaar's verifier (under Node, offline) accepts it."""

from __future__ import annotations

from pathlib import Path

from service.credentials.presentations import check

from ..conftest import EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from ..reports.conftest import attested
from ..reports.test_reports_api import BODY
from .test_attestation_credentials import PROV, node_verifies, status_lists

pytestmark = EMBEDDED_ONLY
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

    verdict = node_verifies(presentation, tmp_path, status_lists(attested, presentation))
    assert (verdict["verified"], verdict["errors"]) == (True, [])
    assert [c.problems for c in map(check, presentation["verifiableCredential"])] == [
        () for _ in presentation["verifiableCredential"]
    ]
