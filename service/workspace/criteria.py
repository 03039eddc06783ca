"""Where each criterion of a run stands for its domain expert (docs/workspace.md, "Criteria"): how the verdicts on it
fall, the outcome the aggregation rule proposes, its current attestation, and whether it waits for one.

Verdicts are each determiner's latest word on each reply, from what :mod:`.judged` keeps in process, so a listing
costs the run's cases and the criteria's texts and attestations, never a read of every determination.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..core.errors import NotFound
from ..core.graphs import GraphService
from ..judgments.agreement import Said, envelope_threshold, instant
from ..judgments.attestations import UNTESTED, AttestationView, aggregate, attestations, counts
from ..judgments.model import AUTOMATIC, MANUAL, SEMI_AUTO
from ..runs.records import RunView, list_runs, run_view
from .cases import run_cases
from .judged import Pair, judged
from .model import CriterionState
from .texts import criterion_texts

JUDGE_MODES = {MANUAL: "person", AUTOMATIC: "automated", SEMI_AUTO: "semi-automatic"}
"""How the verdicts are counted: by EARL's mode."""
UNATTESTED = "determined, not attested"
DETERMINED_AGAIN = "determined again since its attestation"


@dataclass
class Tally:
    """The verdicts on one criterion over some cases: how they fall by kind of determiner, and which the declared
    aggregation rule counts (:func:`service.judgments.attestations.counts`)."""

    criterion: str
    trusted: frozenset[tuple[str, str, str]]
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(``person``, ``automated`` or ``semi-automatic``, outcome IRI) to verdicts."""
    counted: list[str] = field(default_factory=list)
    latest: Said | None = None

    def add(self, pair: Pair) -> None:
        for (mode, judge, version, _), said in pair.words.items():
            self.outcomes[(JUDGE_MODES.get(mode, "other"), said[2])] += 1
            if counts(mode, judge, version, bool(pair.people), self.trusted, self.criterion):
                self.counted.append(said[2])
        if pair.latest is not None:
            self.latest = max(self.latest or pair.latest, pair.latest)

    @property
    def proposed(self) -> str | None:
        """The rule's outcome over the counted verdicts (``earl:untested`` when it counts none); ``None``: no verdict."""
        return (aggregate(self.counted) or UNTESTED) if self.outcomes else None

    @property
    def falls(self) -> tuple[tuple[str, str, int], ...]:
        return tuple((kind, outcome, n) for (kind, outcome), n in sorted(self.outcomes.items()))


def latest_run(graphs: GraphService, evaluation_id: str) -> RunView:
    runs = list_runs(graphs, evaluation_id)
    if not runs:
        raise NotFound(f"evaluation {evaluation_id!r} has no run yet: nothing bears on a criterion before one")
    return max(runs, key=lambda r: r.number)


def criteria_states(
    graphs: GraphService, evaluation_id: str, run_number: int | None = None
) -> tuple[RunView, tuple[CriterionState, ...]]:
    """The run (``run_number``, else the latest) and each criterion its answered cases bear on, by identifier. 404
    for no such evaluation or run, or an evaluation without a run."""
    run = run_view(graphs, evaluation_id, run_number) if run_number is not None else latest_run(graphs, evaluation_id)
    cases = [case for case in run_cases(graphs, run) if case.trace]
    texts = criterion_texts(graphs, evaluation_id, {c for case in cases for c in case.criteria})
    bearing = Counter(c for case in cases for c in case.criteria)
    traces = {case.trace for case in cases}
    with judged(graphs, evaluation_id) as index:
        trusted = index.trusted(envelope_threshold(graphs, evaluation_id))
        tallies = {criterion: Tally(criterion, trusted) for criterion in texts}
        for (criterion, trace), pair in index.pairs.items():
            if trace in traces and criterion in tallies:
                tallies[criterion].add(pair)
    current = {a.criterion: a for a in attestations(graphs, evaluation_id, run=run.iri) if a.current}
    states = (
        CriterionState(
            texts[c],
            bearing[c],
            tally.falls,
            tally.proposed,
            current.get(c),
            waiting_reason(tally.latest, current.get(c)),
        )
        for c, tally in tallies.items()
    )
    return run, tuple(sorted(states, key=lambda s: s.criterion.identifier))


def waiting_reason(latest: Said | None, attested: AttestationView | None) -> str | None:
    """Why a criterion with ``latest`` as its latest determination in a run waits for an attestation, if it does: no
    current attestation, or a determination newer than it."""
    if latest is None:
        return None
    if attested is None:
        return UNATTESTED
    return DETERMINED_AGAIN if latest[0] > instant(attested.at) else None
