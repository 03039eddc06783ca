"""Per-run pass-rate tallies: the counts ``queries/pass-rate-counts.rq`` defines (per criterion, the cases passed k,
the cases judged n and the cases exercising it), kept in the record so that reading a run's pass rates costs
O(criteria) instead of O(determinations): at 1,000,000 determinations the query takes about a minute, the tallies
milliseconds (docs/performance.md).

A run's tallies are one graph, ``{run}/tallies``::

    <{run}/tallies> a epo:PassRateTallies ; epo:tallyOf <run> ; epo:casesTallied 63125 .
    <{run}/tallies/{key}> a epo:PassRateTally ; epo:forRun <run> ; epo:forCriterion <criterion> ;
        epo:casesPassed 40 ; epo:casesJudged 61 ; epo:casesExercising 64 .

Every judgments batch rewrites it in the same conditional write as the batch (:func:`batch_tallies`), on the
condition that it is still the graph the batch's counts were read from, so two batches never both add to the same
count. The change is the batch's own: for each (case, criterion) it determines on, whether the case counts in n and
k before and after (``queries/case-outcome-changes.rq``, the query's own per-case rule). The rule rests on three
facts about a case and a criterion, true for good once true (judged: a passed, failed or cantTell determination;
decided: a passed or failed one; failed: a failed one), which the record states once each: the batch that makes
one true states it (``<case> epo:failedOn <criterion>``), so "before" is three lookups however many determinations
the case already has, and a batch costs the same whatever the record's size.

A run's first batch counts its tallies and facts from the record first (:func:`recount_tallies`, which also serves a
run judged before tallies were kept, or loaded in bulk; the facts it finds go in ``{run}/outcome-facts``). The
tallies count the cases recorded when last counted (``epo:casesTallied``); cases are only ever added, so a batch on
a run with more cases recounts the cases (k and n already count every batch), and a read recounts everything
instead of reading them (:func:`pass_rate_rows`). A report's figures always recount, and its verification checks
the tallies against a recount (:func:`tally_checks`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from pyoxigraph import NamedNode, Triple

from ..core.catalog import CatalogEntry, GraphKind
from ..core.config import Credential
from ..core.graph_edits import GraphEdit, GraphRef
from ..core.graphs import GraphService
from ..core.namespaces import EPO
from ..core.rdf import RDF_TYPE, integer
from ..core.store import Row, Term
from ..core.store.base import iri_term, subject_term
from ..runs.records import RunView

_PAIRS_PER_REQUEST = 125
"""(case, criterion) pairs asked about in one request: at most four outcomes each, 500 rows of VALUES."""


@dataclass(frozen=True)
class Tally:
    """One criterion's counts in one run, as ``pass-rate-counts.rq`` defines them."""

    criterion: str
    passed: int
    judged: int
    cases: int


def tallies_ref(graphs: GraphService, evaluation_id: str, run_number: int) -> GraphRef:
    """The run's tallies graph, ``{run}/tallies``."""
    return graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/runs/{run_number}/tallies")


def facts_ref(graphs: GraphService, evaluation_id: str, run_number: int) -> GraphRef:
    """The facts a recount of the run's tallies found (``{run}/outcome-facts``, see :func:`recount_tallies`)."""
    return graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/runs/{run_number}/outcome-facts")


def batch_tallies(
    graphs: GraphService, evaluation: str, evaluation_id: str, run: RunView, batch: Sequence[tuple[str, str, str]]
) -> tuple[GraphEdit, list[Triple]] | None:
    """The run's tallies with ``batch`` counted ((case, criterion, outcome) per determination): a replacement of
    ``{run}/tallies`` that holds only while the graph is the one read here (else the write is refused and read
    again), and the facts the batch makes true, which the batch states. ``None`` when the run has no tallies yet
    (:func:`recount_tallies` first)."""
    ref = tallies_ref(graphs, evaluation_id, run.number)
    entry = graphs.find(ref)  # read first: a batch written after this read changes the digest the write expects
    if entry is None:
        return None
    state = graphs.rows("run-tally-state", {"run": NamedNode(run.iri)})[0]
    recorded = int(state["recorded"].value)
    counts = _tallies(graphs.rows("pass-rate-tallies", _bindings(graphs, evaluation, run)))
    if not _current(state):
        # cases recorded since the tallies last counted them: k and n already count every batch on them
        counts = {
            criterion: replace(counts.get(criterion, Tally(criterion, 0, 0, 0)), cases=int(row["cases"].value))
            for row in graphs.rows("criterion-case-counts", {"run": NamedNode(run.iri)})
            for criterion in [row["criterion"].value]
        }
    changes = _changes(graphs, batch)
    edit = GraphEdit(
        ref,
        insert=_triples(ref.iri.value, run.iri, recorded, _with_changes(counts, changes).values()),
        replace=True,
        expected_digest=entry.digest,
        title=f"pass-rate tallies of run {run.number}",
    )
    return edit, _new_facts(changes)


def pass_rate_rows(graphs: GraphService, bindings: Mapping[str, Term], evaluation: str, run: str | None) -> list[Row]:
    """The rows of ``pass-rate-counts.rq`` for ``bindings`` (no ``asOf``) over run ``run`` or every run of the
    evaluation: from the tallies of each run whose tallies are current, recounted by the query for the others;
    ordered by criterion and run as the query orders them."""
    runs = (
        [run]
        if run is not None
        else [row["run"].value for row in graphs.rows("evaluation-runs", {"evaluation": NamedNode(evaluation)})]
    )
    states = {iri: graphs.rows("run-tally-state", {"run": NamedNode(iri)})[0] for iri in runs}
    current = {iri for iri, state in states.items() if _current(state)}
    rows = [row for row in graphs.rows("pass-rate-tallies", bindings) if row["run"].value in current] if current else []
    for iri, state in states.items():
        if iri not in current and state["recorded"].value != "0":
            rows += graphs.rows("pass-rate-counts", {**bindings, "run": NamedNode(iri)})
    return sorted(rows, key=lambda row: (row["criterion"].value, row["run"].value))


def tally_checks(graphs: GraphService, envelope: str, run: str) -> list[tuple[str, str, str | None]]:
    """Run ``run``'s tallies, where current (what ``/metrics`` serves), against a recount from every determination
    (``pass-rate-counts.rq``), over ``envelope``'s applicable criteria: (criterion, tallied, recounted) each as
    "k of n, c cases", so that a tally changed behind the service shows. Empty when the tallies are not current
    (they are not read then)."""
    if not _current(graphs.rows("run-tally-state", {"run": NamedNode(run)})[0]):
        return []
    bindings: dict[str, Term] = {"envelope": NamedNode(envelope), "run": NamedNode(run)}
    tallied = _counts(graphs.rows("pass-rate-tallies", bindings))
    recounted = _counts(graphs.rows("pass-rate-counts", bindings))
    return [
        (criterion, tallied.get(criterion, "none"), recounted.get(criterion, "none"))
        for criterion in sorted(tallied.keys() | recounted.keys())
    ]


def _current(state: Row) -> bool:
    """Whether a run's tallies (a row of ``run-tally-state.rq``) counted every case the run has."""
    return "tallied" in state and state["tallied"].value == state["recorded"].value


def _counts(rows: Sequence[Row]) -> dict[str, str]:
    return {row["criterion"].value: f"{row['k'].value} of {row['n'].value}, {row['cases'].value} cases" for row in rows}


def _changes(graphs: GraphService, batch: Sequence[tuple[str, str, str]]) -> list[Row]:
    """``case-outcome-changes.rq``'s rows for ``batch``: one per (case, criterion), each pair's outcomes asked in the
    same request (split across two, each would count the pair's change once)."""
    pairs: dict[tuple[str, str], set[str]] = {}
    for case, criterion, outcome in batch:
        pairs.setdefault((case, criterion), set()).add(outcome)
    items = sorted(pairs.items())
    out: list[Row] = []
    for start in range(0, len(items), _PAIRS_PER_REQUEST):
        values = [
            (NamedNode(case), NamedNode(criterion), NamedNode(outcome))
            for (case, criterion), outcomes in items[start : start + _PAIRS_PER_REQUEST]
            for outcome in sorted(outcomes)
        ]
        out += graphs.rows_over("case-outcome-changes", ("case", "criterion", "added"), values, chunk=len(values))
    return out


def _bindings(graphs: GraphService, evaluation: str, run: RunView) -> dict[str, Term]:
    """The run and the envelope version its plan was made on, whose in-scope criteria its probes exercise."""
    plan = graphs.rows("plans", {"evaluation": NamedNode(evaluation), "plan": NamedNode(run.plan)})[0]
    return {"envelope": plan["envelope"], "run": NamedNode(run.iri)}


def _digest(entry: CatalogEntry | None) -> str | None:
    return entry.digest if entry is not None else None


def _tallies(rows: Sequence[Row]) -> dict[str, Tally]:
    return {
        row["criterion"].value: Tally(
            row["criterion"].value, int(row["k"].value), int(row["n"].value), int(row["cases"].value)
        )
        for row in rows
    }


def _with_changes(counts: dict[str, Tally], changes: Sequence[Row]) -> dict[str, Tally]:
    """``counts`` moved by each (case, criterion)'s change (after - before) that ``case-outcome-changes.rq`` gives:
    n counts the cases judged, k those decided and not failed."""
    out = dict(counts)
    for row in changes:
        criterion = row["criterion"].value
        tally = out.get(criterion, Tally(criterion, 0, 0, 0))
        before, after = (_flags(row, "Before"), _flags(row, "After"))
        out[criterion] = replace(
            tally,
            judged=tally.judged + after[0] - before[0],
            passed=tally.passed + (after[1] - after[2]) - (before[1] - before[2]),
        )
    return out


def _flags(row: Row, when: str) -> tuple[int, int, int]:
    """(judged, decided, failed), each 0 or 1, before or after the batch."""
    return int(row[f"judged{when}"].value), int(row[f"decided{when}"].value), int(row[f"failed{when}"].value)


def _new_facts(changes: Sequence[Row]) -> list[Triple]:
    """The facts the batch makes true (after and not before), which it states."""
    return [
        Triple(subject_term(row["case"]), NamedNode(EPO + f"{fact}On"), row["criterion"])
        for row in changes
        for fact in ("judged", "decided", "failed")
        if row[f"{fact}After"].value == "1" and row[f"{fact}Before"].value == "0"
    ]


def _triples(graph: str, run: str, recorded: int, tallies: Iterable[Tally]) -> list[Triple]:
    node, run_node = NamedNode(graph), NamedNode(run)
    out = [
        Triple(node, RDF_TYPE, NamedNode(EPO + "PassRateTallies")),
        Triple(node, NamedNode(EPO + "tallyOf"), run_node),
        Triple(node, NamedNode(EPO + "casesTallied"), integer(recorded)),
    ]
    for tally in sorted(tallies, key=lambda t: t.criterion):
        key = hashlib.sha256(tally.criterion.encode("utf-8")).hexdigest()[:16]
        subject = NamedNode(f"{graph}/{key}")
        out += [
            Triple(subject, RDF_TYPE, NamedNode(EPO + "PassRateTally")),
            Triple(subject, NamedNode(EPO + "forRun"), run_node),
            Triple(subject, NamedNode(EPO + "forCriterion"), NamedNode(tally.criterion)),
            Triple(subject, NamedNode(EPO + "casesPassed"), integer(tally.passed)),
            Triple(subject, NamedNode(EPO + "casesJudged"), integer(tally.judged)),
            Triple(subject, NamedNode(EPO + "casesExercising"), integer(tally.cases)),
        ]
    return out


def recount_tallies(graphs: GraphService, evaluation_id: str, run: RunView, agent: Credential) -> None:
    """Count run ``run``'s tallies afresh from its determinations (``pass-rate-counts.rq``) and state the facts they
    rest on (``case-outcome-facts.rq``, in ``{run}/outcome-facts``), in one write that holds only while both graphs
    are as read: what the run's first judgments batch does, and what a run judged before tallies were kept, or
    loaded in bulk, needs."""
    evaluation = graphs.member(GraphKind.EVALUATION, evaluation_id).iri.value
    tallies, facts = tallies_ref(graphs, evaluation_id, run.number), facts_ref(graphs, evaluation_id, run.number)
    entries = {ref.iri.value: graphs.find(ref) for ref in (tallies, facts)}  # read first, as batch_tallies does
    recorded = int(graphs.rows("run-tally-state", {"run": NamedNode(run.iri)})[0]["recorded"].value)
    counts = _tallies(graphs.rows("pass-rate-counts", _bindings(graphs, evaluation, run)))
    stated = [
        Triple(subject_term(row["case"]), iri_term(row["fact"]), row["criterion"])
        for row in graphs.rows("case-outcome-facts", {"run": NamedNode(run.iri)})
    ]
    graphs.apply_edits(
        [
            GraphEdit(
                tallies,
                insert=_triples(tallies.iri.value, run.iri, recorded, counts.values()),
                replace=True,
                expected_digest=_digest(entries[tallies.iri.value]),
                title=f"pass-rate tallies of run {run.number}",
            ),
            GraphEdit(
                facts,
                insert=stated,
                replace=True,
                expected_digest=_digest(entries[facts.iri.value]),
                title=f"pass-rate facts of run {run.number}, counted from its determinations",
            ),
        ],
        agent,
    )
