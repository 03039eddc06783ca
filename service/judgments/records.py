"""Step 5 in the record: determinations on a run's responses, appended in batches, read back by query.

People determine (annotators and domain experts, ``earl:manual``); rule judges determine through an operator
(:func:`.automated.judge_run`: every judging rule in the store's judges graphs, on every answered case,
``earl:automatic``).
Everything a batch says is checked before anything is written, and each problem is named in one 422: a probe
with no trace in the run (an execution error is never judged), a turn the trace does not have, a criterion that
is not one of the run's plan's, a pointer past the response. A batch is one graph ``{evaluation}/judgments/{n}``
(:meth:`GraphService.append_numbered`), so recording costs O(batch) whatever the record's size, and nothing is
ever rewritten: a correction is a new determination. Reads are ``queries/run-traces.rq`` and
``queries/determinations.rq``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode, Triple

from ..core.auth import require
from ..core.catalog import GraphKind, now
from ..core.config import Credential
from ..core.errors import Unprocessable
from ..core.graphs import GraphService
from ..core.roles import ANNOTATOR, DOMAIN_EXPERT
from ..envelope import iris_for
from ..plan.records import plan_view
from ..runs.records import run_view
from . import rdf
from .model import MANUAL, Determination, Judge, Pointer

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


def answered_cases(graphs: GraphService, run: str) -> dict[str, Answered]:
    """Probe IRI to its answered case in ``run`` (``queries/run-traces.rq``)."""
    turns: dict[str, list[tuple[str, str]]] = {}
    cases: dict[str, str] = {}
    for row in graphs.rows("run-traces", {"run": NamedNode(run)}):
        probe = row["probe"].value
        cases[probe] = row["case"].value
        turns.setdefault(probe, []).append((row["inputText"].value, row["responseText"].value))
    return {probe: Answered(probe, cases[probe], tuple(texts)) for probe, texts in turns.items()}


def plan_criteria(graphs: GraphService, evaluation_id: str, plan: str) -> frozenset[str]:
    """The criteria a plan allocates probes to: the in-scope criteria of the envelope version it was made on."""
    view = plan_view(graphs, evaluation_id, int(plan.rsplit("/", 1)[-1]))
    return frozenset(a.criterion for a in view.allocation)


def record_rulings(graphs: GraphService, evaluation_id: str, run_number: int, rulings: Sequence[Ruling],
                   credential: Credential | None) -> list[str]:
    """A person's determinations on run ``run_number``'s responses, as one batch; their IRIs. 401/403 unless an
    annotator or domain expert; 404 for no such run; 422 naming every problem, nothing written."""
    agent = require(credential, *DETERMINERS)
    judge = Judge(graphs.agent_iri(agent.agent), "person", agent.agent, ", ".join(sorted(agent.roles & set(DETERMINERS))))
    made = []
    problems = []
    for number, ruling in enumerate(rulings, start=1):
        try:
            pointer = Pointer(ruling.turn, *ruling.pointer) if ruling.pointer is not None else None
            made.append(Determination(ruling.criterion, ruling.probe, ruling.turn, ruling.outcome, MANUAL, judge,
                                      ruling.rationale, pointer))
        except ValueError as error:
            problems.append(f"determination {number}: {error}")
    if problems:
        raise Unprocessable("; ".join(problems), detail=problems)
    return record_determinations(graphs, evaluation_id, run_number, made, agent)


def record_determinations(graphs: GraphService, evaluation_id: str, run_number: int,
                          determinations: Sequence[Determination], agent: Credential) -> list[str]:
    """Append ``determinations`` on run ``run_number`` as one batch, after checking each against the record
    (422 naming every problem); their IRIs, in order."""
    run = run_view(graphs, evaluation_id, run_number)
    cases = answered_cases(graphs, run.iri)
    criteria = plan_criteria(graphs, evaluation_id, run.plan)
    problems = [problem for number, d in enumerate(determinations, start=1)
                for problem in _problems(number, d, cases, criteria)]
    if problems:
        raise Unprocessable("; ".join(problems[:20]) + (f"; and {len(problems) - 20} more" if len(problems) > 20 else ""),
                            detail=problems)
    if not determinations:
        raise Unprocessable("no determination to record")
    evaluation = iris_for(graphs, evaluation_id).evaluation
    at = now()

    def batch(ref) -> list[Triple]:  # type: ignore[no-untyped-def]
        triples: list[Triple] = []
        judges = {d.judge.iri: d.judge for d in determinations}
        for judge in judges.values():
            triples += rdf.judge_triples(judge)
        for k, d in enumerate(determinations, start=1):
            triples += rdf.determination_triples(f"{ref.iri.value}/determinations/{k}", evaluation, cases[d.probe].case,
                                                 d, d.judge.iri, at)
        return triples

    ref = graphs.append_numbered(graphs.member(GraphKind.EVALUATION, evaluation_id), "judgments", batch, agent,
                                 title=f"judgments {{n}}: {len(determinations)} determinations on run {run_number}")
    return [f"{ref.iri.value}/determinations/{k}" for k in range(1, len(determinations) + 1)]


def _problems(number: int, d: Determination, cases: dict[str, Answered], criteria: frozenset[str]) -> list[str]:
    where = f"determination {number} (probe {d.probe}, criterion {d.criterion})"
    if d.criterion not in criteria:
        return [f"{where}: the criterion is not one the run's plan tests (an in-scope criterion of its envelope)"]
    if d.probe not in cases:
        return [f"{where}: the run has no answered case for the probe (an execution error is never judged)"]
    turns = cases[d.probe].turns
    if d.turn > len(turns):
        return [f"{where}: the case has {len(turns)} turn(s), not {d.turn}"]
    if d.pointer is not None and d.pointer.end > len(turns[d.turn - 1][1]):
        return [f"{where}: the pointer ends at {d.pointer.end}, past the response's {len(turns[d.turn - 1][1])} characters"]
    return []
