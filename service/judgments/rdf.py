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

from ..core.namespaces import EARL, EPO, PROV, RDF, RDFS, XSD
from .model import AUTOMATIC, Determination, Judge

_TYPE = NamedNode(RDF + "type")
METHODS = {"rule": EPO + "RuleJudge", "model": EPO + "ModelJudge", "person": EPO + "HumanJudge"}
"""A judge's kind as the EPO's judging methods name it."""


def _n(value: str) -> NamedNode:
    return NamedNode(value)


def _int(value: int) -> Literal:
    return Literal(str(value), datatype=_n(XSD + "integer"))


def _time(value: datetime) -> Literal:
    return Literal(value.isoformat(), datatype=_n(XSD + "dateTime"))


def judge_triples(judge: Judge) -> list[Triple]:
    """A software judge as an agent with its name and version (a person is described elsewhere)."""
    if judge.kind == "person":
        return []
    node = _n(judge.iri)
    return [Triple(node, _TYPE, _n(PROV + "SoftwareAgent")), Triple(node, _n(RDFS + "label"), Literal(judge.name)),
            Triple(node, _n(EPO + "version"), Literal(judge.version))]


def determination_triples(iri: str, evaluation: str, case: str, determination: Determination,
                          judge_iri: str, at: datetime) -> list[Triple]:
    node, result = _n(iri), _n(f"{iri}/result")
    response = _n(f"{case}/responses/{determination.turn}")
    mode = determination.mode
    out = [Triple(node, _TYPE, _n(EPO + "Determination")), Triple(node, _n(EPO + "inEvaluation"), _n(evaluation)),
           Triple(node, _n(EARL + "test"), _n(determination.criterion)), Triple(node, _n(EARL + "subject"), response),
           Triple(node, _n(EPO + "onResponse"), response), Triple(node, _n(EPO + "onTrace"), _n(f"{case}/trace")),
           Triple(node, _n(EARL + "mode"), _n(mode)), Triple(node, _n(EARL + "assertedBy"), _n(judge_iri)),
           Triple(node, _n(PROV + "wasAttributedTo"), _n(judge_iri)),
           Triple(node, _n(EPO + "judgingMethod"), _n(METHODS[determination.judge.kind])),
           Triple(node, _n(EARL + "result"), result), Triple(node, _n(PROV + "generatedAtTime"), _time(at)),
           Triple(result, _TYPE, _n(EARL + "TestResult")), Triple(result, _n(EARL + "outcome"), _n(determination.outcome)),
           Triple(result, _n(EARL + "info"), Literal(determination.rationale))]
    if determination.pointer is not None:
        out += [Triple(result, _n(EPO + "pointerStart"), _int(determination.pointer.start)),
                Triple(result, _n(EPO + "pointerEnd"), _int(determination.pointer.end))]
    if mode == AUTOMATIC:
        out.append(Triple(node, _n(EPO + "version"), Literal(determination.judge.version)))
    return out


def attestation_triples(iri: str, evaluation: str, criterion: str, subject: str, outcome: str, rationale: str,
                        aggregation: tuple[str, str], determinations: Sequence[str], sufficiency: str,
                        appropriateness: str, expert: str, at: datetime, supersedes: str | None,
                        reason: str | None) -> list[Triple]:
    """``aggregation``: the rule started from and the outcome it gives over ``determinations``."""
    node, result = _n(iri), _n(f"{iri}/result")
    out = [Triple(node, _TYPE, _n(EPO + "Attestation")), Triple(node, _n(EPO + "inEvaluation"), _n(evaluation)),
           Triple(node, _n(EARL + "test"), _n(criterion)), Triple(node, _n(EARL + "subject"), _n(subject)),
           Triple(node, _n(EARL + "mode"), _n(EARL + "manual")), Triple(node, _n(EARL + "assertedBy"), _n(expert)),
           Triple(node, _n(PROV + "wasAttributedTo"), _n(expert)), Triple(node, _n(EARL + "result"), result),
           Triple(node, _n(EPO + "aggregationRule"), _n(aggregation[0])),
           Triple(node, _n(EPO + "aggregatedOutcome"), _n(aggregation[1])),
           Triple(node, _n(EPO + "evidenceSufficiency"), _n(sufficiency)),
           Triple(node, _n(EPO + "testAppropriateness"), _n(appropriateness)),
           Triple(node, _n(PROV + "generatedAtTime"), _time(at)),
           Triple(result, _TYPE, _n(EARL + "TestResult")), Triple(result, _n(EARL + "outcome"), _n(outcome)),
           Triple(result, _n(EARL + "info"), Literal(rationale))]
    out += [Triple(node, _n(EPO + "aggregates"), _n(d)) for d in determinations]
    if supersedes is not None:
        out += [Triple(node, _n(EPO + "supersedes"), _n(supersedes)),
                Triple(node, _n(EPO + "supersessionReason"), Literal(reason or ""))]
    return out


def judge_failure_triples(iri: str, evaluation: str, case: str, turn: int, criterion: str, judge_iri: str,
                          message: str, answer: str | None, at: datetime) -> list[Triple]:
    """An automated judge's failure to determine on the reply to ``turn`` against ``criterion``: an execution error
    of kind ``epo:JudgeFailure`` (``{batch}/errors/{k}``), derived from the response and the criterion, attributed
    to the judge, with what it answered (``prov:value``) when it answered something unreadable::

        <e> a epo:ExecutionError ; epo:errorKind epo:JudgeFailure ; epo:errorMessage "…" ;
            epo:errorIn <case/turns/1> ; prov:wasDerivedFrom <case/responses/1> , <criterion> ;
            prov:wasAttributedTo <judge> ; prov:value "what the judge answered" .
    """
    node = _n(iri)
    out = [Triple(node, _TYPE, _n(EPO + "ExecutionError")), Triple(node, _n(EPO + "inEvaluation"), _n(evaluation)),
           Triple(node, _n(EPO + "errorKind"), _n(EPO + "JudgeFailure")),
           Triple(node, _n(EPO + "errorMessage"), Literal(message)),
           Triple(node, _n(EPO + "errorIn"), _n(f"{case}/turns/{turn}")),
           Triple(node, _n(PROV + "wasDerivedFrom"), _n(f"{case}/responses/{turn}")),
           Triple(node, _n(PROV + "wasDerivedFrom"), _n(criterion)),
           Triple(node, _n(PROV + "wasAttributedTo"), _n(judge_iri)),
           Triple(node, _n(PROV + "generatedAtTime"), _time(at))]
    if answer is not None:
        out.append(Triple(node, _n(PROV + "value"), Literal(answer)))
    return out


def judge_configuration_triples(judge_iri: str, configuration: str, digest: str) -> list[Triple]:
    """A model judge's whole configuration (its target version and prompt template, as canonical JSON) and the
    configuration's SHA-256, so that what produced a determination can be read back and compared."""
    node = _n(judge_iri)
    return [Triple(node, _n(EPO + "configuration"), Literal(configuration)),
            Triple(node, _n(EPO + "configurationDigest"), Literal(digest))]
