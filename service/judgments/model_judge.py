"""A model judge (issue 10 §4): a model behind the OpenAI-compatible adapter asked, reply by reply, whether the
reply meets a criterion, through a versioned prompt template; docs/judgments.md.

The model must answer one strict JSON object, ``{"outcome", "rationale", "quote"}`` and nothing else; the quote,
when not empty, must be text of the reply and becomes the determination's pointer. Anything else (prose, a code
fence, another field, an outcome outside EARL's, a quote the reply does not hold) and any request that brings no
answer is a :class:`~.records.JudgeFailure`, an execution error recorded in the same batch, never a
determination. The judge is a ``prov:SoftwareAgent`` whose IRI names the model at its endpoint and whose version
names the model release, the prompt's version and digest and the whole configuration's digest (the target
version, temperature 0 among its parameters, and the prompt template), recorded on it as ``epo:configuration``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from string import Template
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from rdflib.term import Identifier

from ..core.auth import require
from ..core.config import Credential
from ..core.errors import Unprocessable
from ..core.graphs import GraphService
from ..core.iris import minted_number
from ..core.namespaces import EARL
from ..core.roles import EVALUATION_OPERATOR
from ..credentials.signing import Signer
from ..envelope import envelope_at, get_evaluation
from ..envelope.inputs import current_inputs
from ..plan.records import plan_view
from ..runs.model import Turn
from ..runs.records import plan_probes, run_view
from ..runs.targets import MissingCredential, OpenAICompatible, TargetFailure
from . import rdf
from .automated import judging_rules, probe_contexts
from .expected import describe, expected_rows
from .model import AUTOMATIC, Determination, Judge, JudgingRule, Pointer, ProbeContext
from .records import JudgeFailure, answered_cases, plan_criteria, record_judgments

PROMPT_VERSION = "2"
PROMPT = Template("""You judge one reply of a chatbot against one acceptance criterion.

Criterion: $criterion
Expected result: $expected

What the reference knowledge says for this conversation, derived before judging from the domain ontology, the
country's knowledge graph and the scenario's facts (what applies to this user and the person asked about):
<<<
$reference
>>>

The whole conversation:
<<<
$conversation
>>>

The user wrote:
<<<
$question
>>>

The chatbot replied:
<<<
$reply
>>>

Answer with one JSON object and nothing else (no code fence, no other text):
{"outcome": "passed" | "failed" | "cantTell" | "inapplicable", "rationale": "...", "quote": "..."}
- outcome: passed if the reply meets the criterion and agrees with the reference knowledge, failed if it does
  not (what it leaves out counts), cantTell if the reply does not let you decide, inapplicable if the criterion
  does not concern what the user wrote;
- rationale: one sentence saying why, that a reader can check against the reply;
- quote: the text of the reply your outcome rests on, copied exactly, or "" when it rests on something the
  reply lacks.
""")
PROMPT_DIGEST = hashlib.sha256(PROMPT.template.encode("utf-8")).hexdigest()
"""The template's SHA-256: another wording is another judge version, whatever :data:`PROMPT_VERSION` says."""
CONCURRENCY = 4
"""Requests to the judge's model in flight at once."""


class Verdict(BaseModel):
    """What the model must answer, exactly: these three fields and no other, each a string."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    outcome: Literal["passed", "failed", "cantTell", "inapplicable"]
    rationale: str
    quote: str

    @field_validator("rationale")
    @classmethod
    def _says_why(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the rationale is empty")
        return value


@dataclass(frozen=True)
class Question:
    """One reply to judge against one criterion: the reply to user turn ``turn`` of ``probe``'s case."""

    probe: str
    criterion: str
    statement: str
    turn: int
    asked: str
    reply: str
    expected: str = ""
    reference: str = ""
    conversation: str = ""


def read_verdict(answer: str, reply: str, turn: int) -> tuple[str, str, Pointer | None]:
    """The outcome IRI, rationale and pointer the model's ``answer`` gives on ``reply``; ``ValueError`` naming
    every problem when the answer is not exactly a :class:`Verdict` whose quote is text of the reply."""
    try:
        verdict = Verdict.model_validate_json(answer)
    except ValidationError as error:
        problems = [f"{'.'.join(str(part) for part in e['loc']) or 'the answer'}: {e['msg']}" for e in error.errors()]
        raise ValueError("; ".join(problems)) from None
    pointer = None
    if verdict.quote:
        start = reply.find(verdict.quote)
        if start < 0:
            raise ValueError(f"quote: {verdict.quote[:120]!r} is not text of the reply")
        pointer = Pointer(turn, start, start + len(verdict.quote))
    return EARL + verdict.outcome, verdict.rationale, pointer


def describe_judge(graphs: GraphService, target: OpenAICompatible) -> tuple[Judge, str]:
    """The judge ``target`` is with this module's prompt, and its configuration as canonical JSON."""
    version = target.version
    configuration = json.dumps(
        {
            "target": json.loads(version.canonical()),
            "prompt": {"version": PROMPT_VERSION, "sha256": PROMPT_DIGEST, "template": PROMPT.template},
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    identity = hashlib.sha256(f"{version.endpoint} {version.model_release}".encode()).hexdigest()[:16]
    judge = Judge(
        f"{graphs.agent_iri('model-judges')}/{identity}",
        "model",
        f"model judge {version.model_release} at {version.endpoint}",
        f"{version.model_release}; prompt {PROMPT_VERSION} sha256:{PROMPT_DIGEST[:16]}; "
        f"configuration sha256:{_sha256(configuration)[:16]}",
    )
    return judge, configuration


def judge_run_with_model(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    target: OpenAICompatible,
    criteria_ids: Sequence[str],
    credential: Credential | None,
    signer: Signer | None = None,
) -> tuple[list[str], list[str]]:
    """Ask ``target`` about every reply of run ``run_number``'s answered cases whose probe exercises one of
    ``criteria_ids``; record its determinations and its failures as one batch and return both lists of IRIs.
    403 unless an evaluation operator; 422 for a temperature other than 0, an unknown criterion, nothing to judge
    or a key the service does not have. Runs its own event loop: call it from a thread without one."""
    agent = require(credential, EVALUATION_OPERATOR)
    temperature = target.version.parameters.get("temperature")
    if isinstance(temperature, bool) or temperature != 0:
        raise Unprocessable(
            f"a model judge asks at temperature 0, so that its determinations can be repeated, not {temperature!r}"
        )
    run = run_view(graphs, evaluation_id, run_number)
    statements = _statements(graphs, evaluation_id, run.plan, criteria_ids)
    cases = answered_cases(graphs, run.iri)
    contexts = probe_contexts(graphs, evaluation_id, run.plan, set(cases))
    rules = judging_rules(graphs, current_inputs(graphs, get_evaluation(graphs, evaluation_id).scope).dso.iri)
    questions = [
        Question(
            probe.iri,
            criterion,
            statement,
            turn,
            asked,
            reply,
            expected,
            reference(contexts[probe.iri], criterion, rules),
            _conversation(cases[probe.iri].turns),
        )
        for probe in plan_probes(graphs, evaluation_id, run.plan)
        if probe.iri in cases
        for criterion, (statement, expected) in statements.items()
        if criterion in probe.exercises
        for turn, (asked, reply) in enumerate(cases[probe.iri].turns, start=1)
    ]
    if not questions:
        raise Unprocessable(f"run {run_number} has no answered case of a probe exercising {', '.join(criteria_ids)}")
    judge, configuration = describe_judge(graphs, target)
    try:
        determinations, failures = asyncio.run(_ask_all(target, judge, questions))
    except MissingCredential as error:
        raise Unprocessable(f"the model judge's key: {error}") from None
    return record_judgments(
        graphs,
        evaluation_id,
        run_number,
        determinations,
        failures,
        agent,
        judges_described=rdf.judge_configuration_triples(judge.iri, configuration, _sha256(configuration)),
        signer=signer,  # the batch signed by the model judge's own key
    )


def reference(context: ProbeContext, criterion: str, rules: Sequence[JudgingRule]) -> str:
    """What the graph says for this probe and criterion: its scenario facts and the rows of the criterion's rules'
    ``epo:expectedFacts`` queries (the rule judges' reference, :mod:`.expected`)."""
    lines = [
        f"scenario fact: {prop} = {value}"
        for prop, values in sorted(context.facts.items())
        for value in sorted(v for v in values if isinstance(v, Identifier))
    ]
    for rule in rules:
        if context.criteria.get(rule.criterion_id) == criterion and rule.expected_facts:
            rows = describe(expected_rows(rule, context))
            lines.append(f"{rule.judge.name}: {rows or 'nothing applies to this probe'}")
    return "\n".join(lines) or "(nothing derived for this probe)"


def _conversation(turns: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"User: {asked}\nChatbot: {reply}" for asked, reply in turns)


def _statements(
    graphs: GraphService, evaluation_id: str, plan: str, criteria_ids: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """Criterion IRI to its statement and expected result in the envelope version the plan was made on, for each
    identifier; 422 naming those the plan does not test."""
    tested = plan_criteria(graphs, plan).by_identifier()
    unknown = [given for given in criteria_ids if given not in tested]
    if unknown or not criteria_ids:
        named = f"no criterion {', '.join(map(repr, unknown))} in the run's plan" if unknown else "name the criteria"
        raise Unprocessable(f"{named}: it tests {', '.join(sorted(tested))}")
    envelope_iri = plan_view(graphs, evaluation_id, minted_number(plan)).envelope
    content = envelope_at(graphs, evaluation_id, int(envelope_iri.rsplit("/v", 1)[-1]))[0].content
    statements = {}
    for given in dict.fromkeys(criteria_ids):
        criterion = content.criterion(given)
        assert criterion is not None, f"the plan's envelope has no criterion {given}"
        statements[tested[given]] = (criterion.statement, criterion.expected_result or "(none stated)")
    return statements


async def _ask_all(
    target: OpenAICompatible, judge: Judge, questions: Sequence[Question]
) -> tuple[list[Determination], list[JudgeFailure]]:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def ask(question: Question) -> Determination | JudgeFailure:
        async with gate:
            return await _ask(target, judge, question)

    try:  # every request ends before the client closes, even when one raised (a missing key)
        results = await asyncio.gather(*(ask(question) for question in questions), return_exceptions=True)
    finally:
        await target.aclose()
    raised = next((r for r in results if isinstance(r, BaseException)), None)
    if raised is not None:
        raise raised
    return ([r for r in results if isinstance(r, Determination)], [r for r in results if isinstance(r, JudgeFailure)])


async def _ask(target: OpenAICompatible, judge: Judge, question: Question) -> Determination | JudgeFailure:
    prompt = PROMPT.substitute(
        criterion=question.statement,
        expected=question.expected,
        reference=question.reference,
        conversation=question.conversation,
        question=question.asked,
        reply=question.reply,
    )
    try:
        exchange = await target.reply([Turn("user", prompt)])
    except TargetFailure as failure:
        return JudgeFailure(
            question.probe,
            question.criterion,
            question.turn,
            judge,
            f"the model judge gave no answer ({failure.kind}): {failure.message}",
        )
    try:
        outcome, rationale, pointer = read_verdict(exchange.text, question.reply, question.turn)
    except ValueError as error:
        return JudgeFailure(
            question.probe,
            question.criterion,
            question.turn,
            judge,
            f"the model judge's answer is not a verdict: {error}",
            exchange.text,
        )
    return Determination(
        question.criterion, question.probe, question.turn, outcome, AUTOMATIC, judge, rationale, pointer
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
