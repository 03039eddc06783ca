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
from ..core.rdf import RDF_TYPE, date_time, integer
from .model import CaseTrace, Exchange, ExecutionError, ExecutionSettings, TargetVersion

ERROR_KINDS = {"timeout": EPO + "Timeout", "http_status": EPO + "TargetHttpError",
               "malformed": EPO + "MalformedResponse", "unreachable": EPO + "TargetUnreachable",
               "reported": EPO + "ReportedFailure"}
"""An :class:`~.model.ExecutionError`'s kind as the EPO names it."""







def settings_json(settings: ExecutionSettings | None) -> str:
    """The settings as canonical JSON; ``{}`` for an imported run, whose requests the service did not make."""
    return json.dumps(asdict(settings) if settings else {}, sort_keys=True, separators=(",", ":"))


def run_triples(run: str, evaluation: str, plan: str, plan_digest: str, version: TargetVersion,
                settings: ExecutionSettings | None, agent: str, started: datetime) -> list[Triple]:
    """The run's own graph: what it executes, against which target version, how (``None``: imported, not
    executed here), by whom and since when."""
    node = NamedNode(run)
    facts: list[tuple[str, NamedNode | Literal]] = [
        (RDF + "type", NamedNode(EPO + "Run")),
        (RDFS + "label", Literal(f"run of {plan.rsplit('/', 2)[-2]} {plan.rsplit('/', 1)[-1]} against "
                                f"{version.system} {version.model_release}")),
        (EPO + "inEvaluation", NamedNode(evaluation)),
        (EPO + "executesPlan", NamedNode(plan)),
        (EPO + "planDigest", Literal(plan_digest)),
        (EPO + "targetFingerprint", Literal(version.fingerprint)),
        (EPO + "targetConfiguration", Literal(version.canonical())),
        (EPO + "executionSettings", Literal(settings_json(settings))),
        (PROV + "wasAssociatedWith", NamedNode(agent)),
        (PROV + "startedAtTime", date_time(started)),
    ]
    return [Triple(node, NamedNode(p), o) for p, o in facts]


@dataclass(frozen=True)
class ImportSource:
    """The file an imported run's responses came from: what it is (``"Inspect AI eval log"``), its media type
    and the SHA-256 of its bytes (lowercase hex), so that the very file can be recognised later."""

    label: str
    media_type: str
    digest: str


def source_triples(run: str, source: ImportSource) -> list[Triple]:
    """``epo:importedFrom``, an object property: the file is the entity ``{run}/source``."""
    node = NamedNode(f"{run}/source")
    return [Triple(NamedNode(run), NamedNode(EPO + "importedFrom"), node), Triple(node, RDF_TYPE, NamedNode(PROV + "Entity")),
            Triple(node, NamedNode(RDFS + "label"), Literal(source.label)),
            Triple(node, NamedNode(DCTERMS + "format"), Literal(source.media_type)),
            Triple(node, NamedNode(EPO + "digest"), Literal(source.digest))]


def case_triples(case: str, run: str, result: CaseTrace | ExecutionError) -> list[Triple]:
    """One probe's case graph: the conversation, its turns and responses, and its trace or its error. An error
    keeps the turns answered before it (their texts; the executor keeps no timing for them) and names the
    turn that failed."""
    node = NamedNode(case)
    out = [Triple(node, RDF_TYPE, NamedNode(EPO + "Conversation")), Triple(node, NamedNode(EPO + "inRun"), NamedNode(run)),
           Triple(node, NamedNode(EPO + "realizesProbe"), NamedNode(result.probe))]
    sent = [t.text for t in result.turns if t.role == "user"]
    if isinstance(result, CaseTrace):
        for index, (text, exchange) in enumerate(zip(sent, result.exchanges), start=1):
            out += _turn(case, index, text, exchange.text) + _timing(case, index, exchange)
        trace = NamedNode(f"{case}/trace")
        return out + [Triple(node, NamedNode(PROV + "startedAtTime"), date_time(result.started)),
                      Triple(node, NamedNode(PROV + "endedAtTime"), date_time(result.ended)),
                      Triple(trace, RDF_TYPE, NamedNode(EPO + "Trace")), Triple(trace, NamedNode(EPO + "traceOf"), node),
                      Triple(trace, NamedNode(EPO + "turnCount"), integer(len(result.exchanges))),
                      Triple(trace, NamedNode(EPO + "targetFingerprint"), Literal(result.target))]
    replies = [t.text for t in result.turns if t.role == "assistant"]
    for index, (text, reply) in enumerate(zip(sent, replies), start=1):
        out += _turn(case, index, text, reply)
    return out + _error_triples(case, result)


def _turn(case: str, index: int, text: str, reply: str) -> list[Triple]:
    turn, response = NamedNode(f"{case}/turns/{index}"), NamedNode(f"{case}/responses/{index}")
    return [Triple(turn, RDF_TYPE, NamedNode(EPO + "Turn")), Triple(turn, NamedNode(EPO + "inConversation"), NamedNode(case)),
            Triple(turn, NamedNode(EPO + "turnIndex"), integer(index)), Triple(turn, NamedNode(EPO + "inputText"), Literal(text)),
            Triple(response, RDF_TYPE, NamedNode(EPO + "Response")), Triple(response, NamedNode(PROV + "wasGeneratedBy"), turn),
            Triple(response, NamedNode(EPO + "responseText"), Literal(reply))]


def _timing(case: str, index: int, exchange: Exchange) -> list[Triple]:
    turn, response = NamedNode(f"{case}/turns/{index}"), NamedNode(f"{case}/responses/{index}")
    latency = Literal(str(Decimal(str(round(exchange.latency_s, 6)))), datatype=NamedNode(XSD + "decimal"))
    out = [Triple(turn, NamedNode(PROV + "startedAtTime"), date_time(exchange.started)),
           Triple(turn, NamedNode(PROV + "endedAtTime"), date_time(exchange.ended)),
           Triple(turn, NamedNode(EPO + "latencySeconds"), latency),
           Triple(turn, NamedNode(EPO + "requestAttempts"), integer(exchange.attempts)),
           Triple(response, NamedNode(PROV + "generatedAtTime"), date_time(exchange.ended))]
    if exchange.finish_reason:
        out.append(Triple(response, NamedNode(EPO + "finishReason"), Literal(exchange.finish_reason)))
    usage = exchange.usage
    if usage is not None:
        for prop, count in (("promptTokens", usage.prompt_tokens), ("completionTokens", usage.completion_tokens),
                            ("totalTokens", usage.total_tokens)):
            if count is not None:
                out.append(Triple(turn, NamedNode(EPO + prop), integer(count)))
    return out


def _error_triples(case: str, error: ExecutionError) -> list[Triple]:
    node, failed = NamedNode(f"{case}/error"), NamedNode(f"{case}/turns/{error.turn}")
    out = [Triple(node, RDF_TYPE, NamedNode(EPO + "ExecutionError")), Triple(node, NamedNode(EPO + "errorKind"), NamedNode(ERROR_KINDS[error.kind])),
           Triple(node, NamedNode(EPO + "errorMessage"), Literal(error.message)), Triple(node, NamedNode(EPO + "errorIn"), failed),
           Triple(node, NamedNode(EPO + "requestAttempts"), integer(error.attempts)),
           Triple(node, NamedNode(EPO + "targetFingerprint"), Literal(error.target)),
           Triple(failed, RDF_TYPE, NamedNode(EPO + "Turn")), Triple(failed, NamedNode(EPO + "inConversation"), NamedNode(case)),
           Triple(failed, NamedNode(EPO + "turnIndex"), integer(error.turn))]
    if error.status is not None:
        out.append(Triple(node, NamedNode(EPO + "httpStatus"), integer(error.status)))
    return out
