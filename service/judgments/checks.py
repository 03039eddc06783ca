"""What a grounded check is (``epo:groundedCheck``, docs/judgments.md "The grounded checks"), and what every check
reads a reply with: its clauses, its labels, the numbers it gives.

A check reads the reply's clauses its rule selected (``epo:appliesWhen``) and says passed, failed (with the
span of the wrong statement) or cantTell; it never guesses: alternatives or nothing stated say cantTell. The
words it reads (units, ordinals, connectors) are the DSO's labels in the reply's language (:mod:`.vocabulary`);
a reply in a language the DSO has no words for states nothing the check can read.

Checks are plugins: each is a :class:`GroundedCheck` registered under the entry-point group ``caie.checks``
(:mod:`.registry`), the engine's generic ones by its own ``pyproject.toml``, a domain's by its package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal as TypingLiteral, Protocol

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS
from rdflib.term import Node

from ..core.errors import Unprocessable
from ..core.namespaces import DSO_VACCINE, EPO
from .expected import per_graphs
from .model import CANT_TELL, FAILED, PASSED, JudgingRule, ProbeContext
from .vocabulary import Quantity, Vocabulary, alternation, vocabulary


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


class CheckFunction(Protocol):
    """A check's ruling on one reply: the reply's text, the clauses its rule selected, the rule, the probe's
    context and the reply's language tag."""

    def __call__(self, text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext,
                 tag: str) -> Verdict: ...


Need = TypingLiteral["groundedIn", "expectedFacts", "statedUnit", "affirmationCue", "negationCue"]
"""The ``epo:`` properties of a judging rule a check may require (the rule is refused without them)."""


@dataclass(frozen=True)
class GroundedCheck:
    """What a ``caie.checks`` entry point resolves to: one check kind, by the IRI rules name it with.

    ``needs`` names each ``epo:`` property a rule running this check must state, with what it is for (the 422
    refusing a rule without it says so): the engine checks them when it reads the rule, so the check itself may
    rely on them.
    """

    iri: str
    run: CheckFunction
    needs: Mapping[Need, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.iri.startswith(("http://", "https://", "urn:")):
            raise ValueError(f"a grounded check is named by an absolute IRI, not {self.iri!r}")


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
    found = per_graphs((graph,), _country)
    if isinstance(found, int):
        raise Unprocessable(f"the probe's knowledge graph must describe exactly one ve:Country to judge against; "
                            f"it describes {found}")
    return found


def _country(graph: Graph) -> Country | int:
    """The graph's one country, else how many it describes (read once per graph: :func:`.expected.per_graphs`)."""
    nodes = sorted(set(graph.subjects(RDF.type, ve("Country"))))
    return Country(nodes[0], label(graph, nodes[0]) or str(nodes[0])) if len(nodes) == 1 else len(nodes)


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
        yield _StatedDose(number, int(quantity.low), int(quantity.high),
                          (clause.start + quantity.span[0], clause.start + quantity.span[1]))


def schedule(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``epo:ScheduleCheck``: every dose age the reply gives (in the rule's ``epo:statedUnit``) is the country's
    routine schedule's."""
    graph, place = context.country, country(context.country)
    words, unit = vocabulary(context.dso, tag), str(rule.stated_unit)
    if unit not in words.units:
        return Verdict(CANT_TELL, f"the DSO has no words for {label(context.dso, URIRef(unit)) or unit} in the "
                                  f"reply's language ({tag})")
    doses: dict[int, tuple[int, int, str]] = {}
    for plan in graph.objects(place.node, ve("hasSchedule")):
        for dose in graph.objects(plan, ve("dose")):
            number, start = _integer(graph, dose, "doseNumber"), _integer(graph, dose, "recommendedAgeMonths")
            if number is not None and start is not None:
                doses[number] = (start, _integer(graph, dose, "recommendedAgeMonthsMax") or start, str(dose))
    if not doses:
        return Verdict(CANT_TELL, f"{place.label}'s knowledge graph states no routine schedule to check against")
    read = [dose for clause in clauses for dose in _stated_doses(clause, words, unit)]
    stated = [dose for dose in read if isinstance(dose, _StatedDose)]
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
    if len(stated) < len(read):
        return Verdict(CANT_TELL, "the reply gives alternative ages for a dose, not one country's schedule")
    if not stated:
        return Verdict(CANT_TELL, "the reply speaks of the schedule but gives no age in months")
    given = ", ".join(f"dose {dose.number} at {_months(dose.start, dose.end)}" for dose in stated)
    return Verdict(PASSED, f"the reply gives {given}, as {place.label}'s routine schedule does", stated[0].span)


# ------------------------------------------------------------------------------------------ post-exposure window


def _nearest(quantities: Sequence[Quantity], clause: Clause, cue: tuple[int, int]) -> Quantity | None:
    """The quantity in ``clause`` closest to the cue (a gap of characters; after it on a tie)."""
    def gap(quantity: Quantity) -> tuple[int, int]:
        start, end = clause.start + quantity.span[0], clause.start + quantity.span[1]
        return max(cue[0] - end, start - cue[1], 0), int(start < cue[0])
    return min(quantities, key=gap, default=None)


def post_exposure_window(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext,
                         tag: str) -> Verdict:
    """``epo:PostExposureWindowCheck``: the window given next to the measure is its ``ve:hasTimeWindow``'s end,
    compared in the units' ``epo:conversionFactor``."""
    fact = URIRef(rule.grounded_in or "")
    knowledge = context.dso if (fact, ve("hasTimeWindow"), None) in context.dso else context.country
    window = knowledge.value(fact, ve("hasTimeWindow"))
    end = _integer(knowledge, window, "windowEnd") if window is not None else None
    unit = knowledge.value(window, ve("timeUnit")) if window is not None else None
    words = vocabulary(context.dso, tag)
    factor = words.factors.get(str(unit)) if unit is not None else None
    if end is None or unit is None:
        raise Unprocessable(f"judging rule {rule.judge.iri}: its fact {fact} has no ve:hasTimeWindow with a "
                            "ve:windowEnd and a ve:timeUnit in the DSO or the country's graph")
    name = label(knowledge, fact) or str(fact)
    if factor is None or not words.units:
        return Verdict(CANT_TELL, f"the DSO has no words for time units with a conversion factor in the reply's "
                                  f"language ({tag})")
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
            return Verdict(CANT_TELL, f"the reply gives alternatives, {text[span[0]:span[1]]!r}, for {name}", span)
        if quantity.low * words.factors[quantity.unit] != expected:
            return Verdict(FAILED, f"the reply says {text[span[0]:span[1]]!r}; the DSO gives {name} ({fact})", span)
    return Verdict(PASSED, f"the reply gives the window of {name}, as the DSO does ({fact})", min(found))


# ------------------------------------------------------------------------------------------ health line

_PHONE = re.compile(r"(?<![\d,.])\+?\d[\d ]*\d(?![\d,.])(?!\s*%)")


def digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def phone_numbers(clauses: Sequence[Clause], words: Vocabulary) -> list[tuple[int, int, str]]:
    """The numbers of three digits or more the clauses give that are no quantity (no unit word next to them)."""
    found = []
    for clause in clauses:
        numbers = [m for m in _PHONE.finditer(clause.text) if len(digits(m[0])) >= 3]
        taken = [q.span for q in words.quantities(clause.text)] if numbers else []
        found += [(clause.start + m.start(), clause.start + m.end(), m[0]) for m in numbers
                  if not any(s < m.end() and m.start() < e for s, e in taken)]
    return found


def health_line(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``epo:HealthLineCheck``: a number the reply gives is one of the country's health lines."""
    graph, place = context.country, country(context.country)
    lines: dict[str, tuple[str, str]] = {}  # digits -> (name, IRI) of each of the country's health lines
    for line in graph.objects(place.node, ve("hasHealthService")):
        if (line, RDF.type, ve("HealthLine")) in graph:
            number = digits(str(graph.value(line, ve("healthLineNumber")) or ""))
            lines[number] = (label(graph, line) or str(line), str(line))
    if not lines:
        return Verdict(CANT_TELL, f"{place.label}'s knowledge graph names no health line to check against")
    numbers = phone_numbers(clauses, vocabulary(context.dso, tag))
    for start, end, number in numbers:
        if digits(number) not in lines:
            known = ", ".join(f"{name} ({number_})" for number_, (name, _) in sorted(lines.items()))
            return Verdict(FAILED, f"the reply gives the number {number!r}, which is none of {place.label}'s "
                                   f"health lines: {known}", (start, end))
    if numbers:
        start, end, number = numbers[0]
        name, iri = lines[digits(number)]
        return Verdict(PASSED, f"the reply gives {number}, {place.label}'s {name} ({iri})", (start, end))
    lowered = text.casefold()
    for name, iri in lines.values():
        if (at := lowered.find(name.casefold())) >= 0:
            return Verdict(PASSED, f"the reply names {place.label}'s {name} ({iri})", (at, at + len(name)))
    return Verdict(CANT_TELL, f"the reply names no number and none of {place.label}'s health lines")


SCHEDULE = GroundedCheck(EPO + "ScheduleCheck", schedule,
                         {"statedUnit": "the unit concept of the ages it reads"})
POST_EXPOSURE_WINDOW = GroundedCheck(EPO + "PostExposureWindowCheck", post_exposure_window,
                                     {"groundedIn": "the post-exposure measure it checks"})
HEALTH_LINE = GroundedCheck(EPO + "HealthLineCheck", health_line)
