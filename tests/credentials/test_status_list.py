"""Issue 27 §3 over real HTTP: a superseded attestation is marked in the evaluation's W3C Bitstring Status List,
which the service signs with its own key and serves at a stable URL. The superseded attestation's credential still
verifies; digitalbazaar's verifier (``@digitalbazaar/vc`` with ``@digitalbazaar/vc-bitstring-status-list``, under
Node, offline) reads its bit as set and the superseding one's as not, and refuses a list changed after signing."""

from __future__ import annotations

import copy
from pathlib import Path
from urllib.parse import urlsplit

from service.credentials import eddsa
from service.credentials.status import bit_set, encoded_list

from ..conftest import EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from .test_attestation_credentials import node_verifies, status_lists

pytestmark = EMBEDDED_ONLY


def test_a_superseded_attestation_is_marked_in_the_signed_status_list(judged: Service, tmp_path: Path) -> None:
    body = {
        "criterion": "hanging",
        "outcome": "failed",
        "rationale": "neither reply says how to hang the net",
        "sufficiency": "sufficient",
        "appropriateness": "appropriate",
    }
    first = judged.http.post(f"/evaluations/{ID}/runs/1/attestations", json=body, headers=judged.auth("annie"))
    assert first.status_code == 201, first.text
    correction = {**body, "outcome": "cantTell", "supersedes": first.json()["attestation"], "reason": "one reply"}
    second = judged.http.post(f"/evaluations/{ID}/runs/1/attestations", json=correction, headers=judged.auth("annie"))
    assert second.status_code == 201, second.text
    old, new = (judged.http.get(urlsplit(made.json()["credential"]).path).json() for made in (first, second))
    presentation = {"@context": old["@context"], "type": ["VerifiablePresentation"], "verifiableCredential": [old, new]}

    lists = status_lists(judged, presentation)
    ((url, signed_list),) = lists.items()  # one list per evaluation, at a stable URL
    assert url == old["id"].rsplit("/judgments/", 1)[0] + "/status-list"  # the evaluation's
    assert judged.http.get(urlsplit(url).path).content == judged.http.get(urlsplit(url).path).content
    assert signed_list["issuer"] != old["issuer"] and eddsa.verify(signed_list) == []  # the service's key
    entry = old["credentialStatus"]
    assert (entry["type"], entry["statusPurpose"], entry["statusMessage"][1]["message"]) == (
        "BitstringStatusListEntry",
        "message",
        "superseded",
    )
    encoded = signed_list["credentialSubject"]["encodedList"]
    indexes = [int(c["credentialStatus"]["statusListIndex"]) for c in (old, new)]
    assert [bit_set(encoded, i) for i in indexes] == [True, False]

    # both credentials verify; the first's status says it was superseded, the correction's that it is current
    verdict = node_verifies(presentation, tmp_path, lists)
    assert verdict == {"verified": True, "errors": [], "statuses": {old["id"]: True, new["id"]: False}}

    # the list with the bit cleared, behind the service's signature: refused
    cleared = copy.deepcopy(signed_list)
    cleared["credentialSubject"]["encodedList"] = encoded_list([])
    refused = node_verifies(presentation, tmp_path, {url: cleared})
    assert refused["verified"] is False
    assert any('"BitstringStatusListCredential" not verified' in e for e in refused["errors"]), refused
