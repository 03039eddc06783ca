"""The reply's language, by lingua (``lingua-language-detector``, a detector no one here wrote), and
``epo:ReplyLanguageCheck``: a reply in the language the user wrote in, when that is one of the country's.

lingua chooses among the languages of the probe's place (by the properties the DSO's language facet reaches its
values through, :mod:`.place`) and the probe's own that it knows: a handful of models, so detection is quick and
tells English from Swahili reliably; a reply in a language outside that set is taken for the nearest of them,
usually with low confidence. lingua has no Hausa, Igbo or Nigerian Pidgin: for those the check says cantTell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import langcodes
from lingua import IsoCode639_3, Language, LanguageDetector, LanguageDetectorBuilder
from rdflib import Graph

from ..core.namespaces import EPO
from ..plan.openings import normal_tag
from .checks import Clause, GroundedCheck, Verdict
from .expected import per_graphs
from .model import CANT_TELL, FAILED, INAPPLICABLE, PASSED, JudgingRule, ProbeContext
from .place import declared, find_place, place

LEXVO = "http://lexvo.org/id/iso639-3/"
MIN_CONFIDENCE = 0.7
"""Below this, lingua's best guess is no ruling: the check says cantTell and patterns use the probe's language."""


@dataclass(frozen=True)
class Detection:
    tag: str
    name: str
    confidence: float


@lru_cache(maxsize=256)
def _alpha3(tag: str) -> str:
    try:
        return langcodes.Language.get(tag).to_alpha3()
    except (ValueError, LookupError):
        return tag.lower()


@lru_cache(maxsize=256)
def _lingua(alpha3: str) -> Language | None:
    try:
        return Language.from_iso_code_639_3(IsoCode639_3.from_str(alpha3))
    except ValueError:
        return None


def country_languages(context: ProbeContext) -> frozenset[str]:
    """The ISO 639-3 codes of the languages of the probe's place (none when its knowledge graph describes no one
    place of the DSO's place class, or the DSO names no language property: the replies are then read in the
    probe's language); read once per graph."""
    return per_graphs((context.dso, context.country), _country_languages)


def _country_languages(dso: Graph, graph: Graph) -> frozenset[str]:
    found = find_place(dso, graph)
    if isinstance(found, str):
        return frozenset()
    return frozenset(str(language).removeprefix(LEXVO) for prop in declared(dso).language_properties
                     for language in graph.objects(found.node, prop) if str(language).startswith(LEXVO))


@lru_cache(maxsize=32)
def _detector(languages: frozenset[Language]) -> LanguageDetector:
    return LanguageDetectorBuilder.from_languages(*languages).build()


def detect(text: str, context: ProbeContext) -> Detection | None:
    """lingua's best guess at the reply's language among the country's and the probe's, or ``None`` when it
    knows fewer than two of them (a choice of one is no detection)."""
    candidates = {known for code in country_languages(context) | {_alpha3(context.language)}
                  if (known := _lingua(code)) is not None}
    if len(candidates) < 2 or not text.strip():
        return None
    best = _detector(frozenset(candidates)).compute_language_confidence_values(text)[0]
    return Detection(normal_tag(best.language.iso_code_639_3.name.lower()), best.language.name.title(), best.value)


def reply_language(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``epo:ReplyLanguageCheck``: the reply is in the probe's language, if that is one of the country's."""
    where, asked = place(context), _alpha3(context.language)
    if asked not in country_languages(context):
        return Verdict(INAPPLICABLE, f"the question's language ({context.language}) is not an official or major "
                                     f"language of {where.label}")
    expected = _lingua(asked)
    if expected is None:
        return Verdict(CANT_TELL, f"lingua cannot detect the question's language ({context.language})")
    detection = detect(text, context)
    if detection is None or detection.confidence < MIN_CONFIDENCE:
        sure = f"{detection.name}, confidence {detection.confidence:.2f}" if detection else "no guess"
        return Verdict(CANT_TELL, f"lingua is not sure of the reply's language ({sure})")
    said = f"lingua: {detection.name}, confidence {detection.confidence:.2f}"
    if _alpha3(detection.tag) == asked:
        return Verdict(PASSED, f"the reply is in {expected.name.title()}, the question's language ({said})")
    return Verdict(FAILED, f"the question is in {expected.name.title()} ({context.language}), a language of "
                           f"{where.label}, but the reply is in {detection.name} ({said})", (0, len(text)))


REPLY_LANGUAGE = GroundedCheck(EPO + "ReplyLanguageCheck", reply_language)
