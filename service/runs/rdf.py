"""A run and its cases as RDF (EPO terms, PROV for who and when), as :mod:`.records` writes them.

A run is the graph ``{evaluation}/runs/{n}``: the plan it executes (and the digest it was approved with), the
target version it is pinned to (``epo:targetConfiguration``, canonical JSON without secrets, and its
``epo:targetFingerprint``), the execution settings, who started it and when; an imported run also what its
responses came from (``epo:importedFrom`` ``{run}/source``: the uploaded file's kind, media type and digest).
Each probe's case is a graph of its own, ``{run}/cases/{probe number}``, named like the conversation it
records: one graph per probe and run is what makes a resumed or shared run record nothing twice (a second
write of the same case finds its graph taken). A case holds the conversation, its turns (input text, timing,
latency, attempts, tokens) and responses, and either a trace (answered to the end) or an execution error
(kind, message, attempts, the turn that failed), never both::

    <case> a epo:Conversation ; epo:inRun <run> ; epo:realizesProbe <probe> ; prov:startedAtTime … .
    <case/turns/1> a epo:Turn ; epo:inConversation <case> ; epo:turnIndex 1 ; epo:inputText "…" ; …
    <case/responses/1> a epo:Response ; prov:wasGeneratedBy <case/turns/1> ; epo:responseText "…" ; …
    <case/trace> a epo:Trace ; epo:traceOf <case> ; epo:turnCount 1 ; epo:targetFingerprint "sha256:…" .
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from decimal import Decimal

from pyoxigraph import Literal, NamedNode, Triple

from ..core.namespaces import DCTERMS, EPO, PROV, RDF, RDFS, XSD
from .model import CaseTrace, Exchange, ExecutionError, ExecutionSettings, TargetVersion

ERROR_KINDS = {"timeout": EPO + "Timeout", "http_status": EPO + "TargetHttpError",
               "malformed": EPO + "MalformedResponse", "unreachable": EPO + "TargetUnreachable",
               "reported": EPO + "ReportedFailure"}
"""An :class:`~.model.ExecutionError`'s kind as the EPO names it."""

_TYPE = NamedNode(RDF + "type")


def _n(value: str) -> NamedNode:
    return NamedNode(value)


def _int(value: int) -> Literal:
    return Literal(str(value), datatype=_n(XSD + "integer"))


def _time(value: datetime) -> Literal:
    return Literal(value.isoformat(), datatype=_n(XSD + "dateTime"))


def _text(value: str) -> Literal:
    return Literal(value)


def settings_json(settings: ExecutionSettings | None) -> str:
    """The settings as canonical JSON; ``{}`` for an imported run, whose requests the service did not make."""
    return json.dumps(asdict(settings) if settings else {}, sort_keys=True, separators=(",", ":"))


def run_triples(run: str, evaluation: str, plan: str, plan_digest: str, version: TargetVersion,
                settings: ExecutionSettings | None, agent: str, started: datetime) -> list[Triple]:
    """The run's own graph: what it executes, against which target version, how (``None``: imported, not
    executed here), by whom and since when."""
    node = _n(run)
    facts: list[tuple[str, NamedNode | Literal]] = [
        (RDF + "type", _n(EPO + "Run")),
        (RDFS + "label", _text(f"run of {plan.rsplit('/', 2)[-2]} {plan.rsplit('/', 1)[-1]} against "
                                f"{version.system} {version.model_release}")),
        (EPO + "inEvaluation", _n(evaluation)),
        (EPO + "executesPlan", _n(plan)),
        (EPO + "planDigest", _text(plan_digest)),
        (EPO + "targetFingerprint", _text(version.fingerprint)),
        (EPO + "targetConfiguration", _text(version.canonical())),
        (EPO + "executionSettings", _text(settings_json(settings))),
        (PROV + "wasAssociatedWith", _n(agent)),
        (PROV + "startedAtTime", _time(started)),
    ]
    return [Triple(node, _n(p), o) for p, o in facts]


@dataclass(frozen=True)
class ImportSource:
    """The file an imported run's responses came from: what it is (``"Inspect AI eval log"``), its media type
    and the SHA-256 of its bytes (lowercase hex), so that the very file can be recognised later."""

    label: str
    media_type: str
    digest: str


def source_triples(run: str, source: ImportSource) -> list[Triple]:
    """``epo:importedFrom``, an object property: the file is the entity ``{run}/source``."""
    node = _n(f"{run}/source")
    return [Triple(_n(run), _n(EPO + "importedFrom"), node), Triple(node, _TYPE, _n(PROV + "Entity")),
            Triple(node, _n(RDFS + "label"), _text(source.label)),
            Triple(node, _n(DCTERMS + "format"), _text(source.media_type)),
            Triple(node, _n(EPO + "digest"), _text(source.digest))]


def case_triples(case: str, run: str, result: CaseTrace | ExecutionError) -> list[Triple]:
    """One probe's case graph: the conversation, its turns and responses, and its trace or its error. An error
    keeps the turns answered before it (their texts; the executor keeps no timing for them) and names the
    turn that failed."""
    node = _n(case)
    out = [Triple(node, _TYPE, _n(EPO + "Conversation")), Triple(node, _n(EPO + "inRun"), _n(run)),
           Triple(node, _n(EPO + "realizesProbe"), _n(result.probe))]
    sent = [t.text for t in result.turns if t.role == "user"]
    if isinstance(result, CaseTrace):
        for index, (text, exchange) in enumerate(zip(sent, result.exchanges), start=1):
            out += _turn(case, index, text, exchange.text) + _timing(case, index, exchange)
        trace = _n(f"{case}/trace")
        return out + [Triple(node, _n(PROV + "startedAtTime"), _time(result.started)),
                      Triple(node, _n(PROV + "endedAtTime"), _time(result.ended)),
                      Triple(trace, _TYPE, _n(EPO + "Trace")), Triple(trace, _n(EPO + "traceOf"), node),
                      Triple(trace, _n(EPO + "turnCount"), _int(len(result.exchanges))),
                      Triple(trace, _n(EPO + "targetFingerprint"), _text(result.target))]
    replies = [t.text for t in result.turns if t.role == "assistant"]
    for index, (text, reply) in enumerate(zip(sent, replies), start=1):
        out += _turn(case, index, text, reply)
    return out + _error_triples(case, result)


def _turn(case: str, index: int, text: str, reply: str) -> list[Triple]:
    turn, response = _n(f"{case}/turns/{index}"), _n(f"{case}/responses/{index}")
    return [Triple(turn, _TYPE, _n(EPO + "Turn")), Triple(turn, _n(EPO + "inConversation"), _n(case)),
            Triple(turn, _n(EPO + "turnIndex"), _int(index)), Triple(turn, _n(EPO + "inputText"), _text(text)),
            Triple(response, _TYPE, _n(EPO + "Response")), Triple(response, _n(PROV + "wasGeneratedBy"), turn),
            Triple(response, _n(EPO + "responseText"), _text(reply))]


def _timing(case: str, index: int, exchange: Exchange) -> list[Triple]:
    turn, response = _n(f"{case}/turns/{index}"), _n(f"{case}/responses/{index}")
    latency = Literal(str(Decimal(str(round(exchange.latency_s, 6)))), datatype=_n(XSD + "decimal"))
    out = [Triple(turn, _n(PROV + "startedAtTime"), _time(exchange.started)),
           Triple(turn, _n(PROV + "endedAtTime"), _time(exchange.ended)),
           Triple(turn, _n(EPO + "latencySeconds"), latency),
           Triple(turn, _n(EPO + "requestAttempts"), _int(exchange.attempts)),
           Triple(response, _n(PROV + "generatedAtTime"), _time(exchange.ended))]
    if exchange.finish_reason:
        out.append(Triple(response, _n(EPO + "finishReason"), _text(exchange.finish_reason)))
    usage = exchange.usage
    if usage is not None:
        for prop, count in (("promptTokens", usage.prompt_tokens), ("completionTokens", usage.completion_tokens),
                            ("totalTokens", usage.total_tokens)):
            if count is not None:
                out.append(Triple(turn, _n(EPO + prop), _int(count)))
    return out


def _error_triples(case: str, error: ExecutionError) -> list[Triple]:
    node, failed = _n(f"{case}/error"), _n(f"{case}/turns/{error.turn}")
    out = [Triple(node, _TYPE, _n(EPO + "ExecutionError")), Triple(node, _n(EPO + "errorKind"), _n(ERROR_KINDS[error.kind])),
           Triple(node, _n(EPO + "errorMessage"), _text(error.message)), Triple(node, _n(EPO + "errorIn"), failed),
           Triple(node, _n(EPO + "requestAttempts"), _int(error.attempts)),
           Triple(node, _n(EPO + "targetFingerprint"), _text(error.target)),
           Triple(failed, _TYPE, _n(EPO + "Turn")), Triple(failed, _n(EPO + "inConversation"), _n(case)),
           Triple(failed, _n(EPO + "turnIndex"), _int(error.turn))]
    if error.status is not None:
        out.append(Triple(node, _n(EPO + "httpStatus"), _int(error.status)))
    return out
