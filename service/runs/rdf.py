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

A retry (:mod:`.retries`) is the graph ``{run}/retries/{k}``: who asked, when, with which settings. Each probe it
sends again gets a new attempt, a case graph like any other, ``{run}/cases/{probe number}/attempts/{k}``, whose
conversation also says which attempt it is, the case it retries and the retry that ran it::

    <run/retries/1> a epo:Retry ; epo:retriedRun <run> ; prov:wasAssociatedWith <agent> ; prov:startedAtTime … .
    <case/attempts/2> a epo:Conversation ; epo:inRun <run> ; epo:realizesProbe <probe> ; epo:attemptNumber 2 ;
        epo:retries <case> ; epo:inRetry <run/retries/1> .
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from decimal import Decimal

from pyoxigraph import Literal, NamedNode, Triple

from ..core.iris import minted_number
from ..core.namespaces import DCTERMS, EPO, PROV, RDF, RDFS, XSD
from ..core.rdf import RDF_TYPE, date_time, integer
from .model import CaseTrace, Exchange, ExecutionError, ExecutionSettings, TargetVersion

ERROR_KINDS = {
    "timeout": EPO + "Timeout",
    "http_status": EPO + "TargetHttpError",
    "malformed": EPO + "MalformedResponse",
    "unreachable": EPO + "TargetUnreachable",
    "reported": EPO + "ReportedFailure",
}
"""An :class:`~.model.ExecutionError`'s kind as the EPO names it."""

# The terms a case graph uses, made once: a run builds thousands of case graphs.
_CONVERSATION = NamedNode(EPO + "Conversation")
_ERROR_IN = NamedNode(EPO + "errorIn")
_ERROR_KIND = NamedNode(EPO + "errorKind")
_ERROR_MESSAGE = NamedNode(EPO + "errorMessage")
_EXECUTION_ERROR = NamedNode(EPO + "ExecutionError")
_FINISH_REASON = NamedNode(EPO + "finishReason")
_HTTP_STATUS = NamedNode(EPO + "httpStatus")
_INPUT_TEXT = NamedNode(EPO + "inputText")
_IN_CONVERSATION = NamedNode(EPO + "inConversation")
_IN_RUN = NamedNode(EPO + "inRun")
_LATENCY_SECONDS = NamedNode(EPO + "latencySeconds")
_PROV_ENDED_AT_TIME = NamedNode(PROV + "endedAtTime")
_PROV_GENERATED_AT_TIME = NamedNode(PROV + "generatedAtTime")
_PROV_STARTED_AT_TIME = NamedNode(PROV + "startedAtTime")
_PROV_WAS_GENERATED_BY = NamedNode(PROV + "wasGeneratedBy")
_PROV_WAS_ASSOCIATED_WITH = NamedNode(PROV + "wasAssociatedWith")
_REALIZES_PROBE = NamedNode(EPO + "realizesProbe")
_REQUEST_ATTEMPTS = NamedNode(EPO + "requestAttempts")
_RESPONSE = NamedNode(EPO + "Response")
_RESPONSE_TEXT = NamedNode(EPO + "responseText")
_TARGET_FINGERPRINT = NamedNode(EPO + "targetFingerprint")
_TRACE = NamedNode(EPO + "Trace")
_TRACE_OF = NamedNode(EPO + "traceOf")
_TURN = NamedNode(EPO + "Turn")
_TURN_COUNT = NamedNode(EPO + "turnCount")
_TURN_INDEX = NamedNode(EPO + "turnIndex")
_TOKENS = tuple(NamedNode(EPO + name) for name in ("promptTokens", "completionTokens", "totalTokens"))
_DECIMAL = NamedNode(XSD + "decimal")


def settings_json(settings: ExecutionSettings | None) -> str:
    """The settings as canonical JSON; ``{}`` for an imported run, whose requests the service did not make."""
    return json.dumps(asdict(settings) if settings else {}, sort_keys=True, separators=(",", ":"))


def run_triples(
    run: str,
    evaluation: str,
    plan: str,
    plan_digest: str,
    version: TargetVersion,
    settings: ExecutionSettings | None,
    agent: str,
    started: datetime,
) -> list[Triple]:
    """The run's own graph: what it executes, against which target version, how (``None``: imported, not
    executed here), by whom and since when."""
    node = NamedNode(run)
    facts: list[tuple[str, NamedNode | Literal]] = [
        (RDF + "type", NamedNode(EPO + "Run")),
        (
            RDFS + "label",
            Literal(f"run of plans {minted_number(plan)} against {version.system} {version.model_release}"),
        ),
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
    return [
        Triple(NamedNode(run), NamedNode(EPO + "importedFrom"), node),
        Triple(node, RDF_TYPE, NamedNode(PROV + "Entity")),
        Triple(node, NamedNode(RDFS + "label"), Literal(source.label)),
        Triple(node, NamedNode(DCTERMS + "format"), Literal(source.media_type)),
        Triple(node, NamedNode(EPO + "digest"), Literal(source.digest)),
    ]


def retry_triples(retry: str, run: str, settings: ExecutionSettings, agent: str, started: datetime) -> list[Triple]:
    """A retry's own graph: the run whose errors it sends again, how, by whom and since when."""
    node = NamedNode(retry)
    return [
        Triple(node, RDF_TYPE, NamedNode(EPO + "Retry")),
        Triple(node, NamedNode(EPO + "retriedRun"), NamedNode(run)),
        Triple(node, NamedNode(EPO + "executionSettings"), Literal(settings_json(settings))),
        Triple(node, _PROV_WAS_ASSOCIATED_WITH, NamedNode(agent)),
        Triple(node, _PROV_STARTED_AT_TIME, date_time(started)),
    ]


def attempt_triples(attempt: str, number: int, retried: str, retry: str) -> list[Triple]:
    """What a retried attempt's conversation says besides its case: which attempt it is, the case it retries (the
    probe's attempt before, ended in an execution error) and the retry that ran it."""
    node = NamedNode(attempt)
    return [
        Triple(node, NamedNode(EPO + "attemptNumber"), integer(number)),
        Triple(node, NamedNode(EPO + "retries"), NamedNode(retried)),
        Triple(node, NamedNode(EPO + "inRetry"), NamedNode(retry)),
    ]


def case_triples(case: str, run: str, result: CaseTrace | ExecutionError) -> list[Triple]:
    """One probe's case graph: the conversation, its turns and responses, and its trace or its error. An error
    keeps the turns answered before it (their texts; the executor keeps no timing for them) and names the
    turn that failed."""
    node = NamedNode(case)
    out = [
        Triple(node, RDF_TYPE, _CONVERSATION),
        Triple(node, _IN_RUN, NamedNode(run)),
        Triple(node, _REALIZES_PROBE, NamedNode(result.probe)),
    ]
    sent = [t.text for t in result.turns if t.role == "user"]
    if isinstance(result, CaseTrace):
        for index, (text, exchange) in enumerate(zip(sent, result.exchanges), start=1):
            out += _turn(case, index, text, exchange.text) + _timing(case, index, exchange)
        trace = NamedNode(f"{case}/trace")
        return out + [
            Triple(node, _PROV_STARTED_AT_TIME, date_time(result.started)),
            Triple(node, _PROV_ENDED_AT_TIME, date_time(result.ended)),
            Triple(trace, RDF_TYPE, _TRACE),
            Triple(trace, _TRACE_OF, node),
            Triple(trace, _TURN_COUNT, integer(len(result.exchanges))),
            Triple(trace, _TARGET_FINGERPRINT, Literal(result.target)),
        ]
    replies = [t.text for t in result.turns if t.role == "assistant"]
    for index, (text, reply) in enumerate(zip(sent, replies), start=1):
        out += _turn(case, index, text, reply)
    return out + _error_triples(case, result)


def _turn(case: str, index: int, text: str, reply: str) -> list[Triple]:
    turn, response = NamedNode(f"{case}/turns/{index}"), NamedNode(f"{case}/responses/{index}")
    return [
        Triple(turn, RDF_TYPE, _TURN),
        Triple(turn, _IN_CONVERSATION, NamedNode(case)),
        Triple(turn, _TURN_INDEX, integer(index)),
        Triple(turn, _INPUT_TEXT, Literal(text)),
        Triple(response, RDF_TYPE, _RESPONSE),
        Triple(response, _PROV_WAS_GENERATED_BY, turn),
        Triple(response, _RESPONSE_TEXT, Literal(reply)),
    ]


def _timing(case: str, index: int, exchange: Exchange) -> list[Triple]:
    turn, response = NamedNode(f"{case}/turns/{index}"), NamedNode(f"{case}/responses/{index}")
    latency = Literal(str(Decimal(str(round(exchange.latency_s, 6)))), datatype=_DECIMAL)
    ended = date_time(exchange.ended)
    out = [
        Triple(turn, _PROV_STARTED_AT_TIME, date_time(exchange.started)),
        Triple(turn, _PROV_ENDED_AT_TIME, ended),
        Triple(turn, _LATENCY_SECONDS, latency),
        Triple(turn, _REQUEST_ATTEMPTS, integer(exchange.attempts)),
        Triple(response, _PROV_GENERATED_AT_TIME, ended),
    ]
    if exchange.finish_reason:
        out.append(Triple(response, _FINISH_REASON, Literal(exchange.finish_reason)))
    usage = exchange.usage
    if usage is not None:
        for prop, count in zip(_TOKENS, (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens)):
            if count is not None:
                out.append(Triple(turn, prop, integer(count)))
    return out


def _error_triples(case: str, error: ExecutionError) -> list[Triple]:
    node, failed = NamedNode(f"{case}/error"), NamedNode(f"{case}/turns/{error.turn}")
    out = [
        Triple(node, RDF_TYPE, _EXECUTION_ERROR),
        Triple(node, _ERROR_KIND, NamedNode(ERROR_KINDS[error.kind])),
        Triple(node, _ERROR_MESSAGE, Literal(error.message)),
        Triple(node, _ERROR_IN, failed),
        Triple(node, _REQUEST_ATTEMPTS, integer(error.attempts)),
        Triple(node, _TARGET_FINGERPRINT, Literal(error.target)),
        Triple(failed, RDF_TYPE, _TURN),
        Triple(failed, _IN_CONVERSATION, NamedNode(case)),
        Triple(failed, _TURN_INDEX, integer(error.turn)),
    ]
    if error.status is not None:
        out.append(Triple(node, _HTTP_STATUS, integer(error.status)))
    return out
