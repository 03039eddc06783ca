"""JSON shapes of the domain's values: the one place where records become JSON for the HTTP answers
(and for the command line's output). Domain modules return typed values; nothing else builds JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, Protocol, TypeVar

from ..core.catalog import CatalogEntry
from ..core.rdf import local_name
from ..core.validation_report import ValidationOutcome, Violation
from ..envelope.model import ApprovalRecord, EnvelopeStatus
from ..judgments.agreement import Agreement, CaseNeedingPerson, HumanAgreement
from ..judgments.attestations import AttestationView
from ..judgments.model import RecordedDetermination
from ..judgments.reliability import StoredReliability
from ..plan.model import PlanApprovalStatus, PlanView, Probe
from ..runs.jobs import Job
from ..runs.records import RunView
from ..runs.retries import RetryView
from ..scenarios.model import Page, RecordedExclusion, ReviewedScenario, RuleBlocking, RuleCount
from ..scope.model import EvaluationSummary

T = TypeVar("T")
JSON = dict[str, Any]


def approval_json(record: ApprovalRecord) -> JSON:
    return {
        "@id": record.iri,
        "kind": record.kind,
        "subject": record.subject,
        "agent": record.agent,
        "time": record.time.isoformat(),
        "outcome": record.outcome,
        "comment": record.comment,
        "envelopeDigest": record.envelope_digest,
        "planDigest": record.plan_digest,
    }


def envelope_status_json(status: EnvelopeStatus) -> JSON:
    return {
        "envelope": status.envelope,
        "version": status.version,
        "digest": status.digest,
        "signedOff": status.signed_off,
        "dsoAppropriateness": status.dso_appropriate,
        "appropriateness": status.appropriate,
        "relevance": status.relevance,
        "missingForSignOff": status.missing,
    }


def plan_approval_json(status: PlanApprovalStatus) -> JSON:
    """Whether a plan is approved now, why not, and every approval it received (current or not)."""
    return {
        "approved": status.approved,
        "notApprovedBecause": list(status.reasons),
        "approvals": [approval_json(r) for r in status.approvals],
    }


def plan_json(view: PlanView) -> JSON:
    """A plan as recorded, its allocation per criterion, and its approval status now."""
    return {
        "plan": view.iri,
        "number": view.number,
        "digest": view.digest,
        "recordedDigest": view.recorded_digest,
        "strategy": view.strategy,
        "budget": view.budget,
        "seed": view.seed,
        "frameSize": view.frame_size,
        "eligibleFrameSize": view.eligible_frame_size,
        "envelope": view.envelope,
        "envelopeDigest": view.envelope_digest,
        "createdBy": view.created_by,
        "created": view.created,
        "allocation": [
            {
                "criterion": a.criterion,
                "probes": a.probes,
                "promptFrame": a.prompt_frame,
                "exercisedBy": a.exercised_by,
                "scenarios": a.scenarios,
            }
            for a in view.allocation
        ],
        "probes": view.probes,
        "languagesWithoutTemplates": list(view.without_templates),
        **plan_approval_json(view.approval),
    }


def probe_json(probe: Probe) -> JSON:
    return {
        "probe": probe.iri,
        "number": probe.number,
        "criterion": probe.criterion,
        "exercises": list(probe.exercises),
        "scenario": probe.scenario,
        "openingPrompt": probe.opening_prompt,
        "followUps": list(probe.follow_ups),
        "language": probe.language,
        "assignedTo": probe.assigned_to,
        "awaitingNativeReview": probe.awaiting_native_review,
    }


def scenario_json(scenario: ReviewedScenario) -> JSON:
    """A reviewed scenario; its facets by the property's local name, each a sorted list of all its values
    (a list even for a one-valued facet, so every engine and every facet gives one shape)."""
    facets: dict[str, list[str]] = {}
    for prop, value in scenario.facets:
        values = facets.setdefault(local_name(prop), [])
        if value not in values:
            values.append(value)
    for values in facets.values():
        values.sort()
    excluded = scenario.exclusion
    return {
        "scenario": scenario.iri,
        "index": scenario.index,
        "status": scenario.status.value,
        "blockedBy": list(scenario.blocked_by),
        "messages": list(scenario.messages),
        "facets": facets,
        "excluded": None if excluded is None else {"reason": excluded.reason, "by": excluded.by, "at": excluded.at},
    }


def exclusion_json(recorded: RecordedExclusion) -> JSON:
    exclusion = recorded.exclusion
    return {
        "exclusion": recorded.iri,
        "scenario": recorded.scenario,
        "reason": exclusion.reason,
        "by": exclusion.by,
        "at": exclusion.at,
    }


def rule_count_json(count: RuleCount) -> JSON:
    return {"rule": count.rule, "scenarios": count.scenarios}


def rule_blocking_json(found: RuleBlocking) -> JSON:
    return {
        "rule": found.rule,
        "label": found.label,
        "blocked": found.blocked,
        "candidates": found.candidates,
        "eligible": found.eligible,
        "shareOfBlocked": round(found.share_of_blocked, 4),
    }


def page_json(page: Page[T], item: Callable[[T], JSON]) -> JSON:
    """A page of a listing: how many match in all, where the page starts, and its items."""
    return {"total": page.total, "limit": page.limit, "offset": page.offset, "items": [item(i) for i in page.items]}


class Versioned(Protocol):
    """An envelope version as a summary names it (an :class:`EnvelopeSummary` or a whole ``Envelope``)."""

    @property
    def iri(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def digest(self) -> str: ...


def envelope_summary_json(env: Versioned | None) -> JSON | None:
    return None if env is None else {"@id": env.iri, "version": env.version, "digest": env.digest}


def evaluation_summary_json(summary: EvaluationSummary) -> JSON:
    """An evaluation in the listing: identifier, title, and its current envelope's version and digest."""
    return {
        "@id": summary.iri,
        "id": summary.id,
        "title": summary.title,
        "envelope": envelope_summary_json(summary.envelope),
    }


def catalog_entry_json(entry: CatalogEntry) -> JSON:
    """The catalog's description of one named graph."""
    return {
        "graph": entry.graph,
        "kind": entry.kind.value,
        "identifier": entry.identifier,
        "title": entry.title,
        "loadedBy": entry.agent,
        "modified": entry.modified.isoformat(),
        "triples": entry.triples,
        "digest": entry.digest,
        "conformsTo": entry.conforms_to,
        "definesOntology": entry.defines_ontology,
        "batchOf": entry.batch_of,
    }


def violation_json(violation: Violation) -> JSON:
    """One validation result, its fields as :class:`Violation` names them."""
    return asdict(violation)


def validation_json(outcome: ValidationOutcome) -> JSON:
    """Whether the data conforms, and every result."""
    return {"conforms": outcome.conforms, "violations": [violation_json(v) for v in outcome.violations]}


def error_detail_json(detail: object) -> object:
    """An error's detail for a problem answer: violations shaped, everything else as the domain gave it."""
    if isinstance(detail, Violation):
        return violation_json(detail)
    if isinstance(detail, Sequence) and not isinstance(detail, str):
        return [error_detail_json(item) for item in detail]
    return detail


def run_json(view: RunView, job: Job | None) -> JSON:
    """A run as recorded (its progress from the record) and its job in this process, if it has one."""
    return {
        "run": view.iri,
        "number": view.number,
        "plan": view.plan,
        "planDigest": view.plan_digest,
        "targetFingerprint": view.fingerprint,
        "targetConfiguration": json.loads(view.configuration),
        "settings": json.loads(view.settings),
        "startedBy": view.started_by,
        "started": view.started,
        "probes": view.probes,
        "cases": view.cases,
        "traces": view.traces,
        "executionErrors": view.errors,
        "attempts": view.attempts,
        "done": view.done,
        "job": None
        if job is None
        else {
            "state": job.state,
            "started": job.started.isoformat(),
            "ended": job.ended.isoformat() if job.ended else None,
            "error": job.error,
        },
    }


def retry_json(view: RetryView) -> JSON:
    """A retry of a run's execution errors as recorded: who, when, how, and what its attempts came to."""
    return {
        "retry": view.iri,
        "number": view.number,
        "by": view.by,
        "at": view.at,
        "settings": json.loads(view.settings),
        "attempts": view.attempts,
        "traces": view.traces,
        "executionErrors": view.attempts - view.traces,
    }


def attestation_json(view: AttestationView) -> JSON:
    return {
        "attestation": view.iri,
        "criterion": view.criterion,
        "run": view.run,
        "outcome": local_name(view.outcome),
        "rationale": view.rationale,
        "expert": view.expert,
        "at": view.at,
        "aggregationRule": view.aggregation_rule,
        "aggregatedOutcome": local_name(view.aggregated_outcome),
        "sufficiency": local_name(view.sufficiency),
        "appropriateness": local_name(view.appropriateness),
        "determinations": list(view.determinations),
        "supersedes": view.supersedes,
        "reason": view.reason,
        "current": view.current,
    }


def determination_json(d: RecordedDetermination) -> JSON:
    # every value a string, as the listing gave the query's rows before it was typed (turn and pointer included)
    shaped = {
        "determination": d.determination,
        "criterion": d.criterion,
        "probe": d.probe,
        "run": d.run,
        "turn": str(d.turn),
        "outcome": d.outcome,
        "mode": d.mode,
        "judge": d.judge,
        "version": d.version,
        "method": d.method,
        "rationale": d.rationale,
        "at": d.at,
    }
    if d.pointer is not None:
        shaped["pointerStart"], shaped["pointerEnd"] = str(d.pointer[0]), str(d.pointer[1])
    return {key: value for key, value in shaped.items() if value is not None}


def earl_name(iri: str) -> str:
    """An EARL outcome's name (``passed``, ``failed``, …) from its IRI."""
    return local_name(iri)


def agreement_json(found: Agreement) -> JSON:
    return {
        "alpha": found.alpha,
        "level": found.level,
        "reason": found.reason,
        "unitCount": len(found.units),
        "coders": list(found.coders),
        "valueCounts": {earl_name(value): count for value, count in found.value_counts},
        "units": [
            {
                "criterion": u.criterion,
                "response": u.response,
                "probe": u.probe,
                "run": u.run,
                "turn": u.turn,
                "outcomes": {coder: earl_name(outcome) for coder, outcome in u.outcomes},
            }
            for u in found.units
        ],
    }


def human_agreement_json(found: HumanAgreement) -> JSON:
    t = found.threshold
    return {
        "judge": found.judge,
        "version": found.version,
        "criterion": found.criterion,
        "measure": found.measure.value,
        "value": found.value,
        "reason": found.reason,
        "units": found.units,
        "determined": found.determined,
        "trustedAlone": found.trusted_alone,
        "threshold": {"minimum": str(t.minimum), "measure": t.measure.value, "minimumUnits": t.minimum_units},
    }


def case_needing_person_json(case: CaseNeedingPerson) -> JSON:
    return {
        "criterion": case.criterion,
        "probe": case.probe,
        "case": case.case,
        "reason": case.reason,
        "judges": [{"judge": judge, "version": version} for judge, version in case.judges],
    }


def reliability_json(stored: StoredReliability) -> JSON:
    r = stored.reliability
    return {
        "measurement": stored.measurement,
        "at": stored.at,
        "latest": stored.latest,
        "judge": r.judge,
        "version": r.version,
        "criterion": r.criterion,
        "run": r.run,
        "attestation": r.attestation,
        "cells": [
            {
                "judgeOutcome": earl_name(c.judge_outcome),
                "attestedOutcome": earl_name(c.attested_outcome),
                "responses": c.responses,
            }
            for c in r.cells
        ],
        "matching": r.matching,
        "compared": r.compared,
        "rate": r.rate,
    }
