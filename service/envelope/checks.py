"""Checks on a scope or envelope before anything is stored; each problem is named in the error.

All problems found are reported at once (422, ``detail`` lists them), so a client can fix a body in
one round trip.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from pyoxigraph import NamedNode, Triple

from ..core.errors import Unprocessable
from ..core.namespaces import OWL, RDF
from ..scope.model import Scope
from .model import EnvelopeContent

IDENTIFIER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_NOT_A_TERM = {OWL + "Ontology"}


def declared_terms(triples: Iterable[Triple]) -> set[str]:
    """The IRIs a graph declares: every IRI subject with an rdf:type (class, property, individual, concept)."""
    return {
        t.subject.value
        for t in triples
        if t.predicate.value == RDF + "type"
        and isinstance(t.subject, NamedNode)
        and not isinstance(t.object, Triple)
        and t.object.value not in _NOT_A_TERM
    }


def _duplicates(kind: str, ids: Iterable[str]) -> list[str]:
    return [f"duplicate {kind} id {i!r}" for i, n in Counter(ids).items() if n > 1]


def _bad_ids(kind: str, ids: Iterable[str]) -> list[str]:
    return [
        f"invalid {kind} id {i!r}: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
        for i in ids
        if not IDENTIFIER.match(i)
    ]


def raise_if(problems: list[str], what: str) -> None:
    if problems:
        raise Unprocessable(f"the {what} is invalid: " + "; ".join(problems), detail=problems)


def check_scope(scope: Scope, dso_terms: set[str], kg_terms: set[str]) -> None:
    """Ids unique and well formed; every use-boundary, setting and out-of-scope IRI declared in the DSO or KGs."""
    problems = _bad_ids("evaluation", [scope.id])
    assumptions = [a.id for a in scope.operating_environment.assumptions]
    declarations = [o.id for o in scope.out_of_scope]
    problems += _bad_ids("assumption", assumptions) + _duplicates("assumption", assumptions)
    problems += _bad_ids("out-of-scope", declarations) + _duplicates("out-of-scope", declarations)
    problems += _duplicates("knowledge graph", scope.knowledge_graphs)
    known = dso_terms | kg_terms
    for field, iri in scope.use_boundary.values():
        if iri not in known:
            problems.append(
                f"useBoundary.{field}: <{iri}> is not declared in the DSO {scope.dso!r} or the knowledge graphs"
            )
    for iri in scope.operating_environment.settings:
        if iri not in known:
            problems.append(
                f"operatingEnvironment.settings: <{iri}> is not declared in the DSO {scope.dso!r} or the knowledge graphs"
            )
    for declaration in scope.out_of_scope:
        for iri in declaration.concepts:
            if iri not in dso_terms:
                problems.append(
                    f"out-of-scope {declaration.id!r}: unknown DSO concept <{iri}> (not declared in the DSO {scope.dso!r})"
                )
    raise_if(problems, "scope")


def requirement_cycles(parents: dict[str, str | None]) -> list[list[str]]:
    """Each cycle of the refinement relation once, as the path that closes it (``[a, b, a]``)."""
    cycles: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    for start in sorted(parents):
        path, node = [start], parents.get(start)
        while node is not None and node in parents and node not in path:
            path.append(node)
            node = parents.get(node)
        if node is not None and node in path:
            cycle = path[path.index(node) :]
            key = frozenset(cycle)
            if key not in seen:
                seen.add(key)
                first = min(cycle)
                rotated = cycle[cycle.index(first) :] + cycle[: cycle.index(first)]
                cycles.append(rotated + [first])
    return cycles


def check_envelope(content: EnvelopeContent, dso_terms: set[str], dso: str) -> None:
    """Ids unique and known, refinement acyclic, weights > 0, every concept declared in the DSO."""
    requirement_ids = [r.id for r in content.requirements]
    criterion_ids = [c.id for c in content.criteria]
    problems = _bad_ids("requirement", requirement_ids) + _duplicates("requirement", requirement_ids)
    problems += _bad_ids("criterion", criterion_ids) + _duplicates("criterion", criterion_ids)
    if not content.criteria:
        problems.append("an envelope needs at least one acceptance criterion")
    known = set(requirement_ids)
    for r in content.requirements:
        if r.parent is not None and r.parent not in known:
            problems.append(f"requirement {r.id!r} refines unknown requirement {r.parent!r}")
        problems += [
            f"requirement {r.id!r} bears on unknown DSO concept <{iri}> (not declared in the DSO {dso!r})"
            for iri in r.concepts
            if iri not in dso_terms
        ]
    for cycle in requirement_cycles({r.id: r.parent for r in content.requirements}):
        problems.append(
            "requirement cycle: " + " -> ".join(cycle) + " (a requirement may not refine itself, even indirectly)"
        )
    for c in content.criteria:
        if c.requirement not in known:
            problems.append(f"criterion {c.id!r} points at unknown requirement {c.requirement!r}")
        if c.weight is None:
            problems.append(f"criterion {c.id!r} has no weight: every criterion needs a weight greater than zero")
        elif not c.weight.is_finite() or c.weight <= 0:
            problems.append(f"criterion {c.id!r} has weight {c.weight}: a weight must be a decimal greater than zero")
        if c.judged_by is None:
            problems.append(f"criterion {c.id!r} does not say how it is judged: human, rule or model")
        problems += _bad_ids("dimension", [c.dimension]) + _bad_ids("category", [c.category])
        problems += [
            f"criterion {c.id!r} bears on unknown DSO concept <{iri}> (not declared in the DSO {dso!r})"
            for iri in c.concepts
            if iri not in dso_terms
        ]
    raise_if(problems, "envelope")
