"""Issue 27's first slice over real HTTP: a domain expert's attestation is signed as a W3C Verifiable Credential
(``eddsa-rdfc-2022``) by the expert's own key, and digitalbazaar's verifier (``@digitalbazaar/vc`` under Node,
tests/js/verify-credential.mjs, offline with only the shipped contexts) accepts the credential the service serves,
and refuses it once one subject triple is changed, in the document or in the store behind the service's back. Our
own verifier names the credential and its signer when the signature is forged.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from service.credentials import eddsa
from service.credentials.contexts import DIRECTORY, SHIPPED
from service.credentials.keys import KeyRing
from service.credentials.multibase import did_key, public_key_of, verification_method

from ..conftest import EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID

pytestmark = EMBEDDED_ONLY
JS = Path(__file__).parents[1] / "js"
EARL = "http://www.w3.org/ns/earl#"
PROV = "http://www.w3.org/ns/prov#"


def status_lists(service: Service, document: dict[str, Any]) -> dict[str, Any]:
    """The status list credentials the credentials of ``document`` (one, or a presentation's) name, as served."""
    named = {
        c["credentialStatus"]["statusListCredential"]
        for c in document.get("verifiableCredential", [document])
        if "credentialStatus" in c
    }
    return {url: service.http.get(urlsplit(url).path).json() for url in named}


def node_verifies(credential: dict[str, Any], tmp_path: Path, lists: dict[str, Any] | None = None) -> dict[str, Any]:
    """digitalbazaar's verdict on ``credential``: {"verified": bool, "errors": [...], "statuses": {id: bit}}, with
    the status list credentials ``lists`` (by URL) to load."""
    path = tmp_path / "credential.json"
    path.write_text(json.dumps(credential), encoding="utf-8")
    documents = [f"{url}={DIRECTORY / file}" for url, file in SHIPPED.items()]
    for number, (url, document) in enumerate((lists or {}).items()):
        saved = tmp_path / f"status-list-{number}.json"
        saved.write_text(json.dumps(document), encoding="utf-8")
        documents.append(f"{url}={saved}")
    done = subprocess.run(
        ["node", str(JS / "verify-credential.mjs"), str(path), *documents],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    verdict: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (0 if verdict["verified"] else 1), done.stderr
    return verdict


def caie_verifies(document: dict[str, Any], tmp_path: Path, *, problems: bool = False) -> tuple[int, list[Any]]:
    """``caie verify-credentials`` on ``document``: its exit code, and each credential's (id, verified or the
    problems joined)."""
    code, lines = caie_lines(document, tmp_path)
    return code, [(line["credential"], " ".join(line["problems"]) if problems else line["verified"]) for line in lines]


def caie_lines(document: dict[str, Any], tmp_path: Path) -> tuple[int, list[dict[str, Any]]]:
    """``caie verify-credentials`` on ``document``: its exit code and its lines, one per credential."""
    path = tmp_path / "presentation.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "verify-credentials", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def test_an_attestation_is_a_credential_a_standard_verifier_accepts(judged: Service, tmp_path: Path) -> None:
    body = {
        "criterion": "hanging",
        "outcome": "failed",
        "rationale": 'neither reply says how to fix the net\t("tucked in")',
        "sufficiency": "sufficient",
        "appropriateness": "appropriate",
    }
    made = judged.http.post(f"/evaluations/{ID}/runs/1/attestations", json=body, headers=judged.auth("annie"))
    assert made.status_code == 201, made.text
    attestation = made.json()
    path = urlsplit(attestation["credential"]).path  # the credential's IRI is the deployment's, served here
    served = judged.http.get(path, headers={"Accept": "application/vc"})
    assert served.status_code == 200, served.text
    credential = served.json()
    subject = credential["credentialSubject"]
    assert (credential["id"], subject["id"]) == (attestation["credential"], attestation["attestation"])
    assert credential["proof"]["verificationMethod"].startswith(credential["issuer"] + "#z6Mk")
    # the subject is the attestation's own RDF: its result's rationale among it
    (result,) = subject[EARL + "result"]
    assert result[EARL + "info"] == [{"@value": body["rationale"]}]

    lists = status_lists(judged, credential)
    assert node_verifies(credential, tmp_path, lists) == {
        "verified": True,
        "errors": [],
        "statuses": {credential["id"]: False},  # current: not superseded
    }
    assert eddsa.verify(credential) == []

    changed = copy.deepcopy(credential)
    changed["credentialSubject"][EARL + "result"][0][EARL + "outcome"] = [{"id": EARL + "passed"}]
    assert node_verifies(changed, tmp_path, lists)["verified"] is False

    # forged: signed by another key, the proof still naming the expert's
    forged = copy.deepcopy(credential)
    unsecured = {k: v for k, v in forged.items() if k != "proof"}
    options = {k: v for k, v in forged["proof"].items() if k != "proofValue"}
    forged["proof"] = eddsa.sign(
        unsecured, Ed25519PrivateKey.generate(), options["verificationMethod"], options["created"]
    )["proof"]
    (problem,) = eddsa.verify(forged)
    assert credential["id"] in problem and credential["issuer"] in problem and "signature does not verify" in problem

    # a valid signature by a key that is not the expert's (its own did:key as the verification method)
    other = Ed25519PrivateKey.generate()
    method = verification_method(other.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    not_theirs = {**unsecured, "proof": eddsa.sign(unsecured, other, method, options["created"])["proof"]}
    refused = node_verifies(not_theirs, tmp_path, lists)
    assert (
        not refused["verified"]
        and "Credential issuer must match the verification method controller." in refused["errors"]
    )
    (problem,) = eddsa.verify(not_theirs)
    assert credential["id"] in problem and "its verification method is not the issuer's key" in problem

    # the report counts the attestation: its presentation carries the credential, which both verifiers accept
    report = judged.http.post(
        f"/evaluations/{ID}/reports", json={"run": 1, "fitness": "NotFit"}, headers=judged.auth("theo")
    )
    assert report.status_code == 201, report.text
    presentation = judged.http.get(f"/evaluations/{ID}/reports/1/credentials")
    assert (presentation.status_code, presentation.headers["content-type"]) == (200, "application/vp")
    presented = {c["id"]: c for c in presentation.json()["verifiableCredential"]}  # the approvals' too
    assert presented[credential["id"]] == credential
    assert node_verifies(presentation.json(), tmp_path, lists)["verified"] is True
    assert caie_verifies(presentation.json(), tmp_path) == (0, [(iri, True) for iri in presented])

    # one triple changed in the store, behind the service's back: the presentation no longer verifies, by name
    judged.store.run_update(
        f"DELETE {{ GRAPH ?g {{ ?r <{EARL}outcome> <{EARL}failed> }} }} "
        f"INSERT {{ GRAPH ?g {{ ?r <{EARL}outcome> <{EARL}passed> }} }} "
        f"WHERE {{ GRAPH ?g {{ <{attestation['attestation']}> <{EARL}result> ?r . ?r <{EARL}outcome> <{EARL}failed> }} }}"
    )
    tampered = judged.http.get(f"/evaluations/{ID}/reports/1/credentials").json()
    (changed_in_store,) = [c for c in tampered["verifiableCredential"] if c["id"] == credential["id"]]
    assert changed_in_store["credentialSubject"][EARL + "result"][0][EARL + "outcome"] == [{"id": EARL + "passed"}]
    assert node_verifies(tampered, tmp_path, lists)["verified"] is False
    code, lines = caie_verifies(tampered, tmp_path, problems=True)
    ((named, problem),) = [(iri, problem) for iri, problem in lines if problem]  # the others still verify
    assert code == 1 and named == credential["id"]
    assert credential["issuer"] in problem and "signature does not verify" in problem
    assert f"attributed to {subject[PROV + 'wasAttributedTo'][0]['id']}" in problem  # the expert, by their IRI
    # and the report's own verification names it, its signer and the expert
    verified = judged.http.get(f"/evaluations/{ID}/reports/1/verify").json()
    (failed,) = [c for c in verified["credentials"] if not c["holds"]]
    assert (verified["holds"], failed["credential"], failed["recomputed"]) == (False, credential["id"], problem)
    assert f"credential {credential['id']}" in " ".join(verified["differences"])


def test_the_shipped_context_is_served_as_shipped(service: Service) -> None:
    served = service.http.get("/contexts/credentials-v2.jsonld")
    assert served.status_code == 200
    assert served.content == (DIRECTORY / SHIPPED["https://www.w3.org/ns/credentials/v2"]).read_bytes()


def test_keys_are_files_of_mode_0600_kept_across_restarts(tmp_path: Path) -> None:
    agent = "https://example.org/agents/annie"
    first = KeyRing(tmp_path / "keys")
    did = first.did(agent)
    (key_file,) = (tmp_path / "keys").iterdir()
    assert (os.stat(key_file).st_mode & 0o777, os.stat(tmp_path / "keys").st_mode & 0o777) == (0o600, 0o700)
    assert KeyRing(tmp_path / "keys").did(agent) == did  # read back, not made again
    assert did == did_key(public_key_of(did)) and did.startswith("did:key:z6Mk")
    assert first.did("service") != did
