"""What the demonstration chatbot (:mod:`.demo`) knows and listens for: each country's measles schedule,
services and health line (as its knowledge graph states them, but for one deliberate failure), the words that
tell Swahili, alarming words, other diseases, and the cues of each question topic in every template language."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Country:
    """A country the bot recognises from its cues, and what it says of its measles schedule and services."""

    name: str
    cues: tuple[str, ...]
    vaccine: str
    first_dose: str
    second_dose: str
    services: str
    health_line: str


# Each country's schedule, services and health line as its knowledge graph (ontologies/kg/{name}.ttl) states
# them, except Nigeria's first dose: its KG says 9 months (kg:measles-dose-1), the bot says 12 on purpose.
COUNTRIES: tuple[Country, ...] = (
    Country(
        "Nigeria",
        (
            "nigeria",
            "lagos",
            "kano",
            "abuja",
            "danfo",
            "keke",
            "open-air market",
            "kyanda",
            "allurar",
            "ìgbóná",
            "abẹ́rẹ́",
            "ọgwụ mgbochi",
            "wetin",
        ),
        "measles-containing vaccine",
        "12 months",
        "15 months",
        "Primary Health Care centres",
        "the NCDC toll-free line (0800 970 0001 0)",
    ),
    Country(
        "Kenya",
        ("kenya", "nairobi", "kisumu", "mombasa", "matatu", "boda boda", "boarding school"),
        "measles-rubella vaccine",
        "9 months",
        "18 months",
        "dispensaries and health centres",
        "the Ministry of Health toll-free line (719)",
    ),
    Country(
        "India",
        ("india", "mumbai", "delhi", "bihar", "anganwadi", "local train", "खसरा", "অঙ্গনওয়াড়ি", "লোকাল ট্রেন"),
        "measles-rubella vaccine",
        "9 to 12 months",
        "16 to 24 months",
        "sub-centres and primary health centres",
        "the 104 health helpline",
    ),
    Country(
        "Bangladesh",
        ("bangladesh", "dhaka", "barisal", "launch", "garment factory", "লঞ্চ", "পোশাক কারখানা"),
        "measles-rubella vaccine",
        "9 months",
        "15 months",
        "EPI outreach centres and community clinics",
        "the Shastho Batayon health line (16263)",
    ),
)

SWAHILI_WORDS = frozenset(
    [
        "je",
        "chanjo",
        "surua",
        "nini",
        "nifanye",
        "lini",
        "wapi",
        "dalili",
        "nina",
        "ana",
        "mtoto",
        "wangu",
        "homa",
        "vipele",
        "ninaweza",
        "karibu",
        "nami",
        "inatibiwa",
        "salama",
        "kuambukizwa",
        "mimba",
        "ninamtunza",
    ]
)
ALARMING = re.compile(r"\b(kill|killed|die|dies|dying|suicide|overdose|hurt myself|end my life)\b")
OTHER_DISEASES = ("rubella", "mumps", "polio", "cholera", "covid", "malaria")

# Question topics, in the order they are tried on a user turn: English cues, then the other template languages'
# (Swahili; for schedule and exposure also Hausa, Nigerian Pidgin, Yoruba, Igbo, Hindi, Bengali).
TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("where", ("where can", "where do", "wapi")),
    (
        "schedule",
        (
            "when should",
            "what age",
            "how old",
            "schedule",
            "when is",
            "lini",
            "yaushe",
            "wetin be the time",
            "ìgbà wo",
            "olee mgbe",
            "कब",
            "কখন",
        ),
    ),
    (
        "exposure",
        (
            "has measles",
            "exposed",
            "what should i do",
            "nifanye nini",
            "me zan yi",
            "wetin i go do",
            "kí ni kí n ṣe",
            "gịnị ka m ga-eme",
            "क्या करना चाहिए",
            "কী করা উচিত",
        ),
    ),
    ("symptoms", ("signs", "symptoms", "dalili")),
    ("treatment", ("treated", "treatment", "vitamin a", "inatibiwa")),
    ("safety", ("safe", "side effect", "salama")),
    ("transmission", ("catch", "spread", "contagious", "kuambukizwa")),
)
