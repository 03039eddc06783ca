"""The vaccine-education domain's grounded checks: dose ages against the country's routine schedule, the
post-exposure window against the DSO's, phone numbers against the country's health lines.

Each reads ``ve:`` properties of the probe's country knowledge graph or the DSO, so it lives here and not in the
engine; the package registers them under the entry-point group ``caie.checks`` (its ``pyproject.toml``), and the
DSO declares their IRIs (``ve:ScheduleCheck``, ``ve:PostExposureWindowCheck``, ``ve:HealthLineCheck``).
The reading helpers (clauses, labels, numbers, the DSO's words, the probe's place) are the engine's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF
from rdflib.term import Node

from service.core.errors import Unprocessable
from service.judgments.checks import Clause, GroundedCheck, Verdict, digits, label, phone_numbers
from service.judgments.model import CANT_TELL, FAILED, PASSED, JudgingRule, ProbeContext
from service.judgments.place import place
from service.judgments.vocabulary import Quantity, Vocabulary, alternation, vocabulary

from . import VE


def ve(name: str) -> URIRef:
    return URIRef(VE + name)


def _integer(graph: Graph, node: Node, prop: str) -> int | None:
    value = graph.value(node, ve(prop))
    return int(value.toPython()) if isinstance(value, Literal) else None


# ------------------------------------------------------------------------------------------ schedule


def _months(start: int, end: int) -> str:
    return f"{start} months" if start == end else f"{start} to {end} months"


@dataclass(frozen=True)
class _StatedDose:
    number: int
    start: int
    end: int
    span: tuple[int, int]


def _stated_doses(clause: Clause, words: Vocabulary, unit: str) -> Iterator[_StatedDose | Quantity]:
    """Each age the clause gives in ``unit``, with the dose it is for: the ordinal since the previous age (first,
    second), else the dose after the previous one. Ages given as alternatives ("9 or 12 months") are yielded as
    the hedged quantity they are."""
    ordinal = re.compile(alternation(words.ordinals), re.IGNORECASE)
    number, since = 0, 0
    for quantity in words.quantities(clause.text):
        if quantity.unit != unit:
            continue
        if quantity.hedged:
            yield quantity
            continue
        ordinals = ordinal.findall(clause.text, since, quantity.span[0]) if words.ordinals else []
        number = words.ordinals[ordinals[-1].casefold()] if ordinals else number + 1
        since = quantity.span[1]
        yield _StatedDose(
            number,
            int(quantity.low),
            int(quantity.high),
            (clause.start + quantity.span[0], clause.start + quantity.span[1]),
        )


def schedule(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``ve:ScheduleCheck``: every dose age the reply gives (in the rule's ``epo:statedUnit``) is the country's
    routine schedule's."""
    graph, where = context.country, place(context)
    words, unit = vocabulary(context.dso, tag), str(rule.stated_unit)
    if unit not in words.units:
        return Verdict(
            CANT_TELL,
            f"the DSO has no words for {label(context.dso, URIRef(unit)) or unit} in the reply's language ({tag})",
        )
    doses: dict[int, tuple[int, int, str]] = {}
    for plan in graph.objects(where.node, ve("hasSchedule")):
        for dose in graph.objects(plan, ve("dose")):
            number, start = _integer(graph, dose, "doseNumber"), _integer(graph, dose, "recommendedAgeMonths")
            if number is not None and start is not None:
                doses[number] = (start, _integer(graph, dose, "recommendedAgeMonthsMax") or start, str(dose))
    if not doses:
        return Verdict(CANT_TELL, f"{where.label}'s knowledge graph states no routine schedule to check against")
    read = [dose for clause in clauses for dose in _stated_doses(clause, words, unit)]
    stated = [dose for dose in read if isinstance(dose, _StatedDose)]
    wrong = [dose for dose in stated if doses.get(dose.number, (None, None))[:2] != (dose.start, dose.end)]
    if wrong:
        reasons = []
        for dose in wrong:
            said = f"the reply gives dose {dose.number} at {_months(dose.start, dose.end)}"
            if dose.number in doses:
                start, end, iri = doses[dose.number]
                reasons.append(f"{said}; {where.label}'s routine schedule gives it at {_months(start, end)} ({iri})")
            else:
                reasons.append(f"{said}; {where.label}'s routine schedule has {len(doses)} doses")
        return Verdict(FAILED, "; ".join(reasons), wrong[0].span)
    if len(stated) < len(read):
        return Verdict(CANT_TELL, "the reply gives alternative ages for a dose, not one country's schedule")
    if not stated:
        return Verdict(CANT_TELL, "the reply speaks of the schedule but gives no age in months")
    given = ", ".join(f"dose {dose.number} at {_months(dose.start, dose.end)}" for dose in stated)
    return Verdict(PASSED, f"the reply gives {given}, as {where.label}'s routine schedule does", stated[0].span)


# ------------------------------------------------------------------------------------------ post-exposure window


def _nearest(quantities: Sequence[Quantity], clause: Clause, cue: tuple[int, int]) -> Quantity | None:
    """The quantity in ``clause`` closest to the cue (a gap of characters; after it on a tie)."""

    def gap(quantity: Quantity) -> tuple[int, int]:
        start, end = clause.start + quantity.span[0], clause.start + quantity.span[1]
        return max(cue[0] - end, start - cue[1], 0), int(start < cue[0])

    return min(quantities, key=gap, default=None)


def post_exposure_window(
    text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str
) -> Verdict:
    """``ve:PostExposureWindowCheck``: the window given next to the measure is its ``ve:hasTimeWindow``'s end,
    compared in the units' ``epo:conversionFactor``."""
    fact = URIRef(rule.grounded_in or "")
    knowledge = context.dso if (fact, ve("hasTimeWindow"), None) in context.dso else context.country
    window = knowledge.value(fact, ve("hasTimeWindow"))
    end = _integer(knowledge, window, "windowEnd") if window is not None else None
    unit = knowledge.value(window, ve("timeUnit")) if window is not None else None
    words = vocabulary(context.dso, tag)
    factor = words.factors.get(str(unit)) if unit is not None else None
    if end is None or unit is None:
        raise Unprocessable(
            f"judging rule {rule.judge.iri}: its fact {fact} has no ve:hasTimeWindow with a "
            "ve:windowEnd and a ve:timeUnit in the DSO or the country's graph"
        )
    name = label(knowledge, fact) or str(fact)
    if factor is None or not words.units:
        return Verdict(
            CANT_TELL, f"the DSO has no words for time units with a conversion factor in the reply's language ({tag})"
        )
    found: dict[tuple[int, int], Quantity] = {}
    for clause in clauses:
        timed = [q for q in words.quantities(clause.text) if q.unit in words.factors]
        for cue in clause.cues:
            if (quantity := _nearest(timed, clause, cue)) is not None:
                found[(clause.start + quantity.span[0], clause.start + quantity.span[1])] = quantity
    if not found:
        return Verdict(CANT_TELL, f"the reply speaks of {name} but gives no window in a unit of time")
    expected = end * factor
    for span, quantity in sorted(found.items()):
        if quantity.hedged or quantity.low != quantity.high:
            return Verdict(CANT_TELL, f"the reply gives alternatives, {text[span[0] : span[1]]!r}, for {name}", span)
        if quantity.low * words.factors[quantity.unit] != expected:
            return Verdict(FAILED, f"the reply says {text[span[0] : span[1]]!r}; the DSO gives {name} ({fact})", span)
    return Verdict(PASSED, f"the reply gives the window of {name}, as the DSO does ({fact})", min(found))


# ------------------------------------------------------------------------------------------ health line


def health_line(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``ve:HealthLineCheck``: a number the reply gives is one of the country's health lines."""
    graph, where = context.country, place(context)
    lines: dict[str, tuple[str, str]] = {}  # digits -> (name, IRI) of each of the country's health lines
    for line in graph.objects(where.node, ve("hasHealthService")):
        if (line, RDF.type, ve("HealthLine")) in graph:
            number = digits(str(graph.value(line, ve("healthLineNumber")) or ""))
            lines[number] = (label(graph, line) or str(line), str(line))
    if not lines:
        return Verdict(CANT_TELL, f"{where.label}'s knowledge graph names no health line to check against")
    numbers = phone_numbers(clauses, vocabulary(context.dso, tag))
    for start, end, number in numbers:
        if digits(number) not in lines:
            known = ", ".join(f"{name} ({number_})" for number_, (name, _) in sorted(lines.items()))
            return Verdict(
                FAILED,
                f"the reply gives the number {number!r}, which is none of {where.label}'s health lines: {known}",
                (start, end),
            )
    if numbers:
        start, end, number = numbers[0]
        name, iri = lines[digits(number)]
        return Verdict(PASSED, f"the reply gives {number}, {where.label}'s {name} ({iri})", (start, end))
    lowered = text.casefold()
    for name, iri in lines.values():
        if (at := lowered.find(name.casefold())) >= 0:
            return Verdict(PASSED, f"the reply names {where.label}'s {name} ({iri})", (at, at + len(name)))
    return Verdict(CANT_TELL, f"the reply names no number and none of {where.label}'s health lines")


SCHEDULE = GroundedCheck(VE + "ScheduleCheck", schedule, {"statedUnit": "the unit concept of the ages it reads"})
POST_EXPOSURE_WINDOW = GroundedCheck(
    VE + "PostExposureWindowCheck", post_exposure_window, {"groundedIn": "the post-exposure measure it checks"}
)
HEALTH_LINE = GroundedCheck(VE + "HealthLineCheck", health_line)
