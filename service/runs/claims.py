"""Claims: how runner processes sharing one run through one store divide its probes.

Before running probes a runner claims them: a claim is a graph of its own per probe, ``{run}/claims/{probe
number}``, naming the runner and when its lease expires. A claim is made on the condition that the probe has no
claim graph yet, or that the one it has, expired, is still the one read, and that its case graph is still absent
(a conditional write, :mod:`..core.commits`, which two runners writing at the same moment never both pass: 409
inside, read again and retried), so two runners never hold the same probe and a recorded probe is never claimed
again. A batch of claims is one write. A claim whose lease passed is taken over, so the probes of a runner that
died are run by another once its leases lapse; a runner that stops on a failure hands its claims back at once
(:func:`release`). The lease must outlast the runner's work on a batch (:func:`lease_for`).
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pyoxigraph import Literal, NamedNode, Triple

from ..core.catalog import GraphKind, now
from ..core.commits import ConcurrentWrite, StaleWrite
from ..core.config import Credential
from ..core.graph_edits import GraphEdit
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.namespaces import EPO, PROV
from ..core.rdf import RDF_TYPE, date_time
from ..core.store import Row
from ..plan.model import Probe
from .model import ExecutionSettings
from .records import case_ref, recorded_probes

CLAIM_ATTEMPTS = 8
"""Times a runner reads the claims again and retries when another runner's claim won a probe it wanted."""


def runner_id() -> str:
    """An identifier for this runner process: host, process id and a random part (a restarted process differs)."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


def lease_for(settings: ExecutionSettings, batch: int, turns: int = 1) -> timedelta:
    """A lease that outlasts the slowest a batch can take: every turn of every case timing out after every retry
    and its backoff, run ``settings.concurrency`` at a time; and a minute more."""
    per_turn = (settings.retries + 1) * settings.timeout_s + settings.retries * settings.max_backoff_s
    rounds = -(-batch // settings.concurrency)
    return timedelta(seconds=60 + rounds * turns * per_turn)


@dataclass(frozen=True)
class Claimed:
    """What :func:`claim` did: the probes this runner now holds, and those it found recorded meanwhile (by another
    runner: they need no claim, and a caller that offers them again only makes its next claim fail)."""

    won: tuple[Probe, ...]
    recorded: frozenset[str]


def claim(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    run: str,
    pending: Sequence[Probe],
    count: int,
    claimant: str,
    lease: timedelta,
    credential: Credential,
) -> Claimed:
    """Up to ``count`` of ``pending`` (probes without a recorded case, in order) that this runner now holds:
    unclaimed ones, or ones whose claim has expired. None when every pending probe is held by a live claim.

    The claims are one conditional write (all of them or none), which also requires each probe's case graph to
    be absent still, so a probe recorded by another runner (whose claim may have lapsed since) is never claimed
    and run again. The first write takes the probes for unclaimed; the run's claims and recorded probes are read
    (``queries/run-claims.rq``, ``run-recorded-probes.rq``) only when a write finds some claimed or recorded, so
    a runner alone on its run never reads them.
    """
    held: Mapping[str, Row] = {}
    recorded: frozenset[str] = frozenset()
    busy: set[str] = set()  # probes whose claim or case graph another writer was writing at that moment
    for _ in range(CLAIM_ATTEMPTS):
        at = now()
        free = [
            p
            for p in pending
            if p.iri not in recorded
            and p.iri not in busy
            and (p.iri not in held or _expired(held[p.iri]["leaseExpires"].value, at))
        ][:count]
        if not free:
            break
        until = at + lease
        edits = {p.iri: _claim_edit(graphs, evaluation_id, run_number, run, p, claimant, until, held) for p in free}
        cases = {p.iri: case_ref(graphs, evaluation_id, run_number, p.number).iri.value for p in free}
        try:
            graphs.apply_edits(list(edits.values()), credential, guards=dict.fromkeys(cases.values()))
        except (ConcurrentWrite, StaleWrite) as conflict:
            # another runner claimed or recorded some of them meanwhile (or before): read the run's claims and cases
            refused = set(conflict.graphs)
            if isinstance(conflict, ConcurrentWrite):
                busy.update(p for p in edits if edits[p].ref.iri.value in refused or cases[p] in refused)
            held = {
                row["probe"].value: row
                for row in graphs.rows("run-claims", {"run": NamedNode(run), "catalog": graphs.catalog_graph})
            }
            recorded = frozenset(recorded_probes(graphs, run))
            continue
        return Claimed(tuple(free), recorded)
    return Claimed((), recorded)


def release(
    graphs: GraphService, evaluation_id: str, run_number: int, run: str, claimant: str, credential: Credential
) -> int:
    """Hand back ``claimant``'s live claims on the run's probes that have no case: a runner that stops on a failure
    ends their leases now, so that a continuation runs those probes at once instead of waiting for the leases to
    pass. Each claim is rewritten as expired on the condition that it is still the one read; how many were."""
    at = now()
    recorded = recorded_probes(graphs, run)
    mine = [
        row
        for row in graphs.rows("run-claims", {"run": NamedNode(run), "catalog": graphs.catalog_graph})
        if row["claimant"].value == claimant
        and row["probe"].value not in recorded
        and not _expired(row["leaseExpires"].value, at)
    ]
    edits = []
    for row in mine:
        number = minted_number(row["claim"].value)
        ref = graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/runs/{run_number}/claims/{number}")
        edits.append(
            GraphEdit(
                ref,
                insert=_claim_triples(ref.iri.value, run, row["probe"].value, claimant, at),
                replace=True,
                expected_digest=row["digest"].value,
                batch_of=run,
                title=f"claim on probe {number} in run {run_number}, handed back",
            )
        )
    if edits:
        graphs.apply_edits(edits, credential)
    return len(edits)


def _claim_edit(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    run: str,
    probe: Probe,
    claimant: str,
    until: datetime,
    held: Mapping[str, Row],
) -> GraphEdit:
    """The claim graph on ``probe``, written only if it is still absent, or still the expired claim read."""
    ref = graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/runs/{run_number}/claims/{probe.number}")
    expired = held[probe.iri]["digest"].value if probe.iri in held else None
    # only an expired claim has content to replace: emptying a new graph would cost the write an operation
    return GraphEdit(
        ref,
        insert=_claim_triples(ref.iri.value, run, probe.iri, claimant, until),
        replace=expired is not None,
        title=f"claim on probe {probe.number} in run {run_number}",
        batch_of=run,
        expected_digest=expired,
    )


def _expired(lexical: str, at: datetime) -> bool:
    return datetime.fromisoformat(lexical) <= at


_RUN_CLAIM, _CLAIMED_IN, _CLAIMS_PROBE, _CLAIMANT, _LEASE_EXPIRES = (
    NamedNode(EPO + name) for name in ("RunClaim", "claimedIn", "claimsProbe", "claimant", "leaseExpires")
)
_GENERATED_AT = NamedNode(PROV + "generatedAtTime")


def _claim_triples(claim_iri: str, run: str, probe: str, claimant: str, until: datetime) -> list[Triple]:
    node = NamedNode(claim_iri)
    return [
        Triple(node, RDF_TYPE, _RUN_CLAIM),
        Triple(node, _CLAIMED_IN, NamedNode(run)),
        Triple(node, _CLAIMS_PROBE, NamedNode(probe)),
        Triple(node, _CLAIMANT, Literal(claimant)),
        Triple(node, _LEASE_EXPIRES, date_time(until)),
        Triple(node, _GENERATED_AT, date_time(now())),
    ]
