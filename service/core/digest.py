"""Content digests of graphs: SHA-256 over the RDFC-1.0 canonical N-Quads form.

RDF Dataset Canonicalization (RDFC-1.0, W3C Recommendation 2024, https://www.w3.org/TR/rdf-canon/)
relabels blank nodes deterministically, so two serializations of the same graph (other blank node
labels, other order, other syntax) get the same digest. The digest is taken over the triples alone
(each as a quad in the default graph), so it does not depend on the name a graph is stored under.
Graphs without blank nodes skip relabelling: their canonical form is their sorted canonical
N-Triples, which is what RDFC-1.0 produces for them too.

Literals are digested in the form the store keeps them, not as a client spelled them: Oxigraph stores
values (``"1.0"^^xsd:decimal`` reads back as ``"1"``, ``+00:00`` as ``Z``, language tags in lower
case), so a digest taken when a graph is written is the digest anyone recomputes from what the store
returns later.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pyoxigraph import (
    BlankNode,
    CanonicalizationAlgorithm,
    Dataset,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Store,
    Triple,
    serialize,
)

ALGORITHM = "RDFC-1.0 canonical N-Quads, sorted, SHA-256"


_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_PROBE = "urn:x-ob-caie:literal:"


def stored_form(statements: Iterable[Quad | Triple]) -> list[Triple]:
    """The triples with every typed or language-tagged literal in the lexical form Oxigraph stores."""
    triples = [s.triple if isinstance(s, Quad) else s for s in statements]
    odd = list({t.object for t in triples if isinstance(t.object, Literal) and t.object.datatype.value != _XSD_STRING})
    if not odd:
        return triples
    store = Store()
    subject = NamedNode(_PROBE)
    store.extend(Quad(subject, NamedNode(f"{_PROBE}{i}"), literal) for i, literal in enumerate(odd))
    stored = {odd[int(q.predicate.value[len(_PROBE):])]: q.object for q in store}
    return [Triple(t.subject, t.predicate, stored.get(t.object, t.object)) if isinstance(t.object, Literal) else t
            for t in triples]


def canonical_nquads(statements: Iterable[Quad | Triple]) -> bytes:
    """The canonical N-Quads document of one graph's statements (graph names dropped)."""
    return _canonical(stored_form(statements))


def _canonical(statements: list[Triple]) -> bytes:
    if any(isinstance(s.subject, BlankNode) or isinstance(s.object, BlankNode) for s in statements):
        dataset = Dataset(Quad(s.subject, s.predicate, s.object) for s in statements)
        dataset.canonicalize(CanonicalizationAlgorithm.RDFC_1_0)
        statements = list(dataset)
    lines = sorted(set(serialize(statements, format=RdfFormat.N_TRIPLES).splitlines()))
    return b"".join(line + b"\n" for line in lines)


def graph_digest(statements: Iterable[Quad | Triple]) -> str:
    """Lower-case hex SHA-256 of the canonical form of one graph's statements."""
    return hashlib.sha256(canonical_nquads(statements)).hexdigest()


def digest_and_size(statements: Iterable[Quad | Triple]) -> tuple[str, int]:
    """The graph digest and the number of distinct triples, from one canonicalization."""
    canonical = canonical_nquads(statements)
    return hashlib.sha256(canonical).hexdigest(), canonical.count(b"\n")
