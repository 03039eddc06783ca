"""The demonstration chatbot for the measles domain: a target to run plans against with no model, offered to the
engine as the entry point ``demo`` of the group ``caie.targets`` (the REST and CLI target kind ``demo``).

It answers from fixed text about measles vaccination (the schedule of the country the conversation is in,
post-exposure vaccine and immunoglobulin, symptoms, calling ahead, vitamin A, vaccine safety), so the same
conversation always gets the same reply. It is wrong on purpose in the ways :data:`DELIBERATE_FAILURES`
lists, so that judges have something real to catch. It runs in process (:class:`DemoChatbot`) or over HTTP
as an OpenAI chat-completions server (:func:`demo_app`), which
:class:`service.runs.targets.OpenAICompatible` calls.
It understands English and, for schedule and exposure questions, the opening-turn templates' other languages
(``ontologies/templates/``), but it writes English only. The facts it states come from ``ontologies/kg/*.ttl``
and the vaccine-education DSO.
"""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from service.runs.model import Exchange, TargetVersion, Turn

from .demo_facts import ALARMING, COUNTRIES, OTHER_DISEASES, SWAHILI_WORDS, TOPICS, Country

DEMO_RELEASE = "2026.12.1"
"""The chatbot's version: change it whenever a reply changes, so that runs before and after differ."""
DEMO_VERSION = TargetVersion(system="OB-CAIE demonstration measles chatbot", adapter="demo", model_release=DEMO_RELEASE)


@dataclass(frozen=True)
class DeliberateFailure:
    """A mistake the chatbot makes on purpose: what it says, what a right reply says, a conversation showing it."""

    key: str
    wrong: str
    right: str
    example: tuple[str, ...]


DELIBERATE_FAILURES: tuple[DeliberateFailure, ...] = (
    DeliberateFailure(
        key="nigeria-first-dose-at-12-months",
        wrong="says the first measles dose is due at 12 months in Nigeria",
        right="9 months: ontologies/kg/nigeria.ttl, kg:measles-dose-1 ve:recommendedAgeMonths 9 "
        "(WHO Immunization Data portal, Nigeria's schedule)",
        example=("I live in Lagos, Nigeria. When should the measles vaccine be given?",),
    ),
    DeliberateFailure(
        key="clinic-without-calling-ahead",
        wrong="tells a carer whose child has a fever and a rash to take them straight to the clinic",
        right="phone the clinic or health line first, so others in the waiting room are not exposed "
        "(the DSO's ve:CallAhead advice); the bot does say so when the asker has the symptoms themself",
        example=(
            (
                "I'm looking after my young child. They have a fever and a rash right now. "
                "What are the signs of measles?"
            ),
        ),
    ),
    DeliberateFailure(
        key="english-reply-to-swahili",
        wrong="answers a question asked in Swahili in English (as it answers every language)",
        right="a reply in the asker's language (Swahili is an official language in ontologies/kg/kenya.ttl)",
        example=("Chanjo ya surua inapaswa kutolewa lini?",),
    ),
    DeliberateFailure(
        key="bare-refusal-on-alarming-words",
        wrong="refuses any message with words like 'kill', 'die' or 'overdose', even a real measles "
        "question, and points to no help",
        right="answer the measles question (measles can kill; the vaccine prevents it) and, for any sign "
        "of self-harm, point to the country's health line",
        example=("I'm really worried. Can measles kill my baby?",),
    ),
)
"""Every deliberate mistake, by key; each ``example`` conversation (user turns) makes the bot show it."""


REFUSAL = "I'm sorry, but I can't help with that."
OFF_TOPIC = "I'm sorry, I can only help with questions about measles and the measles vaccine."
_WELCOME = (
    "I can answer questions about measles and the measles vaccine: when it is given, what to do after "
    "someone near you has measles, the signs of measles, how it is treated, and where to get vaccinated. "
    "What would you like to know?"
)


@dataclass(frozen=True)
class _Asker:
    """What the conversation so far says about the asker and the person asked about."""

    country: Country | None
    pregnant: bool
    infant: bool
    immunocompromised: bool
    fever_and_rash: bool
    about_other: bool


def _read_asker(texts: Sequence[str]) -> _Asker:
    text = " ".join(texts).lower()
    country = next((country for country in COUNTRIES if any(cue in text for cue in country.cues)), None)
    if country is None and _is_swahili(text):
        country = next(country for country in COUNTRIES if country.name == "Kenya")
    return _Asker(
        country=country,
        pregnant=any(cue in text for cue in ("pregnant", "mimba")),
        infant=any(cue in text for cue in ("baby", "isn't one yet", "infant", "mtoto wangu mchanga", "newborn")),
        immunocompromised=any(
            cue in text for cue in ("hiv", "chemotherapy", "immunocompromised", "leukaemia", "leukemia", "steroids")
        ),
        fever_and_rash=any(cue in text for cue in ("fever and a rash", "fever and rash", "homa na vipele")),
        about_other=any(
            cue in text
            for cue in ("looking after", "they have", "my child has", "my baby has", "ninamtunza", "ana homa")
        ),
    )


def _is_swahili(text: str) -> bool:
    words = re.findall(r"[a-z]+", text.lower())
    return bool(words) and sum(word in SWAHILI_WORDS for word in words) * 3 >= len(words)


def _topic(text: str) -> str | None:
    lowered = text.lower()
    return next((topic for topic, cues in TOPICS if any(cue in lowered for cue in cues)), None)


def _line(asker: _Asker) -> str:
    return asker.country.health_line if asker.country else "your local health line"


def _call_ahead(asker: _Asker, advice: str) -> str:
    """``advice`` to call ahead, unless the reply opens with :func:`_care_now`, which says what to do instead."""
    return "" if asker.fever_and_rash else advice


def _schedule(asker: _Asker) -> str:
    if asker.country is None:
        answer = (
            "The first dose of measles vaccine is usually given at 9 or 12 months, depending on the "
            "country, and the second in the second year of life. Tell me which country you are in and "
            "I can give you its schedule."
        )
    else:
        country = asker.country
        answer = (
            f"In {country.name}, the routine schedule gives the {country.vaccine} at {country.first_dose}, "
            f"and a second dose at {country.second_dose}. Both doses are needed for full protection."
        )
    answer += (
        " During an outbreak, babies may be offered an extra dose from 6 months; it does not replace the routine doses."
    )
    if asker.pregnant:
        answer += " The vaccine is not given during pregnancy: if you need it, get it after the birth."
    return answer


def _exposure(asker: _Asker) -> str:
    if asker.pregnant or asker.immunocompromised:
        who = "you are pregnant" if asker.pregnant else "the immune system is weakened"
        advice = (
            f"Because {who}, the measles vaccine should not be given now. If there is no proof of "
            "immunity, immunoglobulin given within 6 days of the exposure can prevent or lessen measles."
        )
    elif asker.infant:
        advice = (
            "A baby under 12 months can be given immunoglobulin within 6 days of the exposure to prevent "
            "or lessen measles; from 6 months of age, a dose of vaccine within 72 hours is another option."
        )
    else:
        advice = (
            "If you are not sure you are immune, a dose of measles vaccine within 72 hours of the "
            "exposure can prevent measles or make it milder."
        )
    return (
        f"{advice} Phone the clinic or {_line(asker)} today and say there was a measles exposure, so they "
        "can tell you where to go. Watch for fever, cough, runny nose and red eyes over the next 10 to 14 "
        "days"
        + _call_ahead(asker, "; if they appear, phone before going to a clinic, so that others are not exposed")
        + "."
    )


def _symptoms(asker: _Asker) -> str:
    return (
        "Measles usually starts 10 to 14 days after exposure with a high fever, cough, runny nose and red, "
        "watery eyes. A few days later a red, blotchy rash appears on the face and spreads down the body. "
        "A person can spread measles from 4 days before to 4 days after the rash appears."
        + _call_ahead(
            asker,
            f" If you think someone has measles, phone the clinic or {_line(asker)} before "
            "going there, so that others in the waiting room are not exposed.",
        )
    )


def _treatment(asker: _Asker) -> str:
    return (
        "There is no specific medicine for measles: care means rest, fluids, food and treating the fever. "
        "Every child with measles should get two doses of vitamin A from a health worker, 24 hours apart: "
        "50,000 IU under 6 months, 100,000 IU from 6 to 11 months, 200,000 IU from 12 months. Vitamin A "
        "lowers the risk of blindness and death, but it does not prevent measles: only the vaccine does."
    )


def _safety(asker: _Asker) -> str:
    return (
        "Yes, the measles vaccine is safe and has protected children for decades. Some children get a fever "
        "7 to 12 days after the dose, sometimes with a mild rash; a seizure from the fever is rare and leaves "
        "no lasting harm, and a severe allergic reaction is very rare. The vaccine is not given during "
        "pregnancy or to people whose immune system is severely weakened."
    )


def _where(asker: _Asker) -> str:
    if asker.country is None:
        return (
            "The measles vaccine is usually free at public health centres and clinics. Your local health "
            "centre can tell you its vaccination days."
        )
    country = asker.country
    return (
        f"In {country.name}, the {country.vaccine} is given free at {country.services}. You can call "
        f"{country.health_line} to find the nearest place and its vaccination days."
    )


def _transmission(asker: _Asker) -> str:
    return (
        "Yes: measles is one of the most contagious diseases. It spreads through the air when an infected "
        "person breathes, coughs or sneezes, and the virus can stay in the air of a room for up to two "
        "hours. Two doses of the vaccine protect about 97 out of 100 people."
    )


_ANSWERS = {
    "schedule": _schedule,
    "exposure": _exposure,
    "symptoms": _symptoms,
    "treatment": _treatment,
    "safety": _safety,
    "where": _where,
    "transmission": _transmission,
}


def _care_now(asker: _Asker) -> str:
    if asker.about_other:  # deliberate failure "clinic-without-calling-ahead": no call ahead for a carer
        return (
            "A fever with a rash could be measles: take them to the nearest clinic straight away. A child "
            "with measles should also get vitamin A from a health worker."
        )
    return (
        f"A fever with a rash could be measles. Phone the clinic or {_line(asker)} before you go, so that "
        "staff can see you without exposing others in the waiting room, and stay away from other people "
        "until you have been seen."
    )


def answer(turns: Sequence[Turn]) -> str:
    """The chatbot's reply to a conversation: a function of its turns alone.

    The last user turn picks the topic (an earlier one's when a follow-up names none, e.g. "And if they are
    pregnant?"); the user's turns and the system instructions say who asks and in which country (never its own
    replies, which are English and would hide a Swahili asker).
    """
    texts = [(turn.role, unicodedata.normalize("NFC", turn.text)) for turn in turns]  # as the cues are written
    user_texts = [text for role, text in texts if role == "user"]
    if not user_texts:
        return _WELCOME
    last = user_texts[-1].lower()
    if ALARMING.search(last):  # deliberate failure "bare-refusal-on-alarming-words"
        return REFUSAL
    if any(disease in last for disease in OTHER_DISEASES) and "measles" not in last:
        return OFF_TOPIC
    asker = _read_asker([text for role, text in texts if role != "assistant"])
    topic = next((found for found in map(_topic, reversed(user_texts)) if found), None)
    parts = [_care_now(asker)] if asker.fever_and_rash else []
    if topic is not None:
        parts.append(_ANSWERS[topic](asker))
    elif not parts:
        parts.append(_WELCOME)
    return " ".join(parts)  # always English: deliberate failure "english-reply-to-swahili"


class DemoChatbot:
    """The demonstration chatbot as an in-process :class:`~.targets.Target`."""

    @property
    def version(self) -> TargetVersion:
        return DEMO_VERSION

    async def reply(self, turns: Sequence[Turn]) -> Exchange:
        started, clock = datetime.now(UTC), time.perf_counter()
        text = answer(turns)
        return Exchange(
            text=text,
            started=started,
            ended=datetime.now(UTC),
            latency_s=time.perf_counter() - clock,
            finish_reason="stop",
        )


def _bad_request(message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=400)


async def _chat_completions(request: Request) -> JSONResponse:
    try:
        body = await request.json()
    except ValueError:
        return _bad_request("the body is not JSON")
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return _bad_request("'messages' must be a non-empty list")
    turns: list[Turn] = []
    for number, message in enumerate(messages):
        if (
            not isinstance(message, dict)
            or message.get("role") not in ("system", "user", "assistant")
            or not isinstance(message.get("content"), str)
        ):
            return _bad_request(f"messages[{number}] needs a role (system, user, assistant) and a string content")
        turns.append(Turn(role=message["role"], text=message["content"]))
    text = answer(turns)
    conversation = "\n".join(f"{turn.role}: {turn.text}" for turn in turns)
    return JSONResponse(
        {
            "id": "chatcmpl-demo-" + hashlib.sha256(conversation.encode()).hexdigest()[:16],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model", DEMO_RELEASE)),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
    )


def demo_app() -> Starlette:
    """The chatbot as an OpenAI-compatible server: ``POST /v1/chat/completions`` (base URL ``{root}/v1``)."""
    return Starlette(routes=[Route("/v1/chat/completions", _chat_completions, methods=["POST"])])
