"""The workspace's home: what waits for whom in each evaluation, by role (docs/workspace.md).

What waits is read from each evaluation's :class:`~.standing.Standing` (its stage and what the stage rests on, one
read of its milestones and runs); this module lists from it, per role, the assessments, approvals, runs, cases and
attestations owed. ``Standing``, ``standing``, ``standings`` and ``current_plans`` are re-exported from
:mod:`.standing`, where they moved, so that the pages and the package keep importing them from here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from ..core.graphs import GraphService
from ..core.roles import ADMIN, ANNOTATOR, DOMAIN_EXPERT, EVALUATION_OPERATOR, ORGANIZATIONAL_EXPERT
from ..envelope import envelope_at
from .annotation import annotate_path, owed_by_run
from .model import EvaluationOverview, Waiting, WaitingItem
from .standing import Standing, current_plans, standing, standings
from .texts import criterion_texts

ROLES = (DOMAIN_EXPERT, ORGANIZATIONAL_EXPERT, EVALUATION_OPERATOR, ANNOTATOR)
"""The roles something can wait for, in the order a page lists them; an admin holds them all."""

__all__ = [
    "ROLES",
    "Standing",
    "current_plans",
    "evaluations_for",
    "standing",
    "standings",
    "waiting_for",
    "waiting_here",
]


def evaluations_for(
    graphs: GraphService, agent: str, roles: frozenset[str], read: Sequence[Standing] | None = None
) -> list[EvaluationOverview]:
    """Every evaluation ``agent`` (holding ``roles``) may see, by identifier, each with its stage and how many things
    of each kind wait in it for anyone. Reads are public, so every evaluation is listed: the parameters are where a
    deployment's rule narrows the listing. ``read``: the :func:`standings`, when the caller has them."""
    out = []
    for found in standings(graphs) if read is None else read:
        summary = found.summary
        counts = Counter[Waiting]()
        for item in _waiting(graphs, found, frozenset(ROLES), None, None, frozenset()):
            counts[item.kind] += item.count
        out.append(
            EvaluationOverview(
                summary.iri,
                summary.id,
                summary.title,
                found.stage,
                summary.envelope.version if summary.envelope else None,
                max((p.number for p in found.plans), default=None),
                found.run.number if found.run else None,
                found.report.number if found.report else None,
                tuple(sorted(counts.items(), key=lambda kv: kv[0].value)),
            )
        )
    return out


def waiting_for(
    graphs: GraphService,
    agent: str,
    roles: frozenset[str],
    languages: frozenset[str] | None,
    expertise: frozenset[str],
    read: Sequence[Standing] | None = None,
) -> list[WaitingItem]:
    """What waits for ``agent`` (their agent name) in every evaluation, by the roles they hold (an admin holds them
    all): per evaluation by identifier, then role (:data:`ROLES` order), then the kind's own order. ``languages``
    (BCP 47 tags; ``None``: not declared) and ``expertise`` (concept, dimension or category IRIs; empty: none
    declared) narrow the cases waiting for an annotator (:func:`_annotator`). ``read``: the :func:`standings`, when
    the caller has them."""
    return [
        item
        for found in (standings(graphs) if read is None else read)
        for item in waiting_here(graphs, found, agent, roles, languages, expertise)
    ]


def waiting_here(
    graphs: GraphService,
    found: Standing,
    agent: str,
    roles: frozenset[str],
    languages: frozenset[str] | None,
    expertise: frozenset[str],
) -> list[WaitingItem]:
    """What waits for ``agent`` in the one evaluation ``found`` is the standing of, as :func:`waiting_for` lists it
    (a page that read the standing already reads it once)."""
    held = frozenset(ROLES) if ADMIN in roles else roles & frozenset(ROLES)
    return _waiting(graphs, found, held, agent, languages, expertise)


def _waiting(
    graphs: GraphService,
    found: Standing,
    roles: frozenset[str],
    agent: str | None,
    languages: frozenset[str] | None,
    expertise: frozenset[str],
) -> list[WaitingItem]:
    out: list[WaitingItem] = []
    for role in ROLES:
        if role in roles:
            out += _FOR[role](graphs, found, agent, languages, expertise)
    return out


def _item(found: Standing, kind: Waiting, role: str, item: str, label: str, page: str, count: int = 1) -> WaitingItem:
    """A waiting item; ``page`` is the path under the evaluation's (``/workspace/…``), or a whole path."""
    evaluation = found.summary.id
    path = page if page.startswith("/evaluations/") else f"/evaluations/{evaluation}{page}"
    return WaitingItem(kind, role, evaluation, item, label, path, count)


def _domain_expert(graphs: GraphService, found: Standing, *_: object) -> list[WaitingItem]:
    out = []
    if found.unassessed_dso:
        out.append(
            _item(
                found,
                Waiting.DSO_APPROPRIATENESS,
                DOMAIN_EXPERT,
                found.unassessed_dso,
                f"appropriateness of the DSO {_identifier(graphs, found.unassessed_dso)}",
                "/workspace/envelope",
            )
        )
    status = found.status
    if status is not None:
        criteria = {c.id: c for c in envelope_at(graphs, found.summary.id)[0].content.criteria}
        out += [
            _item(
                found,
                Waiting.RELEVANCE,
                DOMAIN_EXPERT,
                f"{status.envelope}/criteria/{identifier}",
                f"relevance of {identifier}: {_short(criteria[identifier].statement)}",
                "/workspace/envelope",
            )
            for identifier, outcome in status.relevance.items()
            if outcome is None and identifier in criteria
        ]
        if status.appropriate is None:
            out.append(
                _item(
                    found,
                    Waiting.ENVELOPE_APPROPRIATENESS,
                    DOMAIN_EXPERT,
                    status.envelope,
                    f"appropriateness of envelope v{status.version}",
                    "/workspace/envelope",
                )
            )
    out += [
        _item(
            found,
            Waiting.PLAN_APPROVAL,
            DOMAIN_EXPERT,
            p.iri,
            f"approval of plan {p.number}",
            f"/workspace/plans/{p.number}",
        )
        for p in found.plans
        if not p.approved
    ]
    for run in found.runs:
        waiting = found.to_attest.get(run.iri, {})
        texts = criterion_texts(graphs, found.summary.id, waiting)
        out += [
            _item(
                found,
                Waiting.ATTESTATION,
                DOMAIN_EXPERT,
                criterion,
                f"attest {texts[criterion].identifier} for run {run.number} ({why})",
                f"/workspace/criteria/{texts[criterion].identifier}?run={run.number}",
            )
            for criterion, why in sorted(waiting.items(), key=lambda kv: texts[kv[0]].identifier)
            if criterion in texts
        ]
    out += [
        _item(
            found,
            Waiting.REPORT_SIGN_OFF,
            DOMAIN_EXPERT,
            r.iri,
            f"sign-off of report {r.number}",
            f"/reports/{r.number}/page",
        )
        for r in found.reports
        if not r.signed_off
    ]
    return out


def _organizational_expert(graphs: GraphService, found: Standing, *_: object) -> list[WaitingItem]:
    out = []
    if found.status is not None and not found.status.missing and not found.status.signed_off:
        out.append(
            _item(
                found,
                Waiting.ENVELOPE_SIGN_OFF,
                ORGANIZATIONAL_EXPERT,
                found.status.envelope,
                f"sign-off of envelope v{found.status.version}",
                "/workspace/envelope",
            )
        )
    return out + [
        _item(
            found,
            Waiting.REPORT_ACCEPTANCE,
            ORGANIZATIONAL_EXPERT,
            r.iri,
            f"acceptance of report {r.number}",
            f"/reports/{r.number}/page",
        )
        for r in found.reports
        if r.signed_off and not r.accepted
    ]


def _operator(graphs: GraphService, found: Standing, *_: object) -> list[WaitingItem]:
    started = {run.plan for run in found.runs}
    out = [
        _item(
            found,
            Waiting.RUN_START,
            EVALUATION_OPERATOR,
            p.iri,
            f"start a run of plan {p.number}",
            f"/workspace/plans/{p.number}",
        )
        for p in found.plans
        if p.approved and p.iri not in started
    ]
    for run in found.runs:
        if run.errors:
            out.append(
                _item(
                    found,
                    Waiting.RUN_ERRORS,
                    EVALUATION_OPERATOR,
                    run.iri,
                    f"run {run.number}: {run.errors} execution error(s)",
                    f"/workspace/runs/{run.number}",
                    run.errors,
                )
            )
        if run.cases < run.probes:
            out.append(
                _item(
                    found,
                    Waiting.RUN_IN_PROGRESS,
                    EVALUATION_OPERATOR,
                    run.iri,
                    f"run {run.number}: {run.cases} of {run.probes} probes recorded",
                    f"/workspace/runs/{run.number}",
                )
            )
    return out


def _annotator(
    graphs: GraphService,
    found: Standing,
    agent: str | None,
    languages: frozenset[str] | None,
    expertise: frozenset[str],
) -> list[WaitingItem]:
    """Per run, the cases waiting for the annotator in languages they read; with ``expertise`` declared, those
    assigned to them or with a criterion in it (the queue lists the others after these). For anyone (``agent``
    ``None``): the cases that need a person, in any language."""
    evaluation = found.summary.id
    if agent is None:
        counts = found.needing
    else:
        owed = owed_by_run(graphs, evaluation, found.runs, agent, languages)
        texts = criterion_texts(graphs, evaluation, {c for items in owed.values() for o in items for c in o.waiting})
        counts = {
            number: sum(
                1
                for o in items
                if o.waiting
                and (not expertise or o.assigned or any(texts[c].topics & expertise for c in o.waiting if c in texts))
            )
            for number, items in owed.items()
        }
    return [
        _item(
            found,
            Waiting.ANNOTATION,
            ANNOTATOR,
            run.iri,
            f"run {run.number}: {counts[run.number]} case(s) to determine",
            annotate_path(evaluation, run.number),
            counts[run.number],
        )
        for run in found.runs
        if counts.get(run.number)
    ]


_Lister = Callable[[GraphService, Standing, str | None, frozenset[str] | None, frozenset[str]], list[WaitingItem]]
"""What waits for one role: ``(graphs, found, agent, languages, expertise)``."""
_FOR: dict[str, _Lister] = {
    DOMAIN_EXPERT: _domain_expert,
    ORGANIZATIONAL_EXPERT: _organizational_expert,
    EVALUATION_OPERATOR: _operator,
    ANNOTATOR: _annotator,
}


def _identifier(graphs: GraphService, graph: str) -> str:
    """A loaded graph's identifier as the catalog records it (its IRI when it is not loaded)."""
    entry = graphs.find_graph(graph)
    return entry.identifier if entry is not None else graph


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
