"""The bed-nets domain's grounded check (examples/bednets, the second worked example): where a reply says to dry a
washed net is where the DSO's washing advice says (``bn:dryIn``). It reads the domain's own property and nothing else
of the engine than a plugin may (clauses, the DSO's labels in the reply's language, its rule's negation words), and is registered under
``caie.checks`` by this package's ``pyproject.toml``: a third party's check, as the tests see it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rdflib import URIRef
from rdflib.namespace import RDF

from service.judgments.checks import Clause, GroundedCheck, Verdict, label
from service.judgments.model import CANT_TELL, FAILED, PASSED, JudgingRule, ProbeContext
from service.judgments.negation import negation as negation_in
from service.judgments.vocabulary import alternation, words

BN = "https://example.org/dso/bednets/"


def drying_place(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``bn:DryingPlaceCheck``: every drying place the reply names (a ``bn:DryingPlace`` by its labels in the
    reply's language) is one the DSO's ``bn:Washing`` is to be dried in, and every place it advises against (named
    after its rule's negation words: "never in the sun") is not; none said to dry in says cantTell."""
    dso = context.dso
    right = set(dso.objects(URIRef(BN + "Washing"), URIRef(BN + "dryIn")))
    if not right:
        return Verdict(CANT_TELL, "the DSO says nowhere a washed net is to be dried (bn:Washing bn:dryIn)")
    negation = negation_in(rule, context, tag)
    if negation.unreadable:
        return Verdict(CANT_TELL, f"the rule's negation cue has no words in the reply's language ({tag})")
    named = []  # (start, end, place, the negation word before it or None)
    for place in sorted(dso.subjects(RDF.type, URIRef(BN + "DryingPlace")), key=str):
        pattern = re.compile(alternation(words((dso,), place, tag)), re.IGNORECASE)
        spans = [
            (clause.start + m.start(), clause.start + m.end())
            for clause in clauses
            for m in pattern.finditer(clause.text)
        ]
        named += [(start, end, place, negation.word_before(text, clauses, start)) for start, end in spans]
    advised = " or ".join(label(dso, place) or str(place) for place in sorted(right, key=str))
    named.sort(key=lambda found: found[:2])
    for start, end, place, negated in named:
        if negated is None and place not in right:
            return Verdict(
                FAILED, f"the reply says to dry the net in {text[start:end]!r}; the DSO says in {advised}", (start, end)
            )
    for start, end, place, negated in named:
        if negated is not None and place in right:
            return Verdict(
                FAILED,
                f"the reply advises against drying the net in {text[start:end]!r} ({negated!r}); "
                f"the DSO says in {advised}",
                (start, end),
            )
    stated = [(start, end) for start, end, _, negated in named if negated is None]
    if stated:
        start, end = stated[0]
        return Verdict(PASSED, f"the reply says to dry the net in {text[start:end]!r}, as the DSO does", (start, end))
    if named:
        return Verdict(CANT_TELL, f"the reply says only where not to dry the net; the DSO says in {advised}")
    return Verdict(CANT_TELL, f"the reply names no place to dry the net in the reply's language ({tag})")


DRYING_PLACE = GroundedCheck(BN + "DryingPlaceCheck", drying_place)
