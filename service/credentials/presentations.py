"""Credentials together: a Verifiable Presentation of the credentials that bear on a report, and the offline
check of a credential or presentation file (``caie verify-credentials``), which needs nothing but the file: each
key is the issuer's ``did:key`` itself, each context a shipped one.

The presentation carries no proof of its own yet (the service's key signing it is issue 27's next slice): each
credential in it verifies by itself. It carries the status lists its credentials name, signed by the service's key,
so that a credential's status (an attestation current or superseded) is read from the file alone (:func:`statuses`).
"""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from ..core.errors import NotFound
from ..core.graphs import GraphService
from . import eddsa, records
from .contexts import CREDENTIALS_V2
from .keys import KeyRing
from .model import CredentialCheck
from .status import bit_set, status_list

PROV_ATTRIBUTED = "http://www.w3.org/ns/prov#wasAttributedTo"


def report_presentation(graphs: GraphService, report: str, keys: KeyRing | None = None) -> dict[str, Any]:
    """The credentials among the graphs the report ``report`` was computed from, those of its sign-off and
    acceptance and of its evaluation's approvals (``queries/report-credentials.rq``), as a presentation; with the
    service's ``keys``, the status lists they name too, signed. 404 when there is no such report."""
    if graphs.find_graph(report) is None:
        raise NotFound(f"no report <{report}>")
    rows = graphs.rows("report-credentials", {"report": NamedNode(report)})
    found = [records.document(graphs, row["credential"].value) for row in rows]
    named = sorted({c["credentialStatus"]["statusListCredential"] for c in found if "credentialStatus" in c})
    lists = [status_list(graphs, keys, iri) for iri in named] if keys is not None else []
    return presentation(found + [listed for listed in lists if listed is not None])


def presentation(credentials: list[dict[str, Any]]) -> dict[str, Any]:
    return {"@context": [CREDENTIALS_V2], "type": ["VerifiablePresentation"], "verifiableCredential": credentials}


def credentials_in(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The credentials of a presentation, or the one credential ``document`` is; ``ValueError`` for anything else."""
    kinds = document.get("type", [])
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "VerifiablePresentation" in kinds:
        found = document.get("verifiableCredential", [])
        return found if isinstance(found, list) else [found]
    if "VerifiableCredential" in kinds:
        return [document]
    raise ValueError("the document is neither a VerifiableCredential nor a VerifiablePresentation")


def check(credential: dict[str, Any]) -> CredentialCheck:
    """One credential's proof verified offline; its problems name it, its signer and, where its subject says who it
    is attributed to (``prov:wasAttributedTo``), that person."""
    subject = credential.get("credentialSubject", {})
    people = [v.get("id") for v in subject.get(PROV_ATTRIBUTED, [])] if isinstance(subject, dict) else []
    person = f", attributed to {', '.join(p for p in people if p)}" if any(people) else ""
    problems = eddsa.verify(credential)
    return CredentialCheck(
        str(credential.get("id", "")), str(credential.get("issuer", "")), tuple(p + person for p in problems)
    )


def statuses(credentials: list[dict[str, Any]]) -> dict[str, str]:
    """Each credential's status message (``current``, ``superseded``) as read from the status list credential it
    names, when that list is among ``credentials``; a credential whose list is not there is left out. Whether the
    list itself verifies is :func:`check`'s, like any credential's."""
    lists = {c.get("id"): c for c in credentials if "BitstringStatusListCredential" in c.get("type", [])}
    found = {}
    for credential in credentials:
        entry = credential.get("credentialStatus", {})
        listed = lists.get(entry.get("statusListCredential"))
        if listed is None:
            continue
        bit = bit_set(listed["credentialSubject"]["encodedList"], int(entry["statusListIndex"]))
        messages = {int(m["status"], 16): m["message"] for m in entry["statusMessage"]}
        found[str(credential["id"])] = messages[int(bit)]
    return found
