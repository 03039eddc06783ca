"""The annotator's side of the workspace: the queue of cases waiting for them, and one case as they see it,
blind to others' verdicts until they have given their own (docs/workspace.md, "The annotator queue and blindness").

A case waits for an annotator on a criterion it bears on when the annotator has not determined it there and either
the plan assigned the probe to them (``epo:assignedTo``), or the plan assigns no probe and the case needs a person:
no person determined it and no automated judge version trusted alone did (the semantics of
``cases-needing-people`` in docs/judgments.md, read from :mod:`.judged`). A case whose text is in a language the
annotator does not read never waits for them (:func:`.cases.reads`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errors import BadRequest, NotFound
from ..core.graphs import GraphService
from ..judgments.agreement import envelope_threshold
from ..runs.records import RunView, case_ref, list_runs, run_view
from .cases import RunCase, reads, run_cases
from .judged import Judged, judged
from .model import CaseView, CriterionOnCase, Queue, QueueItem
from .texts import conversations, criterion_texts, verdicts

MAX_QUEUE = 200
"""The most queue items one call lists."""


def annotate_path(evaluation_id: str, run: int, probe: int | None = None) -> str:
    """The annotation page: the queue on one run, or one of its cases."""
    base = f"/evaluations/{evaluation_id}/workspace/annotate"
    return f"{base}/{run}/{probe}" if probe is not None else f"{base}?run={run}"


@dataclass(frozen=True)
class _Owed:
    """What one case owes one annotator: the criteria still to determine, and the pairs in scope and done."""

    case: RunCase
    waiting: tuple[str, ...]
    assigned: bool
    in_scope: int
    done: int


def _owed(
    index: Judged,
    trusted: frozenset[tuple[str, str, str]],
    cases: Sequence[RunCase],
    agent_iri: str,
    languages: frozenset[str] | None,
) -> list[_Owed]:
    """Per answered case of one run in a language the annotator reads, what it owes them (module docstring)."""
    assigning = any(case.assigned_to for case in cases)
    out = []
    for case in cases:
        mine = case.assigned_to == agent_iri
        if case.trace is None or not reads(languages, case.language) or (assigning and not mine):
            continue
        done = tuple(c for c in case.criteria if agent_iri in index.pair(c, case.trace).people)
        waiting = tuple(
            c for c in case.criteria if c not in done and (mine or index.needs_person(c, case.trace, trusted))
        )
        out.append(_Owed(case, waiting, mine, len(done) + len(waiting), len(done)))
    return out


def owed_by_run(
    graphs: GraphService, evaluation_id: str, runs: Sequence[RunView], agent: str, languages: frozenset[str] | None
) -> dict[int, list[_Owed]]:
    """Per run, what each of its cases owes the annotator ``agent`` (their agent name)."""
    threshold = envelope_threshold(graphs, evaluation_id)
    agent_iri = graphs.agent_iri(agent)
    with judged(graphs, evaluation_id) as index:
        trusted = index.trusted(threshold)
        return {run.number: _owed(index, trusted, run_cases(graphs, run), agent_iri, languages) for run in runs}


def waiting_on(
    graphs: GraphService, evaluation_id: str, run_number: int, probe: int, agent: str, languages: frozenset[str] | None
) -> tuple[str, ...]:
    """The criteria (IRIs) of case ``probe`` of run ``run_number`` still waiting for annotator ``agent``: empty once
    they determined them all, or when the case is not in their queue (module docstring)."""
    owed = owed_by_run(graphs, evaluation_id, [run_view(graphs, evaluation_id, run_number)], agent, languages)
    return next((o.waiting for o in owed[run_number] if o.case.number == probe), ())


def annotation_queue(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int | None,
    agent: str,
    languages: frozenset[str] | None,
    expertise: frozenset[str],
    limit: int = 20,
) -> Queue:
    """The cases waiting for annotator ``agent`` (their agent name) in run ``run_number`` (every run when ``None``,
    the latest first), in order: assigned to them first, then those whose criteria match their ``expertise`` (DSO
    concept, dimension or category IRIs), then by run (latest first) and probe number; at most ``limit`` listed.
    ``languages``: the BCP 47 tags they read (``None``: not declared). 404 for no such evaluation or run."""
    if not 0 <= limit <= MAX_QUEUE:
        raise BadRequest(f"limit must be 0..{MAX_QUEUE}, not {limit}")
    runs = [run_view(graphs, evaluation_id, run_number)] if run_number is not None else list_runs(graphs, evaluation_id)
    owed = owed_by_run(graphs, evaluation_id, runs, agent, languages)
    waiting = [(number, o) for number, items in owed.items() for o in items if o.waiting]
    texts = criterion_texts(graphs, evaluation_id, {c for _, o in waiting for c in o.waiting})
    items = [
        QueueItem(
            number,
            o.case.number,
            o.case.probe,
            o.case.case,
            o.case.language,
            o.waiting,
            o.assigned,
            any(texts[c].topics & expertise for c in o.waiting if c in texts),
            annotate_path(evaluation_id, number, o.case.number),
        )
        for number, o in waiting
    ]
    items.sort(key=lambda i: (not i.assigned, not i.matches_expertise, -i.run, i.probe))
    return Queue(
        tuple(items[:limit]),
        len(items),
        sum(o.done for items in owed.values() for o in items),
        sum(o.in_scope for items in owed.values() for o in items),
    )


def case_view(graphs: GraphService, evaluation_id: str, run_number: int, probe: int, agent: str) -> CaseView:
    """Case ``probe`` (its number in the plan) of run ``run_number`` as annotator ``agent`` sees it: the
    conversation, and per criterion it bears on the agent's own verdicts, and everyone else's only once the agent
    has determined that criterion there (blind by default); each determiner's latest verdict on each reply (an
    earlier one it replaced stays in the record, GET …/determinations). 404 for no such run or case."""
    run = run_view(graphs, evaluation_id, run_number)
    case = case_ref(graphs, evaluation_id, run_number, probe).iri.value
    found = conversations(graphs, [case])
    listed = next((c for c in run_cases(graphs, run) if c.case == case), None)
    if case not in found or listed is None:
        raise NotFound(f"run {run_number} of evaluation {evaluation_id!r} has no case of probe {probe}")
    probe_iri, trace, turns = found[case]
    agent_iri = graphs.agent_iri(agent)
    with judged(graphs, evaluation_id) as index:
        words = {c: index.pair(c, trace).determinations if trace else () for c in listed.criteria}
    said = verdicts(graphs, [d for found_ in words.values() for d in found_])
    texts = criterion_texts(graphs, evaluation_id, listed.criteria)
    criteria = []
    for criterion in listed.criteria:
        on = [v for v in said if v.criterion == criterion]
        own = tuple(v for v in on if v.judge == agent_iri)
        criteria.append(
            CriterionOnCase(texts[criterion], own, tuple(v for v in on if v.judge != agent_iri) if own else None)
        )
    return CaseView(evaluation_id, run_number, probe, probe_iri, case, trace, listed.language, turns, tuple(criteria))
