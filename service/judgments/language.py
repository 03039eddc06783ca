"""The reply's language, by lingua (``lingua-language-detector``, a detector no one here wrote), and
``epo:ReplyLanguageCheck``: a reply in the language the user wrote in, when that is one of the country's.

lingua reads a reply twice. First among a wider set: the languages of the probe's place (by the properties the DSO's
language facet reaches its values through, :mod:`.place`), the probe's own, the DSO's languages and a few widely
used ones (:data:`WIDELY_USED`); a reply lingua finds confidently in a language outside the place's and the
probe's is in that language (a French reply in Kenya is French, not the nearest of English and Swahili). Else
among the place's and the probe's languages only, where a handful of models tell English from Swahili reliably.
lingua has no Hausa, Igbo, Nigerian Pidgin or Twi: a reply in one of those is of no language lingua can name, and
the rules read it as unknown (:func:`reading`), so that a person looks at it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import langcodes
from lingua import IsoCode639_3, Language, LanguageDetector, LanguageDetectorBuilder
from rdflib import Graph
from rdflib.namespace import RDF

from ..core.namespaces import EPO
from ..plan.openings import normal_tag
from .checks import Clause, GroundedCheck, Verdict
from .expected import per_graphs
from .model import CANT_TELL, FAILED, INAPPLICABLE, PASSED, JudgingRule, ProbeContext
from .place import declared, find_place, place

LEXVO = "http://lexvo.org/id/iso639-3/"
MIN_CONFIDENCE = 0.7
"""Below this, lingua's best guess is no ruling: the check says cantTell and patterns use the probe's language."""
WIDELY_USED = ("eng", "fra", "spa", "por", "ara", "rus", "zho", "deu", "hin", "swa")
"""ISO 639-3 codes of languages a reply may come in besides the place's and the domain's: the UN's six official
languages and four other widely used ones. Not all of lingua's 75: their models take 1.3 GB and 14 s to load, and
among so many lingua's confidence in a short English reply falls to 0.1 to 0.3 (measured on
tests/judgments/misleading_replies.yaml), which no threshold separates from a guess."""


@dataclass(frozen=True)
class Detection:
    """lingua's reading: the language (``tag``, ``name``), its confidence, and whether it is one of the place's or
    the probe's languages (``expected``) or one of the wider set lingua weighs them against."""

    tag: str
    name: str
    confidence: float
    expected: bool = True


@dataclass(frozen=True)
class Reading:
    """The language the rules read a reply in, and whether it is known: ``known`` is false when lingua cannot say
    and its best guess among the wider set is not the probe's language either (a language lingua does not know, or
    too short a reply), so that what the reply's patterns miss is no evidence."""

    tag: str
    known: bool


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
    return frozenset(
        str(language).removeprefix(LEXVO)
        for prop in declared(dso).language_properties
        for language in graph.objects(found.node, prop)
        if str(language).startswith(LEXVO)
    )


def _domain_languages(dso: Graph) -> frozenset[str]:
    kind = declared(dso).language_class
    return (
        frozenset()
        if kind is None
        else frozenset(
            str(node).removeprefix(LEXVO) for node in dso.subjects(RDF.type, kind) if str(node).startswith(LEXVO)
        )
    )


def _known(codes: frozenset[str]) -> frozenset[Language]:
    return frozenset(known for code in codes if (known := _lingua(code)) is not None)


@lru_cache(maxsize=32)
def _detector(languages: frozenset[Language]) -> LanguageDetector:
    return LanguageDetectorBuilder.from_languages(*languages).build()


def _best(languages: frozenset[Language], text: str, expected: frozenset[Language]) -> Detection:
    best = _detector(languages).compute_language_confidence_values(text)[0]
    return Detection(
        normal_tag(best.language.iso_code_639_3.name.lower()),
        best.language.name.title(),
        best.value,
        best.language in expected,
    )


def detect(text: str, context: ProbeContext) -> Detection | None:
    """lingua's reading of the reply (``None`` for a blank one): a language outside the place's and the probe's
    that it finds confidently among the wider set; else its best guess among the place's and the probe's when it
    knows two of them or more; else its best guess among the wider set."""
    if not text.strip():
        return None
    expected = _known(country_languages(context) | {_alpha3(context.language)})
    wider = expected | _known(per_graphs((context.dso,), _domain_languages) | frozenset(WIDELY_USED))
    widest = _best(wider, text, expected)
    if not widest.expected and widest.confidence >= MIN_CONFIDENCE:
        return widest
    return _best(expected, text, expected) if len(expected) >= 2 else widest


def reading(text: str, context: ProbeContext) -> Reading:
    """The language the rules read the reply in: lingua's when it is confident; else the probe's, known when
    lingua's best guess is the probe's language, unknown otherwise."""
    detection = detect(text, context)
    if detection is not None and detection.confidence >= MIN_CONFIDENCE:
        return Reading(detection.tag, known=True)
    return Reading(
        context.language, known=detection is not None and _alpha3(detection.tag) == _alpha3(context.language)
    )


def reply_language(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``epo:ReplyLanguageCheck``: the reply is in the probe's language, if that is one of the country's."""
    where, asked = place(context), _alpha3(context.language)
    if asked not in country_languages(context):
        return Verdict(
            INAPPLICABLE,
            f"the question's language ({context.language}) is not an official or major language of {where.label}",
        )
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
    other = "" if detection.expected else f", which is not a language of {where.label}"
    return Verdict(
        FAILED,
        f"the question is in {expected.name.title()} ({context.language}), a language of "
        f"{where.label}, but the reply is in {detection.name}{other} ({said})",
        (0, len(text)),
    )


REPLY_LANGUAGE = GroundedCheck(EPO + "ReplyLanguageCheck", reply_language)
