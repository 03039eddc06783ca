"""The reference path: the specification run as written, with no code shared with the fast path.

For a batch of candidates (their RDF as :func:`.facets.describe` writes it, plus a probe per criterion,
:func:`probe_triples`), the reference

* computes owlrl's OWL 2 RL closure (``OWLRL_Semantics``; an inconsistency is kept where it arises and not
  spread to every class and term, :class:`_ClashAtSource`) over the *full* DSO +
  KGs + the candidates, and reads the clashes on each candidate's scenario and person nodes:
  ``cls-nothing2`` (the node is in a class the closure makes a subclass of ``owl:Nothing``: the most
  specific such classes are the rules), ``prp-fp`` + ``eq-diff`` (two values of a functional property that
  are declared different or are different literals: the property is the rule), ``cax-dw``/``cax-adc``
  (two disjoint classes: the first by IRI is the rule);
* runs pySHACL with the scenario shapes over the asserted DSO + KGs + candidates (SHACL-SPARQL on, no
  inference, as the shape files say a third party runs them); a result on a scenario or person blocks the
  scenario, a result on a probe blocks the scenario-criterion pair; the rule is the top-level node shape.

Candidates are checked in chunks (pySHACL's cost grows with the square of one data graph). A candidate's
verdict is that of the closure of DSO + KGs + *its own* RDF: in OWL an equality is global, so a chunk
whose closure has a new triple on shared terms only (an ``owl:sameAs`` between two DSO individuals from a
functional property) or a triple joining two candidates is *contaminated*; its candidates that own a node
with such a value are then checked one by one and the rest again, and a chunk still contaminated is split
in halves down to single candidates. Slow (seconds per chunk) but obviously the specification; the fast
path (:mod:`.production`) calls it to cross-check its tables and for the rules it cannot compile.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import owlrl
from rdflib import Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS
from rdflib.term import Node

from ..core.validation import closure_graph, run_pyshacl
from .facets import EPO, Facet, describe, person_iri, subject_iri
from .rules import owner_map, violations
from .space import FacetSpace

Triple = tuple[Node, Node, Node]


@dataclass(frozen=True, order=True)
class Block:
    """Why a scenario (or a scenario-criterion pair) is blocked: the rule's IRI and the message."""

    rule: str
    message: str


@dataclass(frozen=True, order=True)
class Trigger:
    """A scenario fact that makes a criterion bear on a probe (``epo:bearsWhen``, docs/routing.md): the facet
    ``facet`` (its ``epo:ScenarioFacet`` IRI) has one of ``values``, or a value narrower than one of them (a
    boolean facet's values are the lexical forms ``true`` and ``false``)."""

    facet: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion as the rules see it: its IRI, the DSO concepts it bears on and the triggers it
    declares (a criterion with triggers is routed by them alone; one without, by its concepts)."""

    iri: str
    concepts: frozenset[str]
    triggers: tuple[Trigger, ...] = ()


def trigger_iri(criterion: str, number: int) -> str:
    """The IRI of a criterion's ``number``-th trigger (1-based), as the envelope records it."""
    return f"{criterion}/triggers/{number}"


def probe_triples(probe: str, scenario: str, criterion: str) -> list[Triple]:
    """A candidate probe: the scenario linked to a criterion (what the routing rules judge)."""
    p = URIRef(probe)
    return [(p, RDF.type, EPO.Probe), (p, EPO.fromScenario, URIRef(scenario)), (p, EPO.exercises, URIRef(criterion))]


def criterion_triples(criteria: Iterable[Criterion]) -> list[Triple]:
    out: list[Triple] = []
    for c in criteria:
        out.append((URIRef(c.iri), RDF.type, EPO.AcceptanceCriterion))
        out += [(URIRef(c.iri), EPO.bearsOnConcept, URIRef(k)) for k in sorted(c.concepts)]
        for number, trigger in enumerate(c.triggers, 1):
            node = URIRef(trigger_iri(c.iri, number))
            out += [(URIRef(c.iri), EPO.bearsWhen, node), (node, EPO.onFacet, URIRef(trigger.facet))]
            out += [(node, EPO.triggerValue, trigger_term(value)) for value in trigger.values]
    return out


def trigger_term(value: str) -> Node:
    """A trigger value as an RDF term: ``true``/``false`` as xsd:boolean literals, anything else an IRI."""
    return Literal(value == "true") if value in ("true", "false") else URIRef(value)


def node_role(node: Node) -> str:
    """The asker and the person asked about are both "person": a clash on a person's own facets reads the same
    wherever the persona puts them."""
    return "person" if str(node).endswith(("#person", "#subject")) else "scenario"


# The OWL clash messages: the fast path (:mod:`.owl`) words its findings with these, so that both name a
# clash the same way; which clashes there are is decided separately by each path.
def nothing_message(node: Node, cls: Node, label: object) -> str:
    return (
        f"OWL 2 RL inconsistency (cls-nothing2): the scenario's {node_role(node)} is classified into "
        f"{cls.n3()} ({label}), which the DSO makes a subclass of owl:Nothing"
    )


def functional_message(node: Node, prop: Node, a: Node, b: Node) -> str:
    return (
        f"OWL 2 RL inconsistency (prp-fp, eq-diff): the scenario's {node_role(node)} has two different values, "
        f"{a.n3()} and {b.n3()}, of the functional property {prop.n3()}"
    )


def disjoint_message(node: Node, a: Node, b: Node) -> str:
    return (
        f"OWL 2 RL inconsistency (cax-dw, cax-adc): the scenario's {node_role(node)} is an instance of "
        f"{a.n3()} and {b.n3()}, declared disjoint"
    )


class _ClashAtSource(owlrl.OWLRL_Semantics):  # type: ignore[misc]  # owlrl ships no types: its class is Any
    """owlrl's OWL 2 RL rules, except that an inconsistency does not spread: the equality rules (eq-*) are
    not applied, so an ``owl:sameAs`` stays where prp-fp derives it (eq-ref only adds ``x owl:sameAs x`` and
    eq-diff only notes errors, which the clash reading covers), and ``owl:Nothing`` is not made a subclass of
    every class (scm-cls), so an instance of owl:Nothing is not an instance of everything. Each clash is then
    read where it arises, and one candidate's equality of two DSO terms cannot leak into the others of its
    chunk. Every other rule runs as owlrl has it."""

    def _equality(self, triple: tuple[Node, Node, Node], cycle_num: int) -> None:
        return None

    def store_triple(self, t: tuple[Node, Node, Node]) -> None:
        if not (t[0] == OWL.Nothing and t[1] == RDFS.subClassOf and t[2] != OWL.Nothing):
            super().store_triple(t)


_ERRORS = "http://www.daml.org/2002/03/agents/agent-ont#"
"""owlrl writes its error messages into the graph in this namespace."""


def close(graph: Graph) -> Graph:
    """The OWL 2 RL closure of ``graph``, in place, with :class:`_ClashAtSource`'s rules."""
    owlrl.DeductiveClosure(_ClashAtSource, axiomatic_triples=False, datatype_axioms=False).expand(graph)
    return graph


_CLOSED: dict[frozenset[Triple], Graph] = {}
"""Closures of DSO + KGs by their triples (a few, oldest dropped first): seconds each, the same for every
derivation over the same graphs."""
_CLOSED_LOCK = threading.Lock()


def _inert(t: Triple) -> bool:
    """New triples that no rule reads from another candidate: a literal typed by its datatype (prp-rng),
    an equality (not propagated) and owlrl's error notes."""
    return (
        (isinstance(t[0], Literal) and t[1] == RDF.type)
        or t[1] == OWL.sameAs
        or str(t[1]).startswith(_ERRORS)
        or str(t[2]).startswith(_ERRORS)
    )


class ReferenceSpec:
    """DSO + KGs + scenario shapes, the facet space and criteria: what the specification reads."""

    def __init__(
        self,
        dso: Graph,
        kgs: Sequence[Graph],
        shapes: Graph,
        facets: Sequence[Facet],
        criteria: Sequence[Criterion] = (),
        space: FacetSpace | None = None,
    ) -> None:
        self.source = Graph()
        for g in (dso, *kgs):
            self.source += g
        self.shapes = shapes
        self.facets = tuple(facets)
        self.space = space if space is not None else FacetSpace(self.facets)
        self.criteria = tuple(criteria)

    @cached_property
    def closed(self) -> Graph:
        """The OWL 2 RL closure of DSO + KGs alone (shared by specs over the same triples; never modified)."""
        key = frozenset(self.source)
        with _CLOSED_LOCK:
            found = _CLOSED.get(key)
        if found is None:
            found = closure_graph()
            found += self.source
            size = -1
            while size != len(found):  # to a fixpoint: owlrl may add a few triples on a rerun
                size = len(found)
                close(found)
            with _CLOSED_LOCK:
                _CLOSED[key] = found
                while len(_CLOSED) > 4:
                    _CLOSED.pop(next(iter(_CLOSED)))
        return found

    @cached_property
    def _closed_set(self) -> frozenset[Triple]:
        return frozenset(self.closed)

    @cached_property
    def _owners(self) -> dict[Node, URIRef]:
        return owner_map(self.shapes)

    @cached_property
    def _axioms(self) -> tuple[set[URIRef], set[frozenset[Node]], set[frozenset[Node]], set[URIRef]]:
        """Functional properties, pairs declared different, disjoint class pairs, unsatisfiable classes."""
        g = self.closed
        functional = {p for p in g.subjects(RDF.type, OWL.FunctionalProperty) if isinstance(p, URIRef)}
        different = {frozenset((a, b)) for a, b in g.subject_objects(OWL.differentFrom) if a != b}
        for axiom in g.subjects(RDF.type, OWL.AllDifferent):
            for lst in (*g.objects(axiom, OWL.distinctMembers), *g.objects(axiom, OWL.members)):
                members = list(Collection(g, lst))
                different |= {frozenset((a, b)) for a in members for b in members if a != b}
        disjoint = {frozenset((a, b)) for a, b in g.subject_objects(OWL.disjointWith) if a != b}
        for axiom in g.subjects(RDF.type, OWL.AllDisjointClasses):
            for lst in g.objects(axiom, OWL.members):
                members = list(Collection(g, lst))
                disjoint |= {frozenset((a, b)) for a in members for b in members if a != b}
        unsatisfiable = {c for c in g.subjects(RDFS.subClassOf, OWL.Nothing) if isinstance(c, URIRef)} - {OWL.Nothing}
        return functional, different, disjoint, unsatisfiable

    # ------------------------------------------------------------------------------------------ OWL 2 RL

    def owl_blocks(self, data: Sequence[Triple], owner: dict[Node, int]) -> dict[int, set[Block]]:
        """OWL 2 RL clashes per candidate (``owner``: each candidate node -> its candidate), isolating
        candidates whose closure would leak into others (see the module docstring)."""
        ids = sorted(set(owner.values()))
        by_id: dict[int, list[Triple]] = {i: [] for i in ids}
        for t in data:
            i = next((owner[n] for n in t if n in owner), None)
            if i is not None:
                by_id[i].append(t)
        return self._owl(ids, by_id, owner)

    def _owl(self, ids: list[int], by_id: dict[int, list[Triple]], owner: dict[Node, int]) -> dict[int, set[Block]]:
        graph = closure_graph()
        graph += self.closed
        for i in ids:
            graph += by_id[i]
        close(graph)
        culprits = self._contamination(graph, owner) if len(ids) > 1 else None
        if culprits is None:
            return self._findings(graph, owner, ids)
        out: dict[int, set[Block]] = {}
        rest = [i for i in ids if i not in culprits]
        if not culprits or not rest:  # no single owner to blame: halves
            rest, culprits = ids[: len(ids) // 2], set(ids[len(ids) // 2 :])
            out.update(self._owl(sorted(culprits), by_id, owner))
        else:
            for i in sorted(culprits):
                out.update(self._owl([i], by_id, owner))
        if rest:
            out.update(self._owl(rest, by_id, owner))
        return out

    def _contamination(self, graph: Graph, owner: dict[Node, int]) -> set[int] | None:
        """``None`` if every new triple belongs to one candidate; else the candidates with a node whose value
        is a shared term in a new shared-only triple (the likely sources of a leaked equality)."""
        shared: set[Node] = set()
        clean = True
        for t in graph:
            if t in self._closed_set or _inert(t):
                continue
            owners = {owner[n] for n in t if n in owner}
            if len(owners) != 1:
                clean = False
                if not owners:
                    shared |= {t[0], t[2]}
        if clean:
            return None
        return {owner[s] for s, _p, o in graph if s in owner and o in shared}

    def _findings(self, graph: Graph, owner: dict[Node, int], ids: Iterable[int]) -> dict[int, set[Block]]:
        functional, different, disjoint, unsatisfiable = self._axioms
        out: dict[int, set[Block]] = {i: set() for i in ids}
        for node, i in owner.items():
            if i not in out or str(node).rsplit("#", 1)[-1].startswith("probe"):
                continue
            found: dict[str, str] = {}
            types = set(graph.objects(node, RDF.type))
            bad = {c for c in types if c in unsatisfiable}
            for c in bad:
                if not any(
                    d != c and (d, RDFS.subClassOf, c) in graph and (c, RDFS.subClassOf, d) not in graph for d in bad
                ):
                    found[str(c)] = nothing_message(node, c, self.closed.value(c, RDFS.label))
            for prop in sorted(functional, key=str):
                values = sorted(set(graph.objects(node, prop)), key=str)
                for k, a in enumerate(values):
                    for b in values[k + 1 :]:
                        literal_clash = isinstance(a, Literal) and isinstance(b, Literal) and not a.eq(b)
                        if literal_clash or frozenset((a, b)) in different:
                            found.setdefault(str(prop), functional_message(node, prop, a, b))
            named = sorted((t for t in types if isinstance(t, URIRef)), key=str)
            for k, a in enumerate(named):
                for b in named[k + 1 :]:
                    if frozenset((a, b)) in disjoint:
                        found.setdefault(str(a), disjoint_message(node, a, b))
            out[i] |= {Block(rule, message) for rule, message in found.items()}
        return out

    # ------------------------------------------------------------------------------------------ SHACL

    def shacl(self, data: Iterable[Triple], rules: Sequence[str] | None = None) -> list[tuple[Node, str, str]]:
        """pySHACL with every shape over DSO + KGs + ``data`` (asserted): (focus node, rule IRI, message) per
        violation of one of ``rules`` (all when ``None``). Every shape runs, since a rule may use another
        shape (``sh:node``) that pySHACL's own shape selection would leave out."""
        return violations(run_pyshacl((*self.source, *data), self.shapes), self._owners, rules)


def scenario_iri(base: str, index: int) -> str:
    return f"{base}/scenarios/{index}"


Result = tuple[dict[int, tuple[Block, ...]], dict[tuple[int, str], tuple[Block, ...]]]


def reference_check(
    spec: ReferenceSpec,
    indices: Sequence[int],
    base: str = "urn:x-ob-caie:reference",
    with_pairs: bool = True,
    chunk: int | None = 200,
    shapes: Sequence[str] | None = None,
    owl: bool = True,
) -> Result:
    """Blocks of each candidate ``index`` and of each (index, criterion IRI) pair; unblocked ones map to ().

    ``shapes`` limits SHACL to those rules (``[]``: none) and ``owl=False`` leaves OWL 2 RL out: the fast
    path asks for only the rules it falls back on.
    """
    indices = list(indices)
    size = chunk or max(len(indices), 1)
    blocks: dict[int, tuple[Block, ...]] = {}
    pairs: dict[tuple[int, str], tuple[Block, ...]] = {}
    for start in range(0, len(indices), size):
        b, p = _check(spec, indices[start : start + size], base, with_pairs, shapes, owl)
        blocks.update(b)
        pairs.update(p)
    return blocks, pairs


def _check(
    spec: ReferenceSpec, indices: Sequence[int], base: str, with_pairs: bool, shapes: Sequence[str] | None, owl: bool
) -> Result:
    data: list[Triple] = []
    owner: dict[Node, int] = {}
    probe_of: dict[Node, tuple[int, str]] = {}
    for i in indices:
        s = scenario_iri(base, i)
        data += describe(s, spec.facets, spec.space.values(i))
        owner[URIRef(s)] = owner[person_iri(s)] = owner[subject_iri(s)] = i
        if with_pairs:
            for k, c in enumerate(spec.criteria):
                probe = f"{s}#probe-{k}"
                data += probe_triples(probe, s, c.iri)
                owner[URIRef(probe)] = i
                probe_of[URIRef(probe)] = (i, c.iri)
    blocks: dict[int, set[Block]] = {i: set() for i in indices}
    pairs: dict[tuple[int, str], set[Block]] = (
        {(i, c.iri): set() for i in indices for c in spec.criteria} if with_pairs else {}
    )
    if owl:
        for i, found in spec.owl_blocks(data, owner).items():
            blocks[i] |= found
    if with_pairs:
        data += criterion_triples(spec.criteria)
    if shapes is None or shapes:
        for focus, rule, message in spec.shacl(data, shapes):
            if focus in probe_of:
                pairs[probe_of[focus]].add(Block(rule, message))
            elif focus in owner:
                blocks[owner[focus]].add(Block(rule, message))
    return ({i: tuple(sorted(b)) for i, b in blocks.items()}, {k: tuple(sorted(b)) for k, b in pairs.items()})
