"""The bed-nets domain's grounded check (examples/bednets, the second worked example): where a reply says to dry a
washed net is where the DSO's washing advice says (``bn:dryIn``). It reads the domain's own property and nothing else
of the engine than a plugin may (clauses, the DSO's labels in the reply's language), and is registered under
``caie.checks`` by this package's ``pyproject.toml``: a third party's check, as the tests see it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rdflib import URIRef
from rdflib.namespace import RDF

from service.judgments.checks import Clause, GroundedCheck, Verdict, label
from service.judgments.model import CANT_TELL, FAILED, PASSED, JudgingRule, ProbeContext
from service.judgments.vocabulary import alternation, words

BN = "https://example.org/dso/bednets/"


def drying_place(text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str) -> Verdict:
    """``bn:DryingPlaceCheck``: every drying place the reply names (a ``bn:DryingPlace`` by its labels in the
    reply's language) is one the DSO's ``bn:Washing`` is to be dried in; none named says cantTell."""
    dso = context.dso
    right = set(dso.objects(URIRef(BN + "Washing"), URIRef(BN + "dryIn")))
    if not right:
        return Verdict(CANT_TELL, "the DSO says nowhere a washed net is to be dried (bn:Washing bn:dryIn)")
    named = []
    for place in sorted(dso.subjects(RDF.type, URIRef(BN + "DryingPlace"))):
        pattern = re.compile(alternation(words((dso,), place, tag)), re.IGNORECASE)
        named += [(clause.start + m.start(), clause.start + m.end(), place) for clause in clauses
                  for m in pattern.finditer(clause.text)]
    advised = " or ".join(label(dso, place) or str(place) for place in sorted(right))
    for start, end, place in sorted(named):
        if place not in right:
            return Verdict(FAILED, f"the reply says to dry the net in {text[start:end]!r}; the DSO says in {advised}",
                           (start, end))
    if named:
        start, end, _ = min(named)
        return Verdict(PASSED, f"the reply says to dry the net in {text[start:end]!r}, as the DSO does", (start, end))
    return Verdict(CANT_TELL, f"the reply names no place to dry the net in the reply's language ({tag})")


DRYING_PLACE = GroundedCheck(BN + "DryingPlaceCheck", drying_place)
