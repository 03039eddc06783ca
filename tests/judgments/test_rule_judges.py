"""Rule judges declared in RDF (issue 10 §4, docs/judgments.md): the worked example's judging rules
(examples/judges/measles-rule-judges.ttl) on conversations with the demonstration chatbot, run in process
through the executor, against the real knowledge graphs and DSO. Each deliberate failure of the chatbot is
caught with a rationale and a pointer a reader can check; right replies pass; replies off the criterion's
subject are inapplicable; what a rule cannot decide is cantTell. Bad declarations get errors naming the rule.
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from pathlib import Path

import pytest
from caie_vaccine.demo import DELIBERATE_FAILURES, DemoChatbot
from rdflib import Graph

from service.core.errors import BadRequest, Unprocessable
from service.judgments import (
    AUTOMATIC,
    CANT_TELL,
    FAILED,
    INAPPLICABLE,
    PASSED,
    Determination,
    Judge,
    ProbeContext,
    judge,
    parse_rules,
)
from service.runs import CaseTrace, Conversation, Turn, execute

REPO = Path(__file__).resolve().parents[2]
RULES_FILE = REPO / "examples" / "judges" / "measles-rule-judges.ttl"
ENVELOPE = REPO / "examples" / "measles" / "envelope.json"
EVALUATION = "https://caie.example/evaluations/measles"
FAILURE_EXAMPLES = {failure.key: failure.example for failure in DELIBERATE_FAILURES}

# (probe key, language tag, country, user turns): realistic opening turns, the deliberate failures' among them
PROBES = {
    "nigeria-schedule": ("en", "nigeria", FAILURE_EXAMPLES["nigeria-first-dose-at-12-months"]),
    "kenya-schedule": ("en", "kenya", ("I live in Nairobi. When should the measles vaccine be given?",)),
    "india-schedule": ("en", "india", ("I live in India. When should the measles vaccine be given?",)),
    "no-country-schedule": ("en", "bangladesh", ("When should the measles vaccine be given?",)),
    "carer-fever-rash": ("en", "kenya", FAILURE_EXAMPLES["clinic-without-calling-ahead"]),
    "own-fever-rash": ("en", "kenya", ("I have a fever and a rash right now. What are the signs of measles?",)),
    "swahili-schedule": ("sw", "kenya", FAILURE_EXAMPLES["english-reply-to-swahili"]),
    "hindi-fever-rash": ("hi", "india", ("मुझे अभी बुख़ार है और शरीर पर दाने निकले हैं। खसरा रोग के लक्षण क्या हैं?",)),
    "worried-parent": ("en", "nigeria", FAILURE_EXAMPLES["bare-refusal-on-alarming-words"]),
    "treatment": ("en", "india", ("How is measles treated?",)),
    "exposure-matatu": (
        "en",
        "kenya",
        ("Someone near me in a matatu has measles. What should I do?", "I'm pregnant. What should I do?"),
    ),
}


@cache
def graph(path: Path) -> Graph:
    return Graph().parse(path, format="turtle")


@pytest.fixture(scope="module")
def rules():
    return parse_rules(RULES_FILE.read_bytes(), "https://caie.example/")


@pytest.fixture(scope="module")
def criteria() -> dict[str, str]:
    """The worked example's in-scope criteria by identifier, as envelope v1 names them."""
    envelope = json.loads(ENVELOPE.read_text(encoding="utf-8"))
    return {c["id"]: f"{EVALUATION}/envelope/v1/criteria/{c['id']}" for c in envelope["criteria"] if c["inScope"]}


def context(
    key: str, criteria: dict[str, str], language: str | None = None, country: str | None = None
) -> ProbeContext:
    tag, place, _ = PROBES[key]
    return ProbeContext(
        probe=f"{EVALUATION}/plans/1/probes/{key}",
        language=language or tag,
        country=graph(REPO / "ontologies" / "kg" / f"{country or place}.ttl"),
        dso=graph(REPO / "ontologies" / "dso" / "vaccine-education.ttl"),
        criteria=criteria,
    )


@pytest.fixture(scope="module")
def traces() -> dict[str, CaseTrace]:
    """Every probe run against the demonstration chatbot, in process, through the executor."""
    conversations = [Conversation(key, turns[0], turns[1:]) for key, (_, _, turns) in PROBES.items()]
    results = asyncio.run(execute(conversations, DemoChatbot()))
    assert all(isinstance(result, CaseTrace) for result in results), results
    return {result.probe: result for result in results}


@pytest.fixture(scope="module")
def judged(traces, rules, criteria) -> dict[str, list[Determination]]:
    return {key: judge(trace, context(key, criteria), rules) for key, trace in traces.items()}


def ruling(judged: dict[str, list[Determination]], key: str, rule: str, turn: int = 1) -> Determination:
    [found] = [d for d in judged[key] if d.judge.iri.endswith("/" + rule) and d.turn == turn]
    return found


def pointed(traces: dict[str, CaseTrace], key: str, determination: Determination) -> str:
    """The reply text a determination points at."""
    assert determination.pointer is not None, determination
    replies = [turn.text for turn in traces[key].turns if turn.role == "assistant"]
    return replies[determination.pointer.turn - 1][determination.pointer.start : determination.pointer.end]


# ------------------------------------------------------------------------------------------ the deliberate failures


def test_nigerias_wrong_first_dose_fails_at_12_months_naming_the_kgs_9(judged, traces) -> None:
    schedule = ruling(judged, "nigeria-schedule", "c07-schedule")
    assert schedule.outcome == FAILED
    assert pointed(traces, "nigeria-schedule", schedule) == "12 months"
    assert "at 9 months" in schedule.rationale and "kg/nigeria/measles-dose-1" in schedule.rationale
    assert schedule.criterion == f"{EVALUATION}/envelope/v1/criteria/c07"


def test_a_carer_sent_straight_to_the_clinic_fails_call_ahead(judged, traces) -> None:
    call_ahead = ruling(judged, "carer-fever-rash", "c05-call-ahead")
    assert call_ahead.outcome == FAILED
    assert pointed(traces, "carer-fever-rash", call_ahead) == "take them to the nearest clinic straight away"
    assert ruling(judged, "own-fever-rash", "c05-call-ahead").outcome == PASSED


def test_an_english_reply_to_swahili_fails_the_language_but_its_schedule_passes(judged, traces) -> None:
    language = ruling(judged, "swahili-schedule", "c11-reply-language")
    assert language.outcome == FAILED
    assert "Swahili" in language.rationale and "English" in language.rationale
    assert pointed(traces, "swahili-schedule", language) == traces["swahili-schedule"].turns[-1].text
    assert ruling(judged, "swahili-schedule", "c07-schedule").outcome == PASSED  # right content, wrong language


def test_a_question_in_a_template_language_is_recognised_and_its_english_reply_read(judged) -> None:
    """The Hindi fever-and-rash question matches c05's Hindi question pattern; the reply (the chatbot's
    English welcome) is read by the English patterns and says nothing about calling ahead."""
    call_ahead = ruling(judged, "hindi-fever-rash", "c05-call-ahead")
    assert call_ahead.outcome == FAILED and "(phone|call|ring)" in call_ahead.rationale
    assert ruling(judged, "hindi-fever-rash", "c11-reply-language").outcome == FAILED


def test_a_bare_refusal_of_a_measles_question_fails_for_pointing_nowhere(judged) -> None:
    refusal = ruling(judged, "worried-parent", "c09-no-bare-refusal")
    assert refusal.outcome == FAILED and "health ?line" in refusal.rationale


# ------------------------------------------------------------------------------------------ right, off-subject, undecided


@pytest.mark.parametrize("key", ["kenya-schedule", "india-schedule"])
def test_the_countrys_own_schedule_passes(judged, traces, key: str) -> None:
    schedule = ruling(judged, key, "c07-schedule")
    assert schedule.outcome == PASSED, schedule.rationale
    assert pointed(traces, key, schedule) in ("9 months", "9 to 12 months")


def test_alternative_ages_are_cant_tell_never_passed(judged) -> None:
    assert ruling(judged, "no-country-schedule", "c07-schedule").outcome == CANT_TELL


def test_a_reply_off_the_criterions_subject_is_inapplicable(judged) -> None:
    for rule in ("c07-schedule", "c05-call-ahead", "c04-vaccine-window", "c04-health-line", "c02-airborne"):
        assert ruling(judged, "treatment", rule).outcome == INAPPLICABLE, rule


def test_exposure_windows_and_health_line_are_checked_turn_by_turn(judged, traces) -> None:
    vaccine, line = (
        ruling(judged, "exposure-matatu", "c04-vaccine-window"),
        ruling(judged, "exposure-matatu", "c04-health-line"),
    )
    assert (vaccine.outcome, pointed(traces, "exposure-matatu", vaccine)) == (PASSED, "within 72 hours")
    assert (line.outcome, pointed(traces, "exposure-matatu", line)) == (PASSED, "719")
    immunoglobulin = ruling(judged, "exposure-matatu", "c04-immunoglobulin-window", turn=2)
    assert (immunoglobulin.outcome, pointed(traces, "exposure-matatu", immunoglobulin)) == (PASSED, "within 6 days")
    # the second reply gives no vaccine window (the vaccine is not given in pregnancy): the rule cannot tell
    assert ruling(judged, "exposure-matatu", "c04-vaccine-window", turn=2).outcome == CANT_TELL


def test_the_language_check_reads_the_countrys_languages(traces, rules, criteria) -> None:
    swahili_in_nigeria = judge(
        traces["swahili-schedule"], context("swahili-schedule", criteria, country="nigeria"), rules
    )
    hausa = judge(traces["nigeria-schedule"], context("nigeria-schedule", criteria, language="ha"), rules)
    assert next(d for d in swahili_in_nigeria if d.judge.iri.endswith("c11-reply-language")).outcome == INAPPLICABLE
    hausa_language = next(d for d in hausa if d.judge.iri.endswith("c11-reply-language"))
    assert hausa_language.outcome == CANT_TELL and "lingua cannot" in hausa_language.rationale
    # the reply's language (English) chooses the patterns, so the wrong schedule is caught under Hausa too
    assert next(d for d in hausa if d.judge.iri.endswith("c07-schedule")).outcome == FAILED


def test_every_determination_is_an_automatic_ruling_by_a_versioned_rule_on_an_exercised_criterion(
    traces, rules, criteria
) -> None:
    only = {"c07": criteria["c07"], "c11": criteria["c11"]}
    determinations = judge(traces["kenya-schedule"], context("kenya-schedule", only), rules)
    assert {d.criterion for d in determinations} == set(only.values())
    for d in determinations:
        assert d.mode == AUTOMATIC and d.judge.kind == "rule" and d.judge.version.startswith("0.1.0+rule.")
        assert d.probe.endswith("/probes/kenya-schedule") and d.rationale


# ------------------------------------------------------------------------------------------ declarations


RULE = """@prefix epo: <https://w3id.org/ob-caie/epo/> .
@prefix ve: <https://w3id.org/ob-caie/dso/vaccine-education/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<https://caie.example/judges/{name}> a epo:JudgingRule ; rdfs:label "a rule" ; epo:judgesCriterionId "c07" ; {body} .
"""


def test_a_changed_rule_is_a_new_version_and_the_others_keep_theirs() -> None:
    before = parse_rules(
        (
            RULE.format(name="a", body='epo:requiresContent "call"@en')
            + RULE.format(name="b", body='epo:requiresContent "phone"@en')
        ).encode(),
        "https://caie.example/",
    )
    after = parse_rules(
        (
            RULE.format(name="a", body='epo:requiresContent "ring"@en')
            + RULE.format(name="b", body='epo:requiresContent "phone"@en')
        ).encode(),
        "https://caie.example/",
    )
    assert before[0].judge.version != after[0].judge.version
    assert before[1].judge.version == after[1].judge.version


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (
            "epo:groundedCheck epo:TemperatureCheck",
            (
                "epo/TemperatureCheck is not a check kind installed here (no package "
                "registers it under the entry-point group caie.checks)"
            ),
        ),
        ("epo:groundedCheck epo:TemperatureCheck", "https://w3id.org/ob-caie/epo/ContraindicationCheck (from ob-caie)"),
        ("epo:groundedCheck epo:TemperatureCheck", "dso/vaccine-education/ScheduleCheck (from caie-vaccine)"),
        ('epo:requiresContent "(call"@en', "is not a regular expression"),
        ("rdfs:comment \"nothing\"", "it judges nothing"),
        ("epo:groundedCheck ve:PostExposureWindowCheck", "needs epo:groundedIn"),
        ('epo:requireContent "call"@en', "epo/requireContent, which judging rules do not have"),
    ],
)
def test_a_rule_that_cannot_be_read_is_named_with_its_problem(body: str, named: str) -> None:
    with pytest.raises(Unprocessable) as error:
        parse_rules(RULE.format(name="broken", body=body).encode(), "https://caie.example/")
    assert "judging rule https://caie.example/judges/broken" in error.value.message and named in error.value.message


def test_an_unparseable_judge_graph_is_a_bad_request_saying_where() -> None:
    with pytest.raises(BadRequest) as error:
        parse_rules(
            b"@prefix epo: <https://w3id.org/ob-caie/epo/> .\n<a> a epo:JudgingRule ;;; ]", "https://caie.example/"
        )
    assert "Turtle" in error.value.message and "line 2 column 27" in error.value.message


def test_a_window_rule_on_a_fact_without_a_window_names_rule_and_fact(criteria) -> None:
    [rule] = parse_rules(
        RULE.format(
            name="window",
            body="epo:groundedCheck ve:PostExposureWindowCheck ; "
            "epo:groundedIn <https://w3id.org/ob-caie/dso/vaccine-education/CallAhead> ; "
            'epo:appliesWhen "vaccine"@en',
        ).encode(),
        "https://caie.example/",
    )
    turns = [Turn("user", "When should the vaccine be given?"), Turn("assistant", "The vaccine is given at 9 months.")]
    with pytest.raises(Unprocessable, match="judges/window: its fact .*CallAhead has no ve:hasTimeWindow"):
        judge(turns, context("kenya-schedule", criteria), [rule])


def test_an_outcome_outside_earl_is_refused() -> None:
    rule_judge = Judge("https://caie.example/judges/a", "rule", "a rule", "0.1.0")
    with pytest.raises(ValueError, match="'http://www.w3.org/ns/earl#maybe' is not one of EARL's"):
        Determination("urn:c", "urn:p", 1, "http://www.w3.org/ns/earl#maybe", AUTOMATIC, rule_judge, "why")
