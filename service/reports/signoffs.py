"""A report's sign-offs, each appended as a graph of its own under the report and never rewritten: the domain
expert signs the report (``{report}/sign-off``, an ``epo:ReportSignOff``), then the organizational expert accepts
it (``{report}/acceptance``, an ``epo:ReportAcceptance``), which makes it final. Each names the digest of the
report graph it approved and holds only while that graph and the graphs the report was computed from are unchanged. A report whose figures or digests no
longer verify against the record is refused (409, listing what differs), and so is a second sign-off or an
acceptance before the sign-off. Given the deployment's :class:`~service.credentials.signing.Signer`, each is
signed by its signer's key as a Verifiable Credential whose subject is the sign-off's graph, written beside it in
the same write (``{report}/sign-off/credential``, docs/trust.md).
"""

from __future__ import annotations

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.config import Credential
from ..core.errors import Conflict
from ..core.graphs import GraphService
from ..core.roles import DOMAIN_EXPERT, ORGANIZATIONAL_EXPERT
from ..credentials.signing import Signer
from . import rdf
from .model import Report, SignOff
from .records import get_report
from .verify import verify

SIGNERS = {"sign-off": DOMAIN_EXPERT, "acceptance": ORGANIZATIONAL_EXPERT}
"""Who signs what: the domain expert signs a report off, the organizational expert accepts it."""


def _require_order(report: Report, kind: str) -> None:
    if kind == "sign-off" and report.sign_off is not None:
        raise Conflict(f"report {report.number} is already signed off ({report.sign_off.iri})")
    if kind == "acceptance":
        if report.sign_off is None:
            raise Conflict(
                f"report {report.number} is not signed off: the domain expert signs it before the "
                "organizational expert accepts it"
            )
        if report.acceptance is not None:
            raise Conflict(f"report {report.number} is already accepted ({report.acceptance.iri})")


def sign(
    graphs: GraphService,
    evaluation_id: str,
    number: int,
    kind: str,
    comment: str | None,
    credential: Credential | None,
    signer: Signer | None = None,
) -> Report:
    """Record the sign-off (``kind`` ``sign-off``) or acceptance of report ``number``; the report as it now
    stands. 401/403 for the wrong role, 404 for no such report, 409 out of order or when it no longer verifies."""
    agent = require(credential, SIGNERS[kind])
    report = get_report(graphs, evaluation_id, number)
    _require_order(report, kind)
    checked = verify(graphs, evaluation_id, report)
    if not checked.holds:
        differences = checked.differences()
        raise Conflict(
            f"report {number} no longer verifies against the record, so it cannot be signed: "
            + "; ".join(differences[:10])
            + (f"; and {len(differences) - 10} more" if len(differences) > 10 else ""),
            detail=differences,
        )
    entry = graphs.find_graph(report.iri)
    assert entry is not None  # get_report read it
    at = graphs.clock()
    signed = SignOff(f"{report.iri}/{kind}", kind, graphs.agent_iri(agent.agent), at.isoformat(), comment or None)
    # The graphs the verification read must not move before the sign-off lands (409 otherwise, nothing written).
    guards = {s.name: s.digest for s in report.snapshots if "/cases/" not in s.name} | {report.iri: entry.digest}
    if kind == "acceptance" and report.sign_off is not None:
        signed_entry = graphs.find_graph(report.sign_off.iri)
        if signed_entry is not None:
            guards[report.sign_off.iri] = signed_entry.digest
    triples = rdf.sign_off_triples(
        report.iri,
        report.basis.evaluation,
        signed,
        entry.digest,
        report.sign_off.iri if kind == "acceptance" and report.sign_off else None,
    )
    record = graphs.member(GraphKind.EVALUATION, evaluation_id)
    # the sign-off's graph IRI is the sign-off's own: the credential's subject is that node with the graph's triples
    also = (
        [
            signer.credential_edit(
                graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/reports/{number}/{kind}/credential"),
                signed.iri,
                triples,
                signed.agent,
                at,
                record.iri.value,
            )
        ]
        if signer is not None
        else []
    )
    graphs.append(
        record,
        f"reports/{number}",
        triples,
        agent,
        key=kind,
        title=f"report {number} {kind} by {agent.agent}",
        guards=guards,
        also=also,
    )
    return get_report(graphs, evaluation_id, number)
