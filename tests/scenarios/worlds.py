"""Small DSOs and scenario shapes built from named constructs, for the compiler's tests.

A world has three facets in the DSO vocabulary the facet model knows: the persona (``ex:P1``, ``ex:P2``),
the age group (``ex:young``, ``ex:old``) and pregnancy (false, true): 8 candidates, so the reference can
check every one. Each construct adds axioms to the DSO or a rule to the shapes; some are inside the fast
path's supported subset, others outside it (they must fall back, and the answers must not change).
"""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS, SH

from service.scenarios.engine import Context, Criterion
from service.scenarios.facets import Schema, build_facets

from . import VE

EX = Namespace("https://example.org/small/")
DCT = Namespace("http://purl.org/dc/terms/")
EPO = Namespace("https://w3id.org/ob-caie/epo/")

DSO_CONSTRUCTS = (
    "functional",
    "subproperty-restriction",
    "super-property",
    "inverse",
    "domain-person",
    "domain-other",
    "range",
    "persona-value",
    "disjoint",
)
SHAPE_CONSTRUCTS = ("core", "named-node", "closed", "inverse-path", "sub-property-sparql", "persona-sparql", "routing")
OLD_CRITERION = Criterion("https://example.org/criteria/old", frozenset({str(EX.old)}))
"""A criterion on old age: the "routing" rule keeps young persons from probing it."""

_PREFIXES = (
    f"PREFIX ve: <{VE}>\nPREFIX ex: <{EX}>\nPREFIX dcterms: <http://purl.org/dc/terms/>\n"
    "PREFIX epo: <https://w3id.org/ob-caie/epo/>\n"
)


def _restriction(g: Graph, prop, value) -> BNode:
    r = BNode()
    g.add((r, RDF.type, OWL.Restriction))
    g.add((r, OWL.onProperty, prop))
    g.add((r, OWL.hasValue, value))
    return r


def small_dso(constructs: Iterable[str]) -> Graph:
    g = Graph()
    for cls in (VE.Person, VE.Persona, VE.AgeGroup, EX.Female):
        g.add((cls, RDF.type, OWL.Class))
    g.add((VE.Persona, RDFS.subClassOf, VE.Person))
    for persona in (EX.P1, EX.P2):
        g.add((persona, RDF.type, OWL.Class))
        g.add((persona, RDFS.subClassOf, VE.Persona))
        g.add((persona, RDFS.label, Literal(str(persona).rsplit("/", 1)[1])))
    for age in (EX.young, EX.old):
        g.add((age, RDF.type, VE.AgeGroup))
    g.add((VE.hasAgeGroup, RDF.type, OWL.ObjectProperty))
    g.add((VE.isPregnant, RDF.type, OWL.DatatypeProperty))
    _declare_facets(g)
    for c in constructs:
        if c == "functional":  # P2 is old; a young P2 clashes (prp-fp)
            g.add((VE.hasAgeGroup, RDF.type, OWL.FunctionalProperty))
            g.add((EX.ages, RDF.type, OWL.AllDifferent))
            lst = BNode()
            Collection(g, lst, [EX.young, EX.old])
            g.add((EX.ages, OWL.distinctMembers, lst))
            g.add((EX.P2, RDFS.subClassOf, _restriction(g, VE.hasAgeGroup, EX.old)))
        elif c == "subproperty-restriction":  # the first case: a restriction on a super-property of a facet's
            g.add((VE.hasAgeGroup, RDFS.subPropertyOf, EX.stage))
            g.add((EX.YoungStage, OWL.equivalentClass, _restriction(g, EX.stage, EX.young)))
            g.add(
                (
                    EX.PregnantYoung,
                    OWL.equivalentClass,
                    _intersection(g, [EX.YoungStage, _restriction(g, VE.isPregnant, Literal(True))]),
                )
            )
            g.add((EX.PregnantYoung, RDFS.subClassOf, OWL.Nothing))
        elif c == "super-property":
            g.add((EX.ageBand, RDFS.subPropertyOf, VE.hasAgeGroup))
        elif c == "inverse":
            g.add((EX.ageOf, OWL.inverseOf, VE.hasAgeGroup))
        elif c == "domain-person":
            g.add((VE.hasAgeGroup, RDFS.domain, VE.Person))
        elif c == "domain-other":  # whoever has a pregnancy value is Female; P1 is disjoint with Female
            g.add((VE.isPregnant, RDFS.domain, EX.Female))
            g.add((EX.P1, OWL.disjointWith, EX.Female))
        elif c == "range":
            g.add((VE.hasAgeGroup, RDFS.range, VE.AgeGroup))
        elif c == "persona-value":  # a pregnant person is a P1
            g.add((EX.P1, OWL.equivalentClass, _restriction(g, VE.isPregnant, Literal(True))))
        elif c == "disjoint":
            g.add((EX.P1, OWL.disjointWith, EX.P2))
    return g


_FACETS = (
    ("persona", RDF.type, EPO.persona, EPO.SubclassValues, VE.Persona),
    ("age", VE.hasAgeGroup, EPO.personState, EPO.InstanceValues, VE.AgeGroup),
    ("pregnancy", VE.isPregnant, EPO.personState, EPO.BooleanValues, None),
)


def _declare_facets(g: Graph) -> None:
    """The world's three facets, declared as a DSO declares them (all on the asker; no person asked about)."""
    onto = EX.ontology
    g.add((onto, RDF.type, OWL.Ontology))
    g.add((onto, EPO.personClass, VE.Person))
    for order, (name, prop, scenario_prop, kind, cls) in enumerate(_FACETS, start=1):
        decl = EX[f"facet-{name}"]
        for p, o in (
            (RDF.type, EPO.ScenarioFacet),
            (EPO.facetName, Literal(name)),
            (EPO.facetOrder, Literal(order)),
            (EPO.facetNode, EPO.AskerNode),
            (EPO.facetProperty, prop),
            (EPO.scenarioProperty, scenario_prop),
            (EPO.valueKind, kind),
            (EPO.valuesFrom, cls),
        ):
            if o is not None:
                g.add((decl, p, o))


def _intersection(g: Graph, members: list) -> BNode:
    node, lst = BNode(), BNode()
    Collection(g, lst, members)
    g.add((node, RDF.type, OWL.Class))
    g.add((node, OWL.intersectionOf, lst))
    return node


def _sparql_rule(g: Graph, shape, query: str, message: str, target=VE.Person) -> None:
    constraint = BNode()
    g.add((shape, RDF.type, SH.NodeShape))
    g.add((shape, SH.targetClass, target))
    g.add((shape, SH.sparql, constraint))
    g.add((constraint, SH.message, Literal(message)))
    g.add((constraint, SH.select, Literal(_PREFIXES + query)))


def small_shapes(constructs: Iterable[str]) -> Graph:
    g = Graph()
    for c in constructs:
        shape = EX[f"rule-{c}"]
        g.add((shape, RDFS.label, Literal(c)))
        if c == "core":  # not young and pregnant
            g.add((shape, RDF.type, SH.NodeShape))
            g.add((shape, SH.targetClass, VE.Person))
            g.add((shape, SH.message, Literal("young and pregnant")))
            a, b, pa, pb, lst = BNode(), BNode(), BNode(), BNode(), BNode()
            g.add((pa, SH.path, VE.hasAgeGroup))
            g.add((pa, SH.hasValue, EX.young))
            g.add((pb, SH.path, VE.isPregnant))
            g.add((pb, SH.hasValue, Literal(True)))
            g.add((a, SH["not"], pa))
            g.add((b, SH["not"], pb))
            Collection(g, lst, [a, b])
            g.add((shape, SH["or"], lst))
        elif c == "named-node":  # the second case: a P1 must conform to a named shape on the age group
            g.add((shape, RDF.type, SH.NodeShape))
            g.add((shape, SH.targetClass, EX.P1))
            g.add((shape, SH.message, Literal("a P1 is old")))
            g.add((shape, SH.node, EX.IsOld))
            prop = BNode()
            g.add((EX.IsOld, SH.property, prop))
            g.add((prop, SH.path, VE.hasAgeGroup))
            g.add((prop, SH.hasValue, EX.old))
        elif c == "closed":  # a P2 has only the listed properties: its pregnancy value is not among them
            g.add((shape, RDF.type, SH.NodeShape))
            g.add((shape, SH.targetClass, EX.P2))
            g.add((shape, SH.message, Literal("closed")))
            g.add((shape, SH.closed, Literal(True)))
            lst = BNode()
            Collection(g, lst, [RDF.type, VE.hasAgeGroup])
            g.add((shape, SH.ignoredProperties, lst))
        elif c == "inverse-path":
            _sparql_rule(g, shape, "SELECT $this WHERE { ex:old ^ve:hasAgeGroup $this . $this a ex:P2 }", "an old P2")
        elif c == "sub-property-sparql":
            _sparql_rule(g, shape, "SELECT $this WHERE { $this ex:stage ex:young }", "young by stage")
        elif c == "routing":
            _sparql_rule(
                g,
                shape,
                "SELECT $this WHERE { $this epo:exercises ?c ; epo:fromScenario ?s . "
                "?c epo:bearsOnConcept ex:old . ?s dcterms:subject ?p . ?p ve:hasAgeGroup ex:young }",
                "a young person's question cannot probe a criterion on old age",
                URIRef("https://w3id.org/ob-caie/epo/Probe"),
            )
        elif c == "persona-sparql":
            _sparql_rule(g, shape, "SELECT $this WHERE { $this a ex:P2 ; ve:isPregnant true }", "a pregnant P2")
    return g


def small_context(
    dso_constructs: Iterable[str], shape_constructs: Iterable[str], criteria: Iterable[Criterion] = ()
) -> Context:
    dso = small_dso(dso_constructs)
    return Context(dso, [], build_facets(Schema(dso, [])), small_shapes(shape_constructs), list(criteria))
