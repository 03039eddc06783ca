"""Content digests of graphs: SHA-256 over the RDFC-1.0 canonical N-Quads form.

RDF Dataset Canonicalization (RDFC-1.0, W3C Recommendation 2024, https://www.w3.org/TR/rdf-canon/)
relabels blank nodes deterministically, so two serializations of the same graph (other blank node
labels, other order, other syntax) get the same digest. The digest is taken over the triples alone
(each as a quad in the default graph), so it does not depend on the name a graph is stored under.
Graphs without blank nodes skip relabelling: their canonical form is their sorted canonical
N-Triples, which is what RDFC-1.0 produces for them too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pyoxigraph import BlankNode, CanonicalizationAlgorithm, Dataset, Quad, RdfFormat, Triple, serialize

ALGORITHM = "RDFC-1.0 canonical N-Quads, sorted, SHA-256"


def canonical_nquads(statements: Iterable[Quad | Triple]) -> bytes:
    """The canonical N-Quads document of one graph's statements (graph names dropped)."""
    statements = list(statements)
    try:
        return _canonical(statements)
    except ValueError:
        return _canonical([Triple(s.subject, s.predicate, s.object) for s in statements])


def _canonical(statements: list[Quad | Triple]) -> bytes:
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
