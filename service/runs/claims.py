"""Claims: how runner processes sharing one run through one store divide its probes.

Before running probes a runner claims them: a claim is a graph of its own per probe, ``{run}/claims/{probe
number}``, naming the runner and when its lease expires. A claim is made on the condition that the probe has no
claim graph yet, or that the one it has, expired, is still the one read (a conditional write: 409 inside,
retried), so two runners never hold the same probe. A probe whose case is recorded needs no claim; a claim
whose lease passed is taken over, so the probes of a runner that died are run by another once its leases
lapse. The lease must outlast the runner's work on a batch (:func:`lease_for`).
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from pyoxigraph import Literal, NamedNode, Triple

from ..core.catalog import GraphKind, now
from ..core.commits import ConcurrentWrite, StaleWrite
from ..core.config import Credential
from ..core.graphs import GraphEdit, GraphService
from ..core.namespaces import EPO, PROV
from ..core.rdf import RDF_TYPE, date_time
from ..core.store import Row
from ..plan.model import Probe
from .model import ExecutionSettings

CLAIM_ATTEMPTS = 8
"""Times a runner reads again and retries when another runner's claim won a probe it wanted."""
CLAIMS_PER_WRITE = 16
"""Claim graphs written by one conditional write (see :func:`claim`)."""


def runner_id() -> str:
    """An identifier for this runner process: host, process id and a random part (a restarted process differs)."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


def lease_for(settings: ExecutionSettings, batch: int, turns: int = 1) -> timedelta:
    """A lease that outlasts the slowest a batch can take: every turn of every case timing out after every retry
    and its backoff, run ``settings.concurrency`` at a time; and a minute more."""
    per_turn = (settings.retries + 1) * settings.timeout_s + settings.retries * settings.max_backoff_s
    rounds = -(-batch // settings.concurrency)
    return timedelta(seconds=60 + rounds * turns * per_turn)


def claim(graphs: GraphService, evaluation_id: str, run_number: int, run: str, pending: Sequence[Probe],
          count: int, claimant: str, lease: timedelta, credential: Credential) -> list[Probe]:
    """Up to ``count`` of ``pending`` (probes without a recorded case, in order) that this runner now holds:
    unclaimed ones, or ones whose claim has expired. Empty when every pending probe is held by a live claim.

    The claims are written :data:`CLAIMS_PER_WRITE` at a time: a conditional write's cost grows with the square
    of the graphs it holds (each graph's operations re-check every graph's condition), and each claim stands
    on its own.
    """
    won: list[Probe] = []
    for _ in range(CLAIM_ATTEMPTS):
        held = {row["probe"].value: row
                for row in graphs.rows("run-claims", {"run": NamedNode(run), "catalog": graphs.catalog_graph})}
        at = now()
        # a write that raced another runner's may have committed some of its claims before it failed: ours
        ours = {p.iri for p in won}
        won += [p for p in pending if p.iri not in ours and p.iri in held and held[p.iri]["claimant"].value == claimant
                and not _expired(held[p.iri]["leaseExpires"].value, at)]
        free = [p for p in pending if p.iri not in held or _expired(held[p.iri]["leaseExpires"].value, at)]
        free = free[:max(0, count - len(won))]
        if not free:
            return won[:count]
        until = at + lease
        try:
            for start in range(0, len(free), CLAIMS_PER_WRITE):
                chunk = free[start:start + CLAIMS_PER_WRITE]
                graphs.apply_edits([_claim_edit(graphs, evaluation_id, run_number, run, probe, claimant, until, held)
                                    for probe in chunk], credential)
                won += chunk
        except (ConcurrentWrite, StaleWrite):
            continue  # another runner claimed one of them meanwhile: read the claims again
        return won
    return won


def _claim_edit(graphs: GraphService, evaluation_id: str, run_number: int, run: str, probe: Probe, claimant: str,
                until: datetime, held: Mapping[str, Row]) -> GraphEdit:
    """The claim graph on ``probe``, written only if it is still absent, or still the expired claim read."""
    ref = graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/runs/{run_number}/claims/{probe.number}")
    expired = held[probe.iri]["digest"].value if probe.iri in held else None
    # only an expired claim has content to replace: emptying a new graph would cost the write an operation
    return GraphEdit(ref, insert=_claim_triples(ref.iri.value, run, probe.iri, claimant, until),
                     replace=expired is not None, title=f"claim on probe {probe.number} in run {run_number}",
                     batch_of=run, expected_digest=expired)


def _expired(lexical: str, at: datetime) -> bool:
    return datetime.fromisoformat(lexical) <= at


def _claim_triples(claim_iri: str, run: str, probe: str, claimant: str, until: datetime) -> list[Triple]:
    node = NamedNode(claim_iri)
    return [Triple(node, RDF_TYPE, NamedNode(EPO + "RunClaim")),
            Triple(node, NamedNode(EPO + "claimedIn"), NamedNode(run)),
            Triple(node, NamedNode(EPO + "claimsProbe"), NamedNode(probe)),
            Triple(node, NamedNode(EPO + "claimant"), Literal(claimant)),
            Triple(node, NamedNode(EPO + "leaseExpires"), date_time(until)),
            Triple(node, NamedNode(PROV + "generatedAtTime"), date_time(now()))]
