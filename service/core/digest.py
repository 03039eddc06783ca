"""Content digests of graphs: SHA-256 over the RDFC-1.0 canonical N-Quads form of canonical literals.

RDF Dataset Canonicalization (RDFC-1.0, W3C Recommendation 2024, https://www.w3.org/TR/rdf-canon/)
relabels blank nodes deterministically, so two serializations of the same graph (other blank node
labels, other order, other syntax) get the same digest. The digest is taken over the triples alone
(each as a quad in the default graph), so it does not depend on the name a graph is stored under.
Graphs without blank nodes skip relabelling: their canonical form is their sorted canonical
N-Triples, which is what RDFC-1.0 produces for them too.

Before that, every literal is replaced by a canonical literal of the same value, defined in plain Python
and not by any store (:mod:`.literal_forms`, which gives the rules): stores keep values, not spellings, and
each gives values back in its own form (Oxigraph reads ``"1.0"^^xsd:decimal`` back as ``"1"``, Virtuoso reads
``"10"^^xsd:decimal`` back as an ``xsd:integer``). So a digest taken when a graph is written is the digest
anyone recomputes from what any store returns later.

Skolem IRIs (``…/.well-known/genid/…``, RDF 1.1 §3.5) stand for blank nodes: the service writes them to a
remote store in place of blank nodes, and the digest reads them as blank nodes again, so a graph has
the same digest whether its blank nodes were stored as such or skolemized.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TypeVar

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, Triple

from . import relabel
from .literal_forms import XSD_STRING, canonical_literal

ALGORITHM = "RDFC-1.0 canonical N-Quads of canonical literals, sorted, SHA-256"


def canonical_literals(statements: Iterable[Quad | Triple]) -> list[Triple]:
    """The triples with every literal replaced by its :func:`canonical_literal`."""
    triples = [s.triple if isinstance(s, Quad) else s for s in statements]
    literals = {t.object for t in triples if isinstance(t.object, Literal)}
    changed: dict[Literal, Literal] = {}
    for literal in literals:
        if literal.datatype.value == XSD_STRING:
            continue
        canonical = canonical_literal(literal)
        if canonical is not literal:
            changed[literal] = canonical
    if not changed:
        return triples
    return [
        Triple(t.subject, t.predicate, changed[t.object])
        if isinstance(t.object, Literal) and t.object in changed
        else t
        for t in triples
    ]


_GENID = "/.well-known/genid/"
_Term = TypeVar("_Term", bound=NamedNode | BlankNode | Literal | Triple)


def blank_skolems(triples: list[Triple]) -> list[Triple]:
    """The triples with every skolem IRI read as the blank node it stands for."""

    def term(value: _Term) -> _Term | BlankNode:
        if isinstance(value, NamedNode) and _GENID in value.value:
            return BlankNode(hashlib.sha256(value.value.encode("utf-8")).hexdigest()[:32])
        return value

    if not any(
        _GENID in t.subject.value or _GENID in t.object.value
        for t in triples
        if not isinstance(t.subject, Triple) and not isinstance(t.object, Triple)
    ):
        return triples
    return [Triple(term(t.subject), t.predicate, term(t.object)) for t in triples]


def canonical_nquads(statements: Iterable[Quad | Triple], time_limit_s: float | None = None) -> bytes:
    """The canonical N-Quads document of one graph's statements (canonical literals, skolem IRIs as blank
    nodes, graph names dropped).

    As ``_canonical(blank_skolems(canonical_literals(statements)))``, in one pass over the statements that also
    notes whether any blank node or skolem IRI is there (the writes of a run digest thousands of graphs).
    ``time_limit_s`` is for untrusted statements: blank nodes that are costly to relabel are relabelled in a
    child process killed at that limit (422), see :mod:`.relabel`."""
    triples: list[Triple] = []
    blank = skolem = False
    for statement in statements:
        t = statement.triple if type(statement) is Quad else statement
        subject, value = t.subject, t.object
        if type(value) is Literal:
            if value.language is not None or value.datatype.value != XSD_STRING:
                canonical = canonical_literal(value)
                if canonical is not value:
                    t = Triple(subject, t.predicate, canonical)
        elif type(value) is BlankNode:
            blank = True
        elif type(value) is NamedNode and _GENID in value.value:
            skolem = True
        if type(subject) is BlankNode:
            blank = True
        elif type(subject) is NamedNode and _GENID in subject.value:
            skolem = True
        triples.append(t)
    if skolem:
        return _canonical(blank_skolems(triples), time_limit_s=time_limit_s)
    return _canonical(triples, blank, time_limit_s)


def _canonical(statements: list[Triple], blank: bool | None = None, time_limit_s: float | None = None) -> bytes:
    """The sorted canonical N-Triples of ``statements``, blank nodes relabelled when there are any (``blank``:
    whether there are, when the caller knows); out of process when ``time_limit_s`` is given and it may be slow."""
    if blank is None:
        blank = any(isinstance(s.subject, BlankNode) or isinstance(s.object, BlankNode) for s in statements)
    if blank and time_limit_s is not None and not relabel.cheap(statements):
        return relabel.sorted_canonical_within(statements, time_limit_s)
    return relabel.sorted_canonical(statements, blank)


def graph_digest(statements: Iterable[Quad | Triple], time_limit_s: float | None = None) -> str:
    """Lower-case hex SHA-256 of the canonical form of one graph's statements (``time_limit_s``: as for
    :func:`canonical_nquads`)."""
    return hashlib.sha256(canonical_nquads(statements, time_limit_s)).hexdigest()


def digest_and_size(statements: Iterable[Quad | Triple], time_limit_s: float | None = None) -> tuple[str, int]:
    """The graph digest and the number of distinct triples, from one canonicalization (``time_limit_s``: as for
    :func:`canonical_nquads`)."""
    canonical = canonical_nquads(statements, time_limit_s)
    return hashlib.sha256(canonical).hexdigest(), canonical.count(b"\n")
