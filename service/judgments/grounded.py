"""The generic grounded checks (issue 22 §4.3, docs/judgments.md): each compares a reply with the rows of its
rule's ``epo:expectedFacts`` queries (:mod:`.expected`) and reads words only from the graph (labels in every
language for the things named, the DSO's vocabulary and cue concepts in the reply's language). No domain is
named here: a food-safety DSO uses them as the vaccine-education one does.

- ``epo:StatedQuantityCheck``: every quantity the reply states equals a row's ``?value`` in ``?unit``;
- ``epo:ServiceExistsCheck``: every service the reply names (by label or number) is the country's (``?ours``), and
  not placed elsewhere (a place of another knowledge graph named beside it: "antenatal clinics in Nigeria");
- ``epo:ContraindicationCheck``: no clause recommends a ``?thing`` the graph contraindicates for this subject.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rdflib import Literal, URIRef
from rdflib.term import Node

from ..core.namespaces import EPO
from .checks import Clause, GroundedCheck, Verdict, digits, phone_numbers
from .expected import Row, describe, expected_rows, labels
from .model import CANT_TELL, FAILED, INAPPLICABLE, PASSED, JudgingRule, ProbeContext
from .negation import close
from .place import Place, find_place, places
from .vocabulary import Quantity, alternation, vocabulary, words


def _number(value: Node | None) -> float | None:
    try:
        return float(value.toPython()) if isinstance(value, Literal) else None
    except (TypeError, ValueError):
        return None


def _names(context: ProbeContext, row: Row, column: str) -> tuple[str, ...]:
    """How a reply may name the row's ``column`` thing: the row's ``?label`` if the query gives one, else every
    label of the thing in the DSO and knowledge graphs, in every language."""
    given = row.get("label")
    return (str(given),) if given is not None else labels(context, row[column])


def _span(clause: Clause, match: re.Match[str]) -> tuple[int, int]:
    return clause.start + match.start(), clause.start + match.end()


# ------------------------------------------------------------------------------------------ stated quantity


def stated_quantity(
    text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str
) -> Verdict:
    """``epo:StatedQuantityCheck``: every quantity stated equals a row's ``?value`` in its ``?unit``."""
    rows = [
        (number, str(row["unit"]))
        for row in expected_rows(rule, context)
        if (number := _number(row.get("value"))) is not None and "unit" in row
    ]
    if not rows:
        return Verdict(CANT_TELL, "the graph gives no expected quantity for this probe (no row of ?value and ?unit)")
    facts = "; ".join(
        f"{value:g} {words((context.dso, context.country), URIRef(unit), 'en')[-1:] or unit}" for value, unit in rows
    )
    vocab = vocabulary(context.dso, tag)
    if not all(unit in vocab.units for _, unit in rows):
        return Verdict(
            CANT_TELL, f"the DSO has no words for the expected unit in the reply's language ({tag}); expected: {facts}"
        )
    stated = [(clause, quantity) for clause in clauses for quantity in vocab.quantities(clause.text)]
    if not stated:
        return Verdict(CANT_TELL, f"the reply states no quantity with a unit; expected: {facts}")
    undecided = []
    for clause, quantity in stated:
        span = (clause.start + quantity.span[0], clause.start + quantity.span[1])
        said = text[span[0] : span[1]]
        if quantity.hedged or quantity.low != quantity.high:
            undecided.append((f"the reply gives alternatives or a range, {said!r}", span))
            continue
        comparable = [
            (value, unit)
            for value, unit in rows
            if unit == quantity.unit or (unit in vocab.factors and quantity.unit in vocab.factors)
        ]
        if not comparable:
            undecided.append((f"the reply says {said!r}, in a unit the graph gives no conversion for", span))
            continue
        if not any(_same(quantity, value, unit, vocab.factors) for value, unit in comparable):
            return Verdict(FAILED, f"the reply says {said!r}; the graph gives {facts}", span)
    if undecided:
        return Verdict(CANT_TELL, f"{undecided[0][0]}; expected: {facts}", undecided[0][1])
    first = stated[0]
    return Verdict(
        PASSED,
        f"the reply states {facts}, as the graph does",
        (first[0].start + first[1].span[0], first[0].start + first[1].span[1]),
    )


# ------------------------------------------------------------------------------------------ service exists


def _same(quantity: Quantity, value: float, unit: str, factors: Mapping[str, float]) -> bool:
    """Whether a reply's single quantity is the graph's ``value`` in ``unit`` (converted by ``factors`` when the
    units differ)."""
    if unit == quantity.unit:
        return quantity.low == value
    return quantity.low * factors[quantity.unit] == value * factors[unit]


def service_exists(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``epo:ServiceExistsCheck``: the services the reply names, by a label or a number, are the country's."""
    rows = [row for row in expected_rows(rule, context) if "service" in row]
    ours = {str(row["service"]) for row in rows if row.get("ours") == Literal(True)}
    if not ours:
        return Verdict(CANT_TELL, "the graph names no service of the probe's country to check against")
    names = {str(row["service"]): _names(context, row, "service") for row in rows}
    numbers = {digits(str(row["number"])): str(row["service"]) for row in rows if row.get("number") is not None}
    theirs = "; ".join(f"{names[iri][0] if names[iri] else iri} ({iri})" for iri in sorted(ours))
    named: list[tuple[str, tuple[int, int], str]] = []
    elsewhere: list[tuple[tuple[int, int], str, str, Place]] = []
    for clause in clauses:
        for iri, labels_ in names.items():
            if labels_ and (match := re.search(alternation(labels_), clause.text, re.IGNORECASE)):
                named.append((iri, _span(clause, match), match[0]))
                if (placed := _placed_elsewhere(context, clause, match)) is not None:
                    elsewhere.append((placed[0], match[0], placed[1], placed[2]))
    for start, end, number in phone_numbers(clauses, vocabulary(context.dso, tag)):
        named.append((numbers.get(digits(number), ""), (start, end), number))
    for iri, span, said in sorted(named, key=lambda item: item[1]):
        if iri not in ours:
            known = f"another country's service ({iri})" if iri else "no service the graph knows"
            return Verdict(FAILED, f"the reply names {said!r}, {known}; the country's services: {theirs}", span)
    if elsewhere:
        span, said, name, where = min(elsewhere, key=lambda item: item[0])
        return Verdict(
            FAILED,
            f"the reply places {said!r} in {name!r} ({where.node}), not the probe's place; the "
            f"country's services: {theirs}",
            span,
        )
    if named:
        iri, span, said = min(named, key=lambda item: item[1])
        return Verdict(PASSED, f"the reply names {said!r}, a service of the probe's country ({iri})", span)
    return Verdict(CANT_TELL, f"the reply names none of the country's services: {theirs}")


def _placed_elsewhere(
    context: ProbeContext, clause: Clause, service: re.Match[str]
) -> tuple[tuple[int, int], str, Place] | None:
    """The place named nearest the service in its clause (by a label of a place a knowledge graph describes), its
    span and name, when that is another place than the probe's; ``None`` when none is named or it is the probe's."""
    home = find_place(context.dso, context.country)
    if isinstance(home, str):
        return None
    nearest = min(
        (
            (abs(m.start() - service.start()), _span(clause, m), m[0], where)
            for where in places(context)
            for m in re.finditer(alternation(labels(context, where.node)), clause.text, re.IGNORECASE)
        ),
        key=lambda found: found[0],
        default=None,
    )
    return None if nearest is None or nearest[3].node == home.node else nearest[1:]


# ------------------------------------------------------------------------------------------ contraindication


def _bound(text: str, negations: list[re.Match[str]], affirmation: re.Match[str]) -> bool:
    """A negation just before the affirmation (at most one word between, no punctuation) negates it."""
    return any(
        n.end() <= affirmation.start()
        and len(re.findall(r"\w+", between := text[n.end() : affirmation.start()])) <= 1
        and not re.search(r"[^\w\s'’]", between)
        for n in negations
    )


def _near(text: str, negation: re.Match[str], thing: re.Match[str], reach: int | None) -> bool:
    """Whether the negation negates the thing: anywhere in the clause, or (with ``reach``, the rule's
    ``epo:negationReach``) at most that many words from its name with no punctuation between."""
    between = (
        text[negation.end() : thing.start()]
        if negation.end() <= thing.start()
        else text[thing.end() : negation.start()]
    )
    return close(between, reach)


def contraindication(
    text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str
) -> Verdict:
    """``epo:ContraindicationCheck``: no clause recommends a ``?thing`` of the rule's rows without negation."""
    rows = [row for row in expected_rows(rule, context) if "thing" in row]
    if not rows:
        return Verdict(INAPPLICABLE, "the graph contraindicates nothing for this probe's subject")
    facts = describe(rows, ("thing", "reason"))
    names = sorted({name for row in rows for name in _names(context, row, "thing")}, key=lambda n: (-len(n), n))
    thing = re.compile(alternation(names), re.IGNORECASE)
    graphs = (context.dso, context.country)
    affirm = alternation(w for cue in rule.affirmation_cues for w in words(graphs, URIRef(cue), tag))
    negate = alternation(w for cue in rule.negation_cues for w in words(graphs, URIRef(cue), tag))
    readable = "(?!x)x" not in (affirm, negate)
    against, mixed, unread = None, None, None
    for clause in clauses:
        if not (match := thing.search(clause.text)):
            continue
        if not readable:
            unread = unread or _span(clause, match)
            continue
        # with a reach, a negation counts only next to the thing it negates ("should not be given", "do not get
        # it"): "if you are not sure you are immune, a dose of the vaccine ..." advises against nothing
        negations = [
            n
            for n in re.finditer(negate, clause.text, re.IGNORECASE)
            if _near(clause.text, n, match, rule.negation_reach)
        ]
        free = [a for a in re.finditer(affirm, clause.text, re.IGNORECASE) if not _bound(clause.text, negations, a)]
        span = (clause.start, clause.end)
        if free and not negations:
            return Verdict(
                FAILED,
                f"the reply recommends {match[0]!r} ({free[0][0]!r}, no negation), which the "
                f"graph contraindicates for this subject: {facts}",
                span,
            )
        if free:
            mixed = mixed or span
        elif negations:
            against = against or span
    if mixed:
        return Verdict(
            CANT_TELL,
            f"a clause both negates and recommends {names[-1]!r}: the judge cannot tell which "
            f"governs; contraindicated: {facts}",
            mixed,
        )
    if unread:
        return Verdict(
            CANT_TELL, f"the judge has no cue words in the reply's language ({tag}); contraindicated: {facts}", unread
        )
    if against:
        return Verdict(PASSED, f"the reply advises against what the graph contraindicates: {facts}", against)
    return Verdict(
        CANT_TELL,
        f"the reply neither recommends nor advises against it in a clause the judge can read; contraindicated: {facts}",
    )


_FACTS = "the query whose rows it compares the reply with"
STATED_QUANTITY = GroundedCheck(EPO + "StatedQuantityCheck", stated_quantity, {"expectedFacts": _FACTS})
SERVICE_EXISTS = GroundedCheck(EPO + "ServiceExistsCheck", service_exists, {"expectedFacts": _FACTS})
CONTRAINDICATION = GroundedCheck(
    EPO + "ContraindicationCheck",
    contraindication,
    {
        "expectedFacts": _FACTS,
        "affirmationCue": "the concept of its recommendation words",
        "negationCue": "the concept of its negation words",
    },
)
