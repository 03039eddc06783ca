"""The scope and envelope as the JSON a client sends (canonical order: lists sorted, objects by id), for the answers of
``/evaluations``: the same field names as the request bodies of :mod:`.models` and the JSON-LD context."""

from __future__ import annotations

from decimal import Decimal

from ..envelope import EnvelopeContent, Scope
from ..scenarios import Trigger
from .models import compact


def _iris(values: tuple[str, ...]) -> list[str]:
    return sorted(compact(v) for v in values)


def _triggers_json(triggers: tuple[Trigger, ...]) -> list[dict[str, object]]:
    return [
        {"facet": compact(t.facet), "values": [v == "true" if v in ("true", "false") else compact(v) for v in t.values]}
        for t in triggers
    ]


def _number(value: Decimal | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def scope_json(scope: Scope) -> dict[str, object]:
    """The scope as the JSON a client sends (canonical order: lists sorted, objects by id)."""
    t, u, o = scope.test_target, scope.use_boundary, scope.operating_environment
    body: dict[str, object] = {
        "id": scope.id,
        "title": scope.title,
        "riskQuestion": scope.risk_question,
        "dso": scope.dso,
        "knowledgeGraphs": sorted(scope.knowledge_graphs),
        "testTarget": {
            "name": t.name,
            "kind": t.kind,
            "versionBoundary": {
                "modelRelease": t.version_boundary.model_release,
                "configuration": t.version_boundary.configuration,
            },
        },
        "useBoundary": {
            "statement": u.statement,
            "users": _iris(u.users),
            "tasks": _iris(u.tasks),
            "languages": _iris(u.languages),
            "countries": _iris(u.countries),
        },
        "operatingEnvironment": {
            "statement": o.statement,
            "settings": _iris(o.settings),
            "assumptions": [{"id": a.id, "statement": a.statement} for a in sorted(o.assumptions, key=lambda a: a.id)],
        },
        "outOfScope": [
            {"id": d.id, "statement": d.statement, "concepts": _iris(d.concepts)}
            for d in sorted(scope.out_of_scope, key=lambda d: d.id)
        ],
    }
    if scope.population:
        body["population"] = [
            {"id": p.id, "label": p.label, "share": _number(p.share), "when": _triggers_json(p.facts)}
            for p in sorted(scope.population, key=lambda p: p.id)
        ]
    if scope.risk_question is None:
        del body["riskQuestion"]
    if (m := scope.method) is not None:
        method = {"name": m.name, "methodVersion": m.version, "statement": m.statement}
        body["evaluationMethod"] = {k: v for k, v in method.items() if v is not None}
    return body


def content_json(content: EnvelopeContent) -> dict[str, object]:
    """Requirements and criteria as the JSON a client sends (sorted by id)."""
    requirements = [
        {
            k: v
            for k, v in {
                "id": r.id,
                "statement": r.statement,
                "parent": r.parent,
                "concepts": _iris(r.concepts),
            }.items()
            if v is not None
        }
        for r in sorted(content.requirements, key=lambda r: r.id)
    ]
    criteria = []
    for c in sorted(content.criteria, key=lambda c: c.id):
        item: dict[str, object] = {
            "id": c.id,
            "requirement": c.requirement,
            "statement": c.statement,
            "expectedResult": c.expected_result,
            "weight": _number(c.weight),
            "weightRationale": c.weight_rationale,
            "inScope": c.in_scope,
            "dimension": c.dimension,
            "category": c.category,
            "concepts": _iris(c.concepts),
            "judgedBy": c.judged_by.value if c.judged_by else None,
            "bearsWhen": _triggers_json(c.triggers) or None,
        }
        criteria.append({k: v for k, v in item.items() if v is not None})
    body: dict[str, object] = {"requirements": requirements, "criteria": criteria}
    if (agreement := content.judge_agreement) is not None:
        body["judgeAgreement"] = {
            "minimum": _number(agreement.minimum),
            "measure": agreement.measure.value,
            "minimumUnits": agreement.minimum_units,
        }
    if content.statement is not None:
        body = {"statement": content.statement, **body}
    return body
