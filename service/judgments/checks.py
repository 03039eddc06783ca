"""The grounded checks a judging rule can run (``epo:groundedCheck``): what a reply states, compared with the
probe's country knowledge graph or the DSO. docs/judgments.md describes each.

A check reads the reply's clauses its rule selected (``epo:appliesWhen``) and says passed, failed (with the
span of the wrong statement) or cantTell; it never guesses: alternatives or nothing stated say cantTell. The
numbers and units it reads are written in English (digits, "months", "hours", "days"); a reply that states
them otherwise states nothing the check can read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS
from rdflib.term import Node

from ..core.errors import Unprocessable
from ..core.namespaces import DSO_VACCINE
from .model import CANT_TELL, FAILED, PASSED, JudgingRule, ProbeContext


def ve(name: str) -> URIRef:
    return URIRef(DSO_VACCINE + name)


@dataclass(frozen=True)
class Clause:
    """A clause of a reply (``start``..``end`` in the reply) and the spans where its rule's cue matched."""

    start: int
    end: int
    text: str
    cues: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Verdict:
    """One part of a ruling: an EARL outcome, why, and the span of the reply it rests on (or ``None``)."""

    outcome: str
    rationale: str
    span: tuple[int, int] | None = None


_CLAUSE_END = re.compile(r"[.;!?।](?=\s|$)|\n")


def split_clauses(text: str) -> list[Clause]:
    """The reply's clauses: split after a full stop, semicolon, question or exclamation mark (or a danda)
    followed by a space, and at line breaks; a decimal point or a colon does not split."""
    clauses, start = [], 0
    for end in [match.end() for match in _CLAUSE_END.finditer(text)] + [len(text)]:
        piece = text[start:end]
        stripped = piece.lstrip()
        if stripped.strip():
            offset = start + len(piece) - len(stripped)
            clauses.append(Clause(offset, end, text[offset:end]))
        start = end
    return clauses


def label(graph: Graph, node: Node) -> str | None:
    """``node``'s English ``rdfs:label``, else any of its labels, else ``None``."""
    labels = sorted(graph.objects(node, RDFS.label), key=lambda text: (getattr(text, "language", None) != "en", str(text)))
    return str(labels[0]) if labels else None


@dataclass(frozen=True)
class Country:
    node: Node
    label: str


def country(graph: Graph) -> Country:
    """The one ``ve:Country`` the probe's knowledge graph describes, or 422 saying how many it describes."""
    nodes = sorted(set(graph.subjects(RDF.type, ve("Country"))))
    if len(nodes) != 1:
        raise Unprocessable(f"the probe's knowledge graph must describe exactly one ve:Country to judge against; "
                            f"it describes {len(nodes)}")
    return Country(nodes[0], label(graph, nodes[0]) or str(nodes[0]))


def _integer(graph: Graph, node: Node, prop: str) -> int | None:
    value = graph.value(node, ve(prop))
    return int(value.toPython()) if isinstance(value, Literal) else None


# ------------------------------------------------------------------------------------------ schedule

_AGE = re.compile(r"\bbetween\s+(\d{1,2})\s+and\s+(\d{1,2})\s*months?\b"  # a range: between 9 and 12 months
                  r"|\b(\d{1,2})(?:\s*(?:to|-|–)\s*(\d{1,2}))?\s*months?\b"  # 9 months, 9 to 12 months
                  r"|\b(\d{1,2})(?=(?:\s*(?:,|and)\s*\d{1,2})+\s*months?\b)",  # the 9 of "9 and 18 months"
                  re.IGNORECASE)
_HEDGED_AGE = re.compile(r"\b\d{1,2}\s+or\s+\d{1,2}\s*months?\b", re.IGNORECASE)
_ORDINAL = re.compile(r"\b(first|1st|second|2nd|third|3rd)\b", re.IGNORECASE)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3}


def _months(start: int, end: int) -> str:
    return f"{start} months" if start == end else f"{start} to {end} months"


@dataclass(frozen=True)
class _StatedDose:
    number: int
    start: int
    end: int
    span: tuple[int, int]


def _stated_doses(clause: Clause) -> Iterator[_StatedDose]:
    """Each age the clause gives, with the dose it is for: the ordinal since the previous age (first, second),
    else the dose after the previous one. Ages given as alternatives ("9 or 12 months") are skipped."""
    hedged = [match.span() for match in _HEDGED_AGE.finditer(clause.text)]
    number, since = 0, 0
    for match in _AGE.finditer(clause.text):
        if any(start <= match.start() < end for start, end in hedged):
            continue
        ordinals = _ORDINAL.findall(clause.text, since, match.start())
        number = _ORDINALS[ordinals[-1].lower()] if ordinals else number + 1
        since = match.end()
        ages = [int(value) for value in match.groups() if value is not None]
        yield _StatedDose(number, ages[0], ages[-1], (clause.start + match.start(), clause.start + match.end()))


def schedule(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext) -> Verdict:
    """``epo:ScheduleCheck``: every dose age the reply gives is the country's routine schedule's."""
    graph, place = context.country, country(context.country)
    doses: dict[int, tuple[int, int, str]] = {}
    for plan in graph.objects(place.node, ve("hasSchedule")):
        for dose in graph.objects(plan, ve("dose")):
            number, start = _integer(graph, dose, "doseNumber"), _integer(graph, dose, "recommendedAgeMonths")
            if number is not None and start is not None:
                doses[number] = (start, _integer(graph, dose, "recommendedAgeMonthsMax") or start, str(dose))
    if not doses:
        return Verdict(CANT_TELL, f"{place.label}'s knowledge graph states no routine schedule to check against")
    stated = [dose for clause in clauses for dose in _stated_doses(clause)]
    wrong = [dose for dose in stated if doses.get(dose.number, (None, None))[:2] != (dose.start, dose.end)]
    if wrong:
        reasons = []
        for dose in wrong:
            said = f"the reply gives dose {dose.number} at {_months(dose.start, dose.end)}"
            if dose.number in doses:
                start, end, iri = doses[dose.number]
                reasons.append(f"{said}; {place.label}'s routine schedule gives it at {_months(start, end)} ({iri})")
            else:
                reasons.append(f"{said}; {place.label}'s routine schedule has {len(doses)} doses")
        return Verdict(FAILED, "; ".join(reasons), wrong[0].span)
    if any(_HEDGED_AGE.search(clause.text) for clause in clauses):
        return Verdict(CANT_TELL, "the reply gives alternative ages for a dose, not one country's schedule")
    if not stated:
        return Verdict(CANT_TELL, "the reply speaks of the schedule but gives no age in months")
    given = ", ".join(f"dose {dose.number} at {_months(dose.start, dose.end)}" for dose in stated)
    return Verdict(PASSED, f"the reply gives {given}, as {place.label}'s routine schedule does", stated[0].span)


# ------------------------------------------------------------------------------------------ post-exposure window

_DURATION = re.compile(r"\b(?:within|in the first|up to)\s+(\d+)\s*(hours?|days?)\b|\b(\d+)[- ](hour|day)\b(?!s)",
                       re.IGNORECASE)
_HOURS = {ve("Hour"): 1, ve("Day"): 24}


def _nearest(clause: Clause, cue: tuple[int, int]) -> re.Match[str] | None:
    """The duration in ``clause`` closest to the cue (a gap of characters; after it on a tie)."""
    def gap(match: re.Match[str]) -> tuple[int, int]:
        start, end = clause.start + match.start(), clause.start + match.end()
        return max(cue[0] - end, start - cue[1], 0), int(start < cue[0])
    return min(_DURATION.finditer(clause.text), key=gap, default=None)


def post_exposure_window(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext) -> Verdict:
    """``epo:PostExposureWindowCheck``: the window given next to the measure is its ``ve:hasTimeWindow``'s end."""
    fact = URIRef(rule.grounded_in or "")
    knowledge = context.dso if (fact, ve("hasTimeWindow"), None) in context.dso else context.country
    window = knowledge.value(fact, ve("hasTimeWindow"))
    end = _integer(knowledge, window, "windowEnd") if window is not None else None
    unit = knowledge.value(window, ve("timeUnit")) if window is not None else None
    if end is None or unit not in _HOURS:
        raise Unprocessable(f"judging rule {rule.judge.iri}: its fact {fact} has no ve:hasTimeWindow with a "
                            "ve:windowEnd and a ve:timeUnit of ve:Hour or ve:Day in the DSO or the country's graph")
    name = label(knowledge, fact) or str(fact)
    found = {(clause.start + m.start(), clause.start + m.end()): m for clause in clauses for cue in clause.cues
             if (m := _nearest(clause, cue)) is not None}
    if not found:
        return Verdict(CANT_TELL, f"the reply speaks of {name} but gives no window in hours or days")
    expected = end * _HOURS[unit]
    for span, match in sorted(found.items()):
        amount, unit_word = (match[1], match[2]) if match[1] else (match[3], match[4])
        if int(amount) * (24 if unit_word.lower().startswith("day") else 1) != expected:
            return Verdict(FAILED, f"the reply says {match[0]!r}; the DSO gives {name} ({fact})", span)
    return Verdict(PASSED, f"the reply gives the window of {name}, as the DSO does ({fact})", min(found))


# ------------------------------------------------------------------------------------------ health line

_PHONE = re.compile(r"(?<![\d,.])\+?\d[\d ]*\d(?![\d,.])(?!\s*(?:hours?|days?|weeks?|months?|years?|IU\b|%))",
                    re.IGNORECASE)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def health_line(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext) -> Verdict:
    """``epo:HealthLineCheck``: a number the reply gives is one of the country's health lines."""
    graph, place = context.country, country(context.country)
    lines: dict[str, tuple[str, str]] = {}  # digits -> (name, IRI) of each of the country's health lines
    for line in graph.objects(place.node, ve("hasHealthService")):
        if (line, RDF.type, ve("HealthLine")) in graph:
            number = _digits(str(graph.value(line, ve("healthLineNumber")) or ""))
            lines[number] = (label(graph, line) or str(line), str(line))
    if not lines:
        return Verdict(CANT_TELL, f"{place.label}'s knowledge graph names no health line to check against")
    numbers = [(clause.start + m.start(), clause.start + m.end(), m[0]) for clause in clauses
               for m in _PHONE.finditer(clause.text) if len(_digits(m[0])) >= 3]
    for start, end, number in numbers:
        if _digits(number) not in lines:
            known = ", ".join(f"{name} ({digits})" for digits, (name, _) in sorted(lines.items()))
            return Verdict(FAILED, f"the reply gives the number {number!r}, which is none of {place.label}'s "
                                   f"health lines: {known}", (start, end))
    if numbers:
        start, end, number = numbers[0]
        name, iri = lines[_digits(number)]
        return Verdict(PASSED, f"the reply gives {number}, {place.label}'s {name} ({iri})", (start, end))
    lowered = text.casefold()
    for name, iri in lines.values():
        if (at := lowered.find(name.casefold())) >= 0:
            return Verdict(PASSED, f"the reply names {place.label}'s {name} ({iri})", (at, at + len(name)))
    return Verdict(CANT_TELL, f"the reply names no number and none of {place.label}'s health lines")
