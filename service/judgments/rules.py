"""Rule judges (issue 10 §4): judging rules read from RDF (``epo:JudgingRule``, docs/judgments.md), and
:func:`judge`, which rules on every reply of a conversation against the criteria its probe exercises.

The inputs are plain values (the conversation's turns and a :class:`~.model.ProbeContext`), so the records
layer decides where they come from; nothing here reads the store. A rule's judge has the package version plus
a digest of the rule's declaration (its concise bounded description, RDFC-1.0): a changed rule is a new version.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from pyoxigraph import RdfFormat
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF
from rdflib.term import Identifier

from .. import __version__
from ..core.digest import graph_digest
from ..core.errors import Unprocessable
from ..core.namespaces import EPO
from ..core.rdf import from_rdflib, parse_triples, to_rdflib
from ..plan.openings import normal_tag
from ..runs.model import CaseTrace, Turn
from . import checks, language
from .checks import Clause, Verdict
from .expected import validate_query
from .model import (
    AUTOMATIC,
    CANT_TELL,
    FAILED,
    INAPPLICABLE,
    PASSED,
    Determination,
    Judge,
    JudgingRule,
    Pattern,
    Pointer,
    ProbeContext,
)
from .negation import negation as negation_in
from .registry import GROUP, installed

_NEEDED_FIELDS = {
    "groundedIn": "grounded_in",
    "expectedFacts": "expected_facts",
    "statedUnit": "stated_unit",
    "affirmationCue": "affirmation_cues",
    "negationCue": "negation_cues",
}
"""Each rule property a check may need (:data:`.checks.Need`), to the field of :class:`JudgingRule` holding it."""

_PATTERNS = {
    "appliesWhenAsked": "applies_when_asked",
    "appliesWhen": "applies_when",
    "requiresContent": "requires",
    "forbidsContent": "forbids",
}
_PROPERTIES = {
    EPO + name
    for name in (
        *_PATTERNS,
        "judgesCriterionId",
        "groundedCheck",
        "groundedIn",
        "expectedFacts",
        "affirmationCue",
        "negationCue",
        "negationReach",
        "statedUnit",
    )
}


# ------------------------------------------------------------------------------------------ reading rules


def parse_rules(data: bytes, base_iri: str) -> tuple[JudgingRule, ...]:
    """The judging rules of a Turtle document: 400 if it does not parse, 422 naming the rule that is wrong."""
    return read_rules(to_rdflib(parse_triples(data, RdfFormat.TURTLE, base_iri)))


def read_rules(graph: Graph) -> tuple[JudgingRule, ...]:
    """Every ``epo:JudgingRule`` of ``graph``, by IRI; 422 naming each rule that cannot be read, and why."""
    rules, problems = [], []
    for node in sorted(s for s in graph.subjects(RDF.type, URIRef(EPO + "JudgingRule")) if isinstance(s, Identifier)):
        if not isinstance(node, URIRef):
            problems.append(f"a judging rule needs an IRI (it names the judge), not the blank node {node.n3()}")
            continue
        try:
            rules.append(_read_rule(graph, node))
        except ValueError as error:
            problems.append(f"judging rule {node}: {error}")
    if problems:
        raise Unprocessable("; ".join(problems))
    return tuple(rules)


def _pattern(value: object, prop: str) -> Pattern:
    if not isinstance(value, Literal):
        raise ValueError(  # noqa: TRY004 - read_rules reports each ValueError as the rule's problem (422)
            f"epo:{prop} must be a regular expression literal, not {value}"
        )
    try:
        regex = re.compile(unicodedata.normalize("NFC", str(value)), re.IGNORECASE)
    except re.error as error:
        raise ValueError(f"epo:{prop} {str(value)!r} is not a regular expression: {error}") from error
    return Pattern(normal_tag(value.language) if value.language else None, regex)


def _order(value: object) -> tuple[str, str]:
    return str(value), str(getattr(value, "language", None) or "")


def _one(graph: Graph, node: URIRef, prop: str) -> object | None:
    values = list(graph.objects(node, URIRef(EPO + prop)))
    if len(values) > 1:
        raise ValueError(f"it has {len(values)} values of epo:{prop}, at most one is allowed")
    return values[0] if values else None


def _read_rule(graph: Graph, node: URIRef) -> JudgingRule:
    unknown = sorted({str(p) for p in graph.predicates(node) if str(p).startswith(EPO) and str(p) not in _PROPERTIES})
    if unknown:
        raise ValueError(f"it uses {', '.join(unknown)}, which judging rules do not have")
    criterion = _one(graph, node, "judgesCriterionId")
    if not isinstance(criterion, Literal) or not str(criterion).strip():
        raise ValueError("it needs one epo:judgesCriterionId, the identifier of the criterion it judges")
    name = checks.label(graph, node)
    if name is None:
        raise ValueError("it needs an rdfs:label, the judge's name")
    check = _one(graph, node, "groundedCheck")
    known = installed()
    if check is not None and str(check) not in known.checks:
        raise ValueError(
            f"its epo:groundedCheck {check} is not a check kind installed here (no package registers "
            f"it under the entry-point group {GROUP}); installed: {known.describe()}"
        )
    grounded_in = _one(graph, node, "groundedIn")
    if grounded_in is not None and not isinstance(grounded_in, URIRef):
        raise ValueError(f"epo:groundedIn must be the IRI of a grading fact, not {grounded_in}")
    expected = tuple(sorted(str(value) for value in graph.objects(node, URIRef(EPO + "expectedFacts"))))
    for text in expected:
        if (problem := validate_query(text)) is not None:
            raise ValueError(problem)
    cues = {
        prop: tuple(sorted(str(value) for value in graph.objects(node, URIRef(EPO + prop))))
        for prop in ("affirmationCue", "negationCue")
    }
    reach = _one(graph, node, "negationReach")
    if reach is not None and not (isinstance(reach, Literal) and str(reach).isdigit()):
        raise ValueError(f"epo:negationReach must be a whole number of words, not {reach}")
    stated_unit = _one(graph, node, "statedUnit")
    if stated_unit is not None and not isinstance(stated_unit, URIRef):
        raise ValueError(f"epo:statedUnit must be the IRI of a unit concept, not {stated_unit}")
    patterns = {
        field: tuple(_pattern(value, prop) for value in sorted(graph.objects(node, URIRef(EPO + prop)), key=_order))
        for prop, field in _PATTERNS.items()
    }
    if check is None and not patterns["requires"] and not patterns["forbids"]:
        raise ValueError("it judges nothing: it has no epo:requiresContent, epo:forbidsContent or epo:groundedCheck")
    declaration = graph.cbd(node)
    version = f"{__version__}+rule.{graph_digest(from_rdflib(declaration))[:16]}"
    rule = JudgingRule(
        judge=Judge(str(node), "rule", name, version),
        criterion_id=str(criterion),
        check=str(check) if check is not None else None,
        grounded_in=str(grounded_in) if grounded_in is not None else None,
        expected_facts=expected,
        affirmation_cues=cues["affirmationCue"],
        negation_cues=cues["negationCue"],
        negation_reach=int(str(reach)) if reach is not None else None,
        stated_unit=str(stated_unit) if stated_unit is not None else None,
        **patterns,
    )
    if rule.check is not None:
        _needs(rule, known.checks[rule.check])
    return rule


def _needs(rule: JudgingRule, check: checks.GroundedCheck) -> None:
    """A ValueError naming each property the rule's check needs and the rule does not state."""
    missing = [f"epo:{prop}, {why}" for prop, why in check.needs.items() if not getattr(rule, _NEEDED_FIELDS[prop])]
    if missing:
        raise ValueError(f"its epo:groundedCheck {check.iri} needs " + "; and ".join(missing))


# ------------------------------------------------------------------------------------------ judging


@dataclass(frozen=True)
class _Reply:
    turn: int
    text: str
    asked: str
    context: ProbeContext

    @cached_property
    def reading(self) -> language.Reading:
        """The reply's language as lingua detects it, else the probe's (which patterns read it), and whether known."""
        return language.reading(self.text, self.context)

    @property
    def language(self) -> str:
        return self.reading.tag

    @cached_property
    def clauses(self) -> list[Clause]:
        return checks.split_clauses(self.text)


@lru_cache(maxsize=256)
def _primary(tag: str) -> str:
    return normal_tag(tag).split("-")[0]


def _in(patterns: Iterable[Pattern], tag: str) -> list[Pattern]:
    """The patterns written for ``tag``'s language (primary subtags compared) or for every language."""
    primary = _primary(tag)
    return [p for p in patterns if p.language is None or p.language.split("-")[0] == primary]


def _sources(patterns: Iterable[Pattern], joiner: str = " or ") -> str:
    return joiner.join(f"/{p.regex.pattern}/" for p in patterns)


def _rule_on(rule: JudgingRule, reply: _Reply) -> Verdict:
    """One rule on one reply: applicability first, then forbidden, required content and the grounded check."""
    if rule.applies_when_asked:
        asked = _in(rule.applies_when_asked, reply.context.language)
        if not asked:
            return Verdict(
                CANT_TELL, f"the rule has no question pattern in the probe's language ({reply.context.language})"
            )
        if not any(p.regex.search(reply.asked) for p in asked):
            return Verdict(
                INAPPLICABLE, f"the question does not touch the criterion (nothing matches {_sources(asked)})"
            )
    clauses = reply.clauses
    if rule.applies_when:
        cues = _in(rule.applies_when, reply.language)
        if not cues:
            return Verdict(CANT_TELL, f"the rule has no reply pattern in the reply's language ({reply.language})")
        clauses = [
            Clause(
                c.start,
                c.end,
                c.text,
                tuple((c.start + m.start(), c.start + m.end()) for p in cues for m in p.regex.finditer(c.text)),
            )
            for c in clauses
        ]
        clauses = [c for c in clauses if c.cues]
        if not clauses and not reply.reading.known:  # a reply lingua cannot read touches what it may: a person looks
            return Verdict(
                CANT_TELL,
                f"no clause matches {_sources(cues)}, but lingua cannot tell the reply's language "
                f"(read as {reply.language}, the question's)",
            )
        if not clauses:
            return Verdict(INAPPLICABLE, f"the reply does not touch the criterion (no clause matches {_sources(cues)})")
    verdicts = [*_content(rule, reply)]
    if rule.check is not None:
        verdicts.append(installed().checks[rule.check].run(reply.text, clauses, rule, reply.context, reply.language))
    for outcome in (FAILED, CANT_TELL, PASSED, INAPPLICABLE):  # the first outcome any part has decides
        chosen = [verdict for verdict in verdicts if verdict.outcome == outcome]
        if chosen:
            span = next((verdict.span for verdict in chosen if verdict.span), None)
            return Verdict(outcome, "; ".join(verdict.rationale for verdict in chosen), span)
    return Verdict(CANT_TELL, "the reply says nothing the rule forbids, and the rule has nothing that could pass it")


def _content(rule: JudgingRule, reply: _Reply) -> Iterable[Verdict]:
    """The required and forbidden content's parts of a ruling, by the patterns in the reply's language; a match
    its rule's negation words negate is not stated (:mod:`.negation`)."""
    forbidden, required = _in(rule.forbids, reply.language), _in(rule.requires, reply.language)
    for kind, declared, usable in (("forbidden", rule.forbids, forbidden), ("required", rule.requires, required)):
        if declared and not usable:
            yield Verdict(CANT_TELL, f"the rule has no {kind} pattern in the reply's language ({reply.language})")
    if not forbidden and not required:
        return
    negation = negation_in(rule, reply.context, reply.language)
    if negation.unreadable:
        yield Verdict(
            CANT_TELL,
            f"the rule's negation cue has no words in the reply's language ({reply.language}): "
            "the judge cannot tell what the reply says from what it negates",
        )
        return
    for pattern in forbidden:
        stated, _ = negation.matches(pattern.regex, reply.text, reply.clauses)
        if stated:
            yield Verdict(
                FAILED,
                f"the reply says {stated[0][0]!r}, which the rule forbids (/{pattern.regex.pattern}/)",
                stated[0].span(),
            )
    found = {pattern: negation.matches(pattern.regex, reply.text, reply.clauses) for pattern in required}
    missing = [pattern for pattern, (stated, _) in found.items() if not stated]
    negated = [(match, word) for pattern in missing for match, word in found[pattern][1]]
    said = "".join(f"; it says {match[0]!r} only negated ({word!r})" for match, word in negated[:1])
    if missing and not reply.reading.known:
        yield Verdict(
            CANT_TELL,
            f"the reply has nothing matching {_sources(missing, ' nor ')}{said}, but lingua "
            f"cannot tell its language (read as {reply.language}, the question's)",
        )
    elif missing:
        yield Verdict(
            FAILED,
            f"the reply has nothing matching {_sources(missing, ' nor ')}{said}",
            negated[0][0].span() if negated else None,
        )
    elif found:
        first = [stated[0] for stated, _ in found.values()]
        yield Verdict(PASSED, "the reply says " + ", ".join(repr(match[0]) for match in first), first[0].span())


def judge(
    conversation: CaseTrace | Sequence[Turn], context: ProbeContext, rules: Iterable[JudgingRule]
) -> list[Determination]:
    """Every rule whose criterion ``context`` names, on every reply of the conversation (in turn order, then
    rule order): one automatic determination each, on the reply to user turn N (a reply before any user
    turn answers nothing and is not judged)."""
    turns = conversation.turns if isinstance(conversation, CaseTrace) else tuple(conversation)
    applicable = [
        (rule, context.criteria[rule.criterion_id]) for rule in rules if rule.criterion_id in context.criteria
    ]
    determinations, asked = [], []
    for turn in turns:
        if turn.role == "user":
            asked.append(turn.text)
        elif turn.role == "assistant" and asked:
            reply = _Reply(len(asked), turn.text, unicodedata.normalize("NFC", "\n".join(asked)), context)
            for rule, criterion in applicable:
                verdict = _rule_on(rule, reply)
                pointer = Pointer(reply.turn, *verdict.span) if verdict.span else None
                determinations.append(
                    Determination(
                        criterion,
                        context.probe,
                        reply.turn,
                        verdict.outcome,
                        AUTOMATIC,
                        rule.judge,
                        verdict.rationale,
                        pointer,
                    )
                )
    return determinations
