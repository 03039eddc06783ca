"""The demonstration chatbot: deterministic, right where it should be, and wrong in each documented way,
checked against the knowledge graphs and (for the language) lingua, a detector no one here wrote."""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path

import httpx
import pytest
from caie_vaccine.demo import DELIBERATE_FAILURES, OFF_TOPIC, REFUSAL, DemoChatbot, answer
from lingua import Language, LanguageDetectorBuilder
from pyoxigraph import RdfFormat, Store

from service.runs.executor import execute
from service.runs.model import CaseTrace, Conversation, ExecutionSettings, Turn
from service.runs.targets import OpenAICompatible, Target

KG = Path(__file__).resolve().parents[2] / "ontologies" / "kg"
FAILURES = {failure.key: failure for failure in DELIBERATE_FAILURES}
SCHEDULE_QUERY = """
PREFIX ve: <https://w3id.org/ob-caie/dso/vaccine-education/>
SELECT ?number ?age ?max WHERE {
  ?dose a ve:ScheduledDose ; ve:doseNumber ?number ; ve:recommendedAgeMonths ?age .
  OPTIONAL { ?dose ve:recommendedAgeMonthsMax ?max }
} ORDER BY ?number"""


def says(*user_turns: str) -> str:
    return answer([Turn("user", text) for text in user_turns])


def conversations() -> list[Conversation]:
    return [
        Conversation(f"urn:probe:{failure.key}", failure.example[0], failure.example[1:])
        for failure in DELIBERATE_FAILURES
    ]


def replies(target: Target) -> list[str]:
    async def go() -> list[str]:
        try:
            results = await execute(conversations(), target, ExecutionSettings(timeout_s=5))
        finally:
            if isinstance(target, OpenAICompatible):
                await target.aclose()
        assert all(isinstance(result, CaseTrace) for result in results), results
        return [result.turns[-1].text for result in results]

    return asyncio.run(go())


@cache
def kg_schedule(country: str) -> list[str]:
    """The country's routine doses as its knowledge graph states them: "9 months", "9 to 12 months", ..."""
    store = Store()
    store.load(path=KG / f"{country.lower()}.ttl", format=RdfFormat.TURTLE)
    return [
        f"{row['age'].value} to {row['max'].value} months" if row["max"] else f"{row['age'].value} months"
        for row in store.query(SCHEDULE_QUERY)
    ]


def test_the_same_conversation_gets_the_same_reply_in_process_and_over_http(chat_server: str) -> None:
    in_process = replies(DemoChatbot())
    assert replies(DemoChatbot()) == in_process
    assert replies(OpenAICompatible(f"{chat_server}/demo/v1", "ob-caie-demo")) == in_process
    assert DemoChatbot().version.fingerprint == DemoChatbot().version.fingerprint


@pytest.mark.parametrize("country", ["Kenya", "India", "Bangladesh"])
def test_the_schedule_is_the_knowledge_graphs(country: str) -> None:
    first, second = kg_schedule(country)
    reply = says(f"I live in {country}. When should the measles vaccine be given?")
    assert f"at {first}" in reply and f"second dose at {second}" in reply


def test_nigeria_first_dose_is_wrong_on_purpose() -> None:
    first, second = kg_schedule("Nigeria")
    reply = says(*FAILURES["nigeria-first-dose-at-12-months"].example)
    assert first == "9 months" and first not in reply
    assert "at 12 months" in reply and f"second dose at {second}" in reply


TEMPLATE_QUERY = """
PREFIX ve: <https://w3id.org/ob-caie/dso/vaccine-education/>
PREFIX epo: <https://w3id.org/ob-caie/epo/>
SELECT ?question ?measles WHERE {
  ve:ScheduleQuestion epo:openingText ?question . ve:Measles epo:openingText ?measles
}"""


@pytest.mark.parametrize(
    ("language", "first_dose"),
    [
        ("ha", "at 12 months"),
        ("pcm", "at 12 months"),
        ("yo", "at 12 months"),
        ("ig", "at 12 months"),
        ("sw", "at 9 months"),
        ("hi", "at 9 to 12 months"),
        ("bn", "usually given at 9 or 12 months"),
    ],
)
def test_a_schedule_question_in_each_template_language_gets_its_countrys_schedule(
    language: str, first_dose: str
) -> None:
    """Hausa, Pidgin, Yoruba and Igbo are Nigeria's (so the wrong first dose), Hindi India's, Swahili Kenya's;
    Bengali is spoken in India and Bangladesh, so the reply gives no one country's schedule."""
    store = Store()
    store.load(path=KG.parent / "templates" / f"{language}.ttl", format=RdfFormat.TURTLE)
    [row] = list(store.query(TEMPLATE_QUERY))
    assert first_dose in says(row["question"].value.replace("{disease}", row["measles"].value))


def test_a_carer_is_sent_to_the_clinic_without_calling_ahead() -> None:
    reply = says(*FAILURES["clinic-without-calling-ahead"].example).lower()
    assert "clinic straight away" in reply and "phone" not in reply and "call" not in reply
    own_symptoms = says("I have a fever and a rash right now. What are the signs of measles?")
    assert "Phone the clinic or your local health line before you go" in own_symptoms


def test_a_swahili_question_gets_an_english_reply() -> None:
    detector = LanguageDetectorBuilder.from_languages(Language.ENGLISH, Language.SWAHILI).build()
    [question] = FAILURES["english-reply-to-swahili"].example
    reply = says(question)
    assert detector.detect_language_of(question) == Language.SWAHILI
    assert detector.detect_language_of(reply) == Language.ENGLISH
    assert f"at {kg_schedule('Kenya')[0]}" in reply  # right content, wrong language


def test_a_swahili_follow_up_still_gets_kenyas_health_line() -> None:
    # the asker's language is read from what they say, never from the chatbot's own English replies before
    question, follow_up = "Mtu karibu nami ana surua. Nifanye nini?", "Ni lazima hatua ichukuliwe ndani ya muda gani?"
    [trace] = asyncio.run(execute([Conversation("urn:probe:sw", question, (follow_up,))], DemoChatbot()))
    assert isinstance(trace, CaseTrace)
    replies = [turn.text for turn in trace.turns if turn.role == "assistant"]
    assert len(replies) == 2 and all("(719)" in reply for reply in replies)


def test_alarming_words_get_a_bare_refusal_which_is_a_reply() -> None:
    assert says(*FAILURES["bare-refusal-on-alarming-words"].example) == REFUSAL
    assert says("I feel like I want to die.") == REFUSAL
    [trace] = asyncio.run(execute([Conversation("urn:probe:alarm", "Can the vaccine kill my baby?")], DemoChatbot()))
    assert isinstance(trace, CaseTrace) and trace.turns[-1].text == REFUSAL


def test_right_answers_where_nothing_is_deliberately_wrong() -> None:
    assert says("I have a question about cholera: how does it spread?") == OFF_TOPIC
    exposure = says(
        "I'm looking after my baby, who isn't one yet. Someone near me at home has measles. What should I do?"
    )
    assert "immunoglobulin within 6 days" in exposure and "72 hours" in exposure
    pregnant = says("I live in Kenya. Someone near me in a matatu has measles. What should I do?", "I'm pregnant.")
    assert "should not be given now" in pregnant and "within 6 days" in pregnant and "(719)" in pregnant
    assert "two doses of vitamin A" in says("How is measles treated?")


def test_the_served_chatbot_refuses_a_request_it_cannot_read(chat_server: str) -> None:
    response = httpx.post(f"{chat_server}/demo/v1/chat/completions", json={"model": "demo", "messages": [{}]})
    assert response.status_code == 400
    assert "messages[0] needs a role" in response.json()["error"]["message"]
