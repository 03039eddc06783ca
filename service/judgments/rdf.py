"""Determinations and attestations as RDF, in the caie-spec record's evidence -> determination -> attestation
pattern (EARL assertions, PROV for who and when), as :mod:`.records` appends them.

A determination (``{batch}/determinations/{k}``)::

    <d> a epo:Determination ; epo:inEvaluation <evaluation> ;
        earl:test <criterion> ; earl:subject <response> ; epo:onResponse <response> ; epo:onTrace <trace> ;
        earl:mode earl:manual ; earl:assertedBy <judge> ; prov:wasAttributedTo <judge> ;
        epo:judgingMethod epo:HumanJudge ; earl:result <d/result> ; prov:generatedAtTime "…" .
    <d/result> a earl:TestResult ; earl:outcome earl:failed ; earl:info "rationale" ;
        epo:pointerStart 12 ; epo:pointerEnd 21 .          # characters of the response, when it points

A software judge is a ``prov:SoftwareAgent`` with its name and version (a rule's version changes with its
declaration); a person is the deployment's agent IRI. An attestation (``{batch}/attestations/{k}``) states
a criterion's outcome for the run's target, aggregates determinations by a declared, versioned rule, gives the
evidence's sufficiency and the test's appropriateness, and may supersede an earlier one, with a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pyoxigraph import Literal, NamedNode, Triple

from ..core.namespaces import EARL, EPO, PROV, RDFS
from ..core.rdf import RDF_TYPE, date_time, integer
from .model import AUTOMATIC, Determination, Judge

METHODS = {"rule": EPO + "RuleJudge", "model": EPO + "ModelJudge", "person": EPO + "HumanJudge"}
"""A judge's kind as the EPO's judging methods name it."""


def judge_triples(judge: Judge) -> list[Triple]:
    """A software judge as an agent with its name and version (a person is described elsewhere)."""
    if judge.kind == "person":
        return []
    node = NamedNode(judge.iri)
    return [
        Triple(node, RDF_TYPE, NamedNode(PROV + "SoftwareAgent")),
        Triple(node, NamedNode(RDFS + "label"), Literal(judge.name)),
        Triple(node, NamedNode(EPO + "version"), Literal(judge.version)),
    ]


def determination_triples(
    iri: str, evaluation: str, case: str, determination: Determination, judge_iri: str, at: datetime
) -> list[Triple]:
    node, result = NamedNode(iri), NamedNode(f"{iri}/result")
    response = NamedNode(f"{case}/responses/{determination.turn}")
    mode = determination.mode
    out = [
        Triple(node, RDF_TYPE, NamedNode(EPO + "Determination")),
        Triple(node, NamedNode(EPO + "inEvaluation"), NamedNode(evaluation)),
        Triple(node, NamedNode(EARL + "test"), NamedNode(determination.criterion)),
        Triple(node, NamedNode(EARL + "subject"), response),
        Triple(node, NamedNode(EPO + "onResponse"), response),
        Triple(node, NamedNode(EPO + "onTrace"), NamedNode(f"{case}/trace")),
        Triple(node, NamedNode(EARL + "mode"), NamedNode(mode)),
        Triple(node, NamedNode(EARL + "assertedBy"), NamedNode(judge_iri)),
        Triple(node, NamedNode(PROV + "wasAttributedTo"), NamedNode(judge_iri)),
        Triple(node, NamedNode(EPO + "judgingMethod"), NamedNode(METHODS[determination.judge.kind])),
        Triple(node, NamedNode(EARL + "result"), result),
        Triple(node, NamedNode(PROV + "generatedAtTime"), date_time(at)),
        Triple(result, RDF_TYPE, NamedNode(EARL + "TestResult")),
        Triple(result, NamedNode(EARL + "outcome"), NamedNode(determination.outcome)),
        Triple(result, NamedNode(EARL + "info"), Literal(determination.rationale)),
    ]
    if determination.pointer is not None:
        out += [
            Triple(result, NamedNode(EPO + "pointerStart"), integer(determination.pointer.start)),
            Triple(result, NamedNode(EPO + "pointerEnd"), integer(determination.pointer.end)),
        ]
    if mode == AUTOMATIC:
        out.append(Triple(node, NamedNode(EPO + "version"), Literal(determination.judge.version)))
    return out


def attestation_triples(
    iri: str,
    evaluation: str,
    criterion: str,
    subject: str,
    outcome: str,
    rationale: str,
    aggregation: tuple[str, str],
    determinations: Sequence[str],
    sufficiency: str,
    appropriateness: str,
    expert: str,
    at: datetime,
    supersedes: str | None,
    reason: str | None,
) -> list[Triple]:
    """``aggregation``: the rule started from and the outcome it gives over ``determinations``."""
    node, result = NamedNode(iri), NamedNode(f"{iri}/result")
    out = [
        Triple(node, RDF_TYPE, NamedNode(EPO + "Attestation")),
        Triple(node, NamedNode(EPO + "inEvaluation"), NamedNode(evaluation)),
        Triple(node, NamedNode(EARL + "test"), NamedNode(criterion)),
        Triple(node, NamedNode(EARL + "subject"), NamedNode(subject)),
        Triple(node, NamedNode(EARL + "mode"), NamedNode(EARL + "manual")),
        Triple(node, NamedNode(EARL + "assertedBy"), NamedNode(expert)),
        Triple(node, NamedNode(PROV + "wasAttributedTo"), NamedNode(expert)),
        Triple(node, NamedNode(EARL + "result"), result),
        Triple(node, NamedNode(EPO + "aggregationRule"), NamedNode(aggregation[0])),
        Triple(node, NamedNode(EPO + "aggregatedOutcome"), NamedNode(aggregation[1])),
        Triple(node, NamedNode(EPO + "evidenceSufficiency"), NamedNode(sufficiency)),
        Triple(node, NamedNode(EPO + "testAppropriateness"), NamedNode(appropriateness)),
        Triple(node, NamedNode(PROV + "generatedAtTime"), date_time(at)),
        Triple(result, RDF_TYPE, NamedNode(EARL + "TestResult")),
        Triple(result, NamedNode(EARL + "outcome"), NamedNode(outcome)),
        Triple(result, NamedNode(EARL + "info"), Literal(rationale)),
    ]
    out += [Triple(node, NamedNode(EPO + "aggregates"), NamedNode(d)) for d in determinations]
    if supersedes is not None:
        out += [
            Triple(node, NamedNode(EPO + "supersedes"), NamedNode(supersedes)),
            Triple(node, NamedNode(EPO + "supersessionReason"), Literal(reason or "")),
        ]
    return out


def judge_failure_triples(
    iri: str,
    evaluation: str,
    case: str,
    turn: int,
    criterion: str,
    judge_iri: str,
    message: str,
    answer: str | None,
    at: datetime,
) -> list[Triple]:
    """An automated judge's failure to determine on the reply to ``turn`` against ``criterion``: an execution error
    of kind ``epo:JudgeFailure`` (``{batch}/errors/{k}``), derived from the response and the criterion, attributed
    to the judge, with what it answered (``prov:value``) when it answered something unreadable::

        <e> a epo:ExecutionError ; epo:errorKind epo:JudgeFailure ; epo:errorMessage "…" ;
            epo:errorIn <case/turns/1> ; prov:wasDerivedFrom <case/responses/1> , <criterion> ;
            prov:wasAttributedTo <judge> ; prov:value "what the judge answered" .
    """
    node = NamedNode(iri)
    out = [
        Triple(node, RDF_TYPE, NamedNode(EPO + "ExecutionError")),
        Triple(node, NamedNode(EPO + "inEvaluation"), NamedNode(evaluation)),
        Triple(node, NamedNode(EPO + "errorKind"), NamedNode(EPO + "JudgeFailure")),
        Triple(node, NamedNode(EPO + "errorMessage"), Literal(message)),
        Triple(node, NamedNode(EPO + "errorIn"), NamedNode(f"{case}/turns/{turn}")),
        Triple(node, NamedNode(PROV + "wasDerivedFrom"), NamedNode(f"{case}/responses/{turn}")),
        Triple(node, NamedNode(PROV + "wasDerivedFrom"), NamedNode(criterion)),
        Triple(node, NamedNode(PROV + "wasAttributedTo"), NamedNode(judge_iri)),
        Triple(node, NamedNode(PROV + "generatedAtTime"), date_time(at)),
    ]
    if answer is not None:
        out.append(Triple(node, NamedNode(PROV + "value"), Literal(answer)))
    return out


def judge_configuration_triples(judge_iri: str, configuration: str, digest: str) -> list[Triple]:
    """A model judge's whole configuration (its target version and prompt template, as canonical JSON) and the
    configuration's SHA-256, so that what produced a determination can be read back and compared."""
    node = NamedNode(judge_iri)
    return [
        Triple(node, NamedNode(EPO + "configuration"), Literal(configuration)),
        Triple(node, NamedNode(EPO + "configurationDigest"), Literal(digest)),
    ]
