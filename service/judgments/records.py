"""Step 5 in the record: determinations on a run's responses, appended in batches, read back by query.

People determine (annotators and domain experts, ``earl:manual``); rule judges determine through an operator
(:func:`.automated.judge_run`: every judging rule in the store's judges graphs, on every answered case,
``earl:automatic``), and so do model judges (:func:`.model_judge.judge_run_with_model`), whose unreadable answers
are :class:`JudgeFailure` execution errors, recorded in the same batch, apart from the determinations.
Everything a batch says is checked before anything is written, and each problem is named in one 422: a probe
with no trace in the run (an execution error is never judged), a turn the trace does not have, a criterion that
is not one of the run's plan's, a pointer past the response. A batch is one graph ``{evaluation}/judgments/{n}``
(:meth:`GraphService.append_numbered`), so recording costs O(batch) whatever the record's size, and nothing is
ever rewritten: a correction is a new determination. Reads are ``queries/run-traces.rq`` and
``queries/determinations.rq``; a plan's criteria, ``queries/plan-criteria.rq``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass

from pyoxigraph import NamedNode, Triple

from ..core.auth import require
from ..core.catalog import GraphKind
from ..core.commits import WriteConflict
from ..core.config import Credential
from ..core.digest import graph_digest
from ..core.errors import Conflict, Unprocessable
from ..core.graph_edits import GraphEdit, GraphRef
from ..core.graphs import GraphService
from ..core.iris import named_node
from ..core.roles import ANNOTATOR, DOMAIN_EXPERT
from ..credentials.signing import Signer
from ..envelope import iris_for
from ..runs.records import run_view
from . import rdf
from .model import MANUAL, Determination, Judge, PlanCriteria, Pointer, RecordedDetermination
from .separation import NO_SEPARATION, Separation
from .tallies import batch_tallies, recount_tallies

_ATTEMPTS = 8
"""How often a judgments batch is read and written again when another batch wrote first."""

DETERMINERS = (ANNOTATOR, DOMAIN_EXPERT)
"""The roles whose holders determine by hand: annotators and domain experts (docs/judgments.md)."""


@dataclass(frozen=True)
class Answered:
    """One answered case of a run, as a judge reads it: the probe, its case, and each turn's texts."""

    probe: str
    case: str
    turns: tuple[tuple[str, str], ...]
    """(input text, response text) per turn, in order."""


@dataclass(frozen=True)
class Ruling:
    """A determination as a person submits it: on the response to ``turn`` of ``probe`` in the run."""

    probe: str
    criterion: str
    turn: int
    outcome: str
    rationale: str
    pointer: tuple[int, int] | None = None


@dataclass(frozen=True)
class JudgeFailure:
    """An automated judge's failure to determine on the reply to ``turn`` of ``probe`` against ``criterion``: an
    execution error of kind ``epo:JudgeFailure``, never a determination."""

    probe: str
    criterion: str
    turn: int
    judge: Judge
    message: str
    answer: str | None = None
    """What the judge answered, when it answered something that could not be read."""


def answered_cases(graphs: GraphService, run: str) -> dict[str, Answered]:
    """Probe IRI to its answered case in ``run`` (``queries/run-traces.rq``)."""
    turns: dict[str, list[tuple[str, str]]] = {}
    cases: dict[str, str] = {}
    for row in graphs.rows("run-traces", {"run": NamedNode(run)}):
        probe = row["probe"].value
        cases[probe] = row["case"].value
        turns.setdefault(probe, []).append((row["inputText"].value, row["responseText"].value))
    return {probe: Answered(probe, cases[probe], tuple(texts)) for probe, texts in turns.items()}


def plan_criteria(graphs: GraphService, plan: str) -> PlanCriteria:
    """The criteria a plan allocates probes to (the in-scope criteria of the envelope version it was made on), with
    their identifiers (``queries/plan-criteria.rq``)."""
    rows = graphs.rows("plan-criteria", {"plan": NamedNode(plan)})
    return PlanCriteria({row["criterion"].value: row["identifier"].value for row in rows})


def run_criterion(graphs: GraphService, evaluation_id: str, run_number: int, given: str) -> str:
    """A criterion named by IRI or by identifier, among run ``run_number``'s plan's (422 naming an unknown one)."""
    return plan_criteria(graphs, run_view(graphs, evaluation_id, run_number).plan).named(given)


def determinations(
    graphs: GraphService, evaluation_id: str, *, criterion: str | None = None, run: str | None = None
) -> list[RecordedDetermination]:
    """The evaluation's determinations (``queries/determinations.rq``), of one criterion or one run when given
    (IRIs; 400 naming one that is not)."""
    bindings = {"evaluation": NamedNode(iris_for(graphs, evaluation_id).evaluation)}
    for name, value, what in (("criterion", criterion, "the criterion"), ("ofRun", run, "the run")):
        if value is not None:
            bindings[name] = named_node(value, what)
    return [
        RecordedDetermination(
            determination=row["determination"].value,
            criterion=row["criterion"].value,
            probe=row["probe"].value,
            run=row["run"].value,
            turn=int(row["turn"].value),
            outcome=row["outcome"].value,
            mode=row["mode"].value,
            judge=row["judge"].value,
            version=row["version"].value if "version" in row else None,
            method=row["method"].value,
            rationale=row["rationale"].value,
            pointer=(int(row["pointerStart"].value), int(row["pointerEnd"].value)) if "pointerStart" in row else None,
            at=row["at"].value,
        )
        for row in graphs.rows("determinations", bindings)
    ]


def record_rulings(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    rulings: Sequence[Ruling],
    credential: Credential | None,
    *,
    separation: Separation = NO_SEPARATION,
    signer: Signer | None = None,
) -> list[str]:
    """A person's determinations on run ``run_number``'s responses, as one batch; their IRIs. 401/403 unless an
    annotator or domain expert; 403 when ``separation`` keeps them from the run; 404 for no such run; 422 naming
    every problem, nothing written. Given ``signer``, the batch is signed by the person's key, as a judge's is
    (:func:`record_judgments`)."""
    agent = require(credential, *DETERMINERS)
    separation.require_apart_from_run(graphs, run_view(graphs, evaluation_id, run_number), agent, "determine")
    judge = Judge(
        graphs.agent_iri(agent.agent), "person", agent.agent, ", ".join(sorted(agent.roles & set(DETERMINERS)))
    )
    made = []
    problems = []
    for number, ruling in enumerate(rulings, start=1):
        try:
            pointer = Pointer(ruling.turn, *ruling.pointer) if ruling.pointer is not None else None
            made.append(
                Determination(
                    ruling.criterion,
                    ruling.probe,
                    ruling.turn,
                    ruling.outcome,
                    MANUAL,
                    judge,
                    ruling.rationale,
                    pointer,
                )
            )
        except ValueError as error:
            problems.append(f"determination {number}: {error}")
    if problems:
        raise Unprocessable("; ".join(problems), detail=problems)
    return record_judgments(graphs, evaluation_id, run_number, made, (), agent, signer=signer)[0]


def record_determinations(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    determinations: Sequence[Determination],
    agent: Credential,
) -> list[str]:
    """Append ``determinations`` on run ``run_number`` as one batch, after checking each against the record
    (422 naming every problem); their IRIs, in order."""
    return record_judgments(graphs, evaluation_id, run_number, determinations, (), agent)[0]


def record_judgments(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    determinations: Sequence[Determination],
    failures: Sequence[JudgeFailure],
    agent: Credential,
    *,
    judges_described: Sequence[Triple] = (),
    signer: Signer | None = None,
) -> tuple[list[str], list[str]]:
    """Append ``determinations`` and automated judges' ``failures`` on run ``run_number`` as one batch, after
    checking each against the record (422 naming every problem); the IRIs of the determinations and of the
    execution errors, in order. ``judges_described``: more about the judges than name and version (a model
    judge's configuration). Given ``signer``, the batch (one judge's) is signed by that judge's key in the same
    write: one credential, ``{batch}/credential``, stating the batch graph's digest (docs/trust.md)."""
    run = run_view(graphs, evaluation_id, run_number)
    cases = answered_cases(graphs, run.iri)
    criteria = plan_criteria(graphs, run.plan)
    problems = [
        problem
        for number, d in enumerate(determinations, start=1)
        for problem in _problems(
            f"determination {number}",
            d.probe,
            d.criterion,
            d.turn,
            d.pointer.end if d.pointer else None,
            cases,
            criteria,
        )
    ]
    problems += [
        problem
        for number, f in enumerate(failures, start=1)
        for problem in _problems(f"judge failure {number}", f.probe, f.criterion, f.turn, None, cases, criteria)
    ]
    if problems:
        raise Unprocessable(
            "; ".join(problems[:20]) + (f"; and {len(problems) - 20} more" if len(problems) > 20 else ""),
            detail=problems,
        )
    if not determinations and not failures:
        raise Unprocessable("no determination to record")
    evaluation = iris_for(graphs, evaluation_id).evaluation
    at = graphs.clock()
    signers = {j.iri for j in [d.judge for d in determinations] + [f.judge for f in failures]}
    if signer is not None and len(signers) != 1:
        raise ValueError(f"a signed batch is one judge's, not {len(signers)} judges'")

    def batch(ref: GraphRef) -> list[Triple]:
        triples: list[Triple] = list(judges_described)
        judges = {j.iri: j for j in [d.judge for d in determinations] + [f.judge for f in failures]}
        for judge in judges.values():
            triples += rdf.judge_triples(judge)
        for k, d in enumerate(determinations, start=1):
            triples += rdf.determination_triples(
                f"{ref.iri.value}/determinations/{k}", evaluation, cases[d.probe].case, d, d.judge.iri, at
            )
        for k, f in enumerate(failures, start=1):
            triples += rdf.judge_failure_triples(
                f"{ref.iri.value}/errors/{k}",
                evaluation,
                cases[f.probe].case,
                f.turn,
                f.criterion,
                f.judge.iri,
                f.message,
                f.answer,
                at,
            )
        return triples

    counted = f"{len(determinations)} determinations" + (f" and {len(failures)} judge failures" if failures else "")
    record = graphs.member(GraphKind.EVALUATION, evaluation_id)
    changes = [(cases[d.probe].case, d.criterion, d.outcome) for d in determinations]
    for attempt in range(_ATTEMPTS):
        ref = graphs.next_batch(record, "judgments")
        # the run's pass-rate tallies move in the same write, and the batch states the facts it makes true
        tallied = batch_tallies(graphs, evaluation, evaluation_id, run, changes) if changes else None
        if changes and tallied is None:  # the run's first batch: its tallies are counted from the record first
            with suppress(WriteConflict):
                recount_tallies(graphs, evaluation_id, run, agent)
            continue
        content = batch(ref) + (tallied[1] if tallied else [])
        edits = [
            GraphEdit(
                ref,
                insert=content,
                expected_digest=None,
                batch_of=record.iri.value,
                title=f"judgments {ref.key}: {counted} on run {run_number}",
            )
        ]
        if signer is not None:  # the judge signs the digest the catalog will record for the batch
            edits.append(
                GraphEdit(
                    graphs.member(ref.kind, f"{ref.identifier}/credential"),
                    insert=signer.digest_graph(ref.iri.value, graph_digest(content), min(signers), at),
                    expected_digest=None,
                    batch_of=record.iri.value,
                    title=f"the credential signing judgments {ref.key}'s digest",
                )
            )
        try:
            graphs.apply_edits(edits + ([tallied[0]] if tallied else []), agent)
            break
        except WriteConflict:  # another batch took the number or moved the tallies: read again
            time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
    else:
        raise Conflict(f"could not append a judgments batch to run {run_number}: too many concurrent batches; retry")
    return (
        [f"{ref.iri.value}/determinations/{k}" for k in range(1, len(determinations) + 1)],
        [f"{ref.iri.value}/errors/{k}" for k in range(1, len(failures) + 1)],
    )


def _problems(
    what: str,
    probe: str,
    criterion: str,
    turn: int,
    pointer_end: int | None,
    cases: dict[str, Answered],
    criteria: PlanCriteria,
) -> list[str]:
    where = f"{what} (probe {probe}, criterion {criterion})"
    if criterion not in criteria:
        return [f"{where}: the criterion is not one the run's plan tests (an in-scope criterion of its envelope)"]
    if probe not in cases:
        return [f"{where}: the run has no answered case for the probe (an execution error is never judged)"]
    turns = cases[probe].turns
    if turn > len(turns):
        return [f"{where}: the case has {len(turns)} turn(s), not {turn}"]
    if pointer_end is not None and pointer_end > len(turns[turn - 1][1]):
        return [f"{where}: the pointer ends at {pointer_end}, past the response's {len(turns[turn - 1][1])} characters"]
    return []
