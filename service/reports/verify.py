"""Recompute a report from the record (``GET {report}/verify``): every figure by the same metric queries, counting
what is dated no later than the report's date; every graph it was computed from digested again from the graph's
current content (not the catalog's note of it, so a change written behind the service shows); every query file's
digest; what was tested against the scope's version boundary (the run's target release, and whether the run
was recorded as outside it); the run's pass-rate tallies, which ``/metrics`` serves, against a recount from every determination;
and each credential of the report's presentation, rebuilt from the record and its proof checked (a triple changed
behind the service's back shows as the credential that no longer verifies, its signer and its person named). Each
is listed as holding or differing, stored (tallied) against recomputed.
"""

from __future__ import annotations

import json
from datetime import datetime

from pyoxigraph import NamedNode

from ..core import queries
from ..core.catalog import GraphKind
from ..core.digest import graph_digest
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..credentials.presentations import check, report_presentation
from ..judgments.tallies import tally_checks
from ..runs.records import RunView, run_view
from .model import Check, Report, Verification
from .records import compute_figures


def _graph_digest(graphs: GraphService, iri: str) -> str | None:
    """The digest of graph ``iri``'s content now (``None``: the graph is gone from the catalog)."""
    entry = graphs.find_graph(iri)
    if entry is None:
        return None
    return graph_digest(graphs.triples(graphs.member(GraphKind.EVALUATION, entry.identifier)))


def _query_digest(name: str) -> str | None:
    try:
        return queries.digest(name)
    except LookupError:
        return None


def _stated_target(report: Report) -> str:
    b = report.basis
    return f"{b.tested_release}; " + (
        f"outside the boundary: {b.outside_boundary}" if b.outside_boundary is not None else "inside the boundary"
    )


def _target(graphs: GraphService, run: RunView) -> str:
    """The run's target release and its standing against the scope's version boundary, as a report states them."""
    outside = graphs.rows("run-boundary", {"run": NamedNode(run.iri)})
    release = json.loads(run.configuration)["model_release"]
    return (
        f"{release}; outside the boundary: {outside[0]['reason'].value}"
        if outside
        else f"{release}; inside the boundary"
    )


def _credentials(graphs: GraphService, report: str) -> tuple[Check, ...]:
    """Each credential that bears on the report, ``verifies`` or what is wrong with it."""
    checked = map(check, report_presentation(graphs, report)["verifiableCredential"])
    return tuple(Check(c.credential, "verifies", "; ".join(c.problems) or "verifies") for c in checked)


def verify(graphs: GraphService, evaluation_id: str, report: Report) -> Verification:
    """``report`` checked against the record now (see the module docstring)."""
    run = run_view(graphs, evaluation_id, minted_number(report.basis.run))
    _, figures = compute_figures(
        graphs, evaluation_id, run, datetime.fromisoformat(report.as_of), report.basis.envelope
    )
    stored, now = report.figures.flat(), figures.flat()
    return Verification(
        report=report.iri,
        figures=(
            *(Check(name, stored.get(name, ""), now.get(name)) for name in sorted(stored.keys() | now.keys())),
            Check("target", _stated_target(report), _target(graphs, run)),
        ),
        graphs=tuple(Check(s.name, s.digest, _graph_digest(graphs, s.name)) for s in report.snapshots),
        queries=tuple(Check(q.name, q.digest, _query_digest(q.name)) for q in report.queries),
        tallies=tuple(
            Check(criterion, kept, counted)
            for criterion, kept, counted in tally_checks(graphs, report.basis.envelope, run.iri)
        ),
        credentials=_credentials(graphs, report.iri),
    )
