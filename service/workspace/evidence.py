"""The evidence a domain expert reads to attest one criterion for one run (docs/workspace.md, "Evidence"): the
criterion's statement and expected result, the grading reference (what the DSO and the knowledge graphs say about
what it bears on, ``queries/workspace-criterion-reference.rq``), the run's conversations that bear on it (a page
of them, with every verdict on the criterion there), how the determinations fall, the outcome the aggregation rule
proposes over them, the attestations so far with their supersessions
(:func:`service.judgments.attestations.attestations`), and each automated judge version's agreement with people
(:class:`service.judgments.agreement.LatestWords`, kept by :mod:`.judged`). What a page shows is kept by the
record's state (:func:`criterion_evidence`).
"""

from __future__ import annotations

from pyoxigraph import NamedNode

from ..core.errors import NotFound
from ..core.graphs import GraphService
from ..core.store import Node
from ..envelope import get_evaluation, iris_for
from ..judgments.agreement import envelope_threshold
from ..judgments.attestations import attestations
from ..reports.kept import kept
from ..runs.records import run_view
from ..scenarios.records import check_page
from .cases import run_cases
from .criteria import Tally, latest_run
from .judged import judged
from .model import Conversation, CriterionEvidence, ReferenceFact
from .texts import conversations, criterion_texts, verdicts

PAGE_LANGUAGE = "en"
"""The language the workspace's pages are written in: a reference label in it is shown before others."""


def criterion_evidence(
    graphs: GraphService,
    evaluation_id: str,
    criterion: str,
    run_number: int | None = None,
    limit: int = 10,
    offset: int = 0,
) -> CriterionEvidence:
    """The evidence on criterion ``criterion`` (its identifier, as ``c04``) in run ``run_number`` (the latest run when
    ``None``); ``limit`` conversations from ``offset``, by probe number. 404 for no such evaluation, run, or
    criterion among those the run's probes bear on; 400 for a page out of bounds.

    Kept by the record's state (:func:`service.reports.kept.kept`) and the catalog digests of the DSO and knowledge
    graphs the grading reference is read from (outside the record): reading it costs about 100 ms at 100,000
    determinations, the record's state 25 ms."""
    check_page(limit, offset)
    iris = iris_for(graphs, evaluation_id)
    found = graphs.find_graphs(_sources(graphs, evaluation_id))
    sources = tuple(sorted((iri, entry.digest) for iri, entry in found.items()))
    return kept(
        graphs,
        iris.evaluation,
        ("evidence", criterion, run_number, limit, offset, sources),
        lambda: _read(graphs, evaluation_id, criterion, run_number, limit, offset),
    )


def _sources(graphs: GraphService, evaluation_id: str) -> list[str]:
    """The graphs the grading reference is read from: the scope's DSO and knowledge graphs."""
    iris, scope = iris_for(graphs, evaluation_id), get_evaluation(graphs, evaluation_id).scope
    return [iris.dso(scope.dso), *(iris.kg(kg) for kg in scope.knowledge_graphs)]


def _read(
    graphs: GraphService, evaluation_id: str, criterion: str, run_number: int | None, limit: int, offset: int
) -> CriterionEvidence:
    run = run_view(graphs, evaluation_id, run_number) if run_number is not None else latest_run(graphs, evaluation_id)
    cases = run_cases(graphs, run)
    texts = criterion_texts(graphs, evaluation_id, {c for case in cases for c in case.criteria})
    text = next((t for t in texts.values() if t.identifier == criterion), None)
    if text is None:
        raise NotFound(
            f"no probe of run {run.number} of evaluation {evaluation_id!r} bears on a criterion {criterion!r}"
        )
    traces = {case.case: case.trace for case in cases if case.trace and text.iri in case.criteria}
    bearing = [case for case in cases if case.case in traces]
    page = bearing[offset : offset + limit]
    read = conversations(graphs, [case.case for case in page])
    threshold = envelope_threshold(graphs, evaluation_id)
    with judged(graphs, evaluation_id) as index:
        tally = Tally(text.iri, index.trusted(threshold))
        for trace in traces.values():
            tally.add(index.pair(text.iri, trace))
        shown_words = {case.case: index.pair(text.iri, traces[case.case]).determinations for case in page}
        agreement = tuple(index.agreements(threshold, text.iri))
    said_on = verdicts(graphs, [d for words in shown_words.values() for d in words])
    shown = tuple(
        Conversation(
            case.number,
            case.case,
            case.language,
            read[case.case][2],
            tuple(v for v in said_on if v.determination in shown_words[case.case]),
        )
        for case in page
        if case.case in read
    )
    return CriterionEvidence(
        evaluation_id,
        run.number,
        text,
        _reference(graphs, evaluation_id, text.iri),
        shown,
        len(bearing),
        tally.falls,
        tuple(attestations(graphs, evaluation_id, criterion=text.iri, run=run.iri)),
        agreement,
        tally.proposed,
    )


def _reference(graphs: GraphService, evaluation_id: str, criterion: str) -> tuple[ReferenceFact, ...]:
    """What the scope's DSO and knowledge graphs state about each concept the criterion bears on."""
    evaluation, node = NamedNode(iris_for(graphs, evaluation_id).evaluation), NamedNode(criterion)
    rows = graphs.rows_over(
        "workspace-criterion-reference",
        ("evaluation", "criterion", "graph"),
        [(evaluation, node, NamedNode(source)) for source in _sources(graphs, evaluation_id)],
    )
    facts: dict[tuple[str, str, str, str], tuple[Node | None, Node | None]] = {}
    for row in rows:
        key = (row["concept"].value, row["graph"].value, row["property"].value, row["value"].value)
        kept = facts.get(key, (None, None))
        facts[key] = (_better(kept[0], row.get("propertyLabel")), _better(kept[1], row.get("valueLabel")))
    return tuple(
        ReferenceFact(concept, graph, prop, _value(labels[0]), value, _value(labels[1]))
        for (concept, graph, prop, value), labels in facts.items()
    )


def _better(kept: Node | None, found: Node | None) -> Node | None:
    """The label to show: one in the pages' language, else an untagged one, else the first found."""
    if found is None or kept is None:
        return kept or found
    return found if _rank(found) < _rank(kept) else kept


def _value(label: Node | None) -> str | None:
    return label.value if label is not None else None


def _rank(label: Node) -> int:
    language = getattr(label, "language", None)
    return 0 if language == PAGE_LANGUAGE else 1 if not language else 2
