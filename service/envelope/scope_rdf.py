"""The scope (step 1) as RDF in the evaluation's graph ``{base}evaluations/{id}``, and back.

Its nodes are minted under the evaluation's IRI (:class:`.rdf.Iris`): the test target and its version
boundary, the use boundary, the operating environment, assumptions, out-of-scope declarations and the
evaluation method (``{evaluation}/method``, with its version).
"""

from __future__ import annotations

import hashlib
from decimal import Decimal

from pyoxigraph import NamedNode, Triple

from ..core.namespaces import DCTERMS, EPO, RDFS
from ..scope.model import (
    Assumption,
    EvaluationMethod,
    OperatingEnvironment,
    OutOfScope,
    Scope,
    Stratum,
    TestTarget,
    UseBoundary,
    VersionBoundary,
)
from .rdf import (
    TYPE,
    Builder,
    Index,
    Iris,
    add_triggers,
    decimal_literal,
    epo,
    owned_by,
    parse_decimal,
    read_triggers,
    tail,
)


def _member(b: Builder, parent: str, link: str, node: str, cls: str, evaluation: str | None = None) -> str:
    """``node`` linked from ``parent`` by ``epo:{link}``, typed ``epo:{cls}`` and marked as a node of the
    evaluation (``parent`` unless ``evaluation`` is given)."""
    b.add(parent, epo(link), node)
    b.add(node, TYPE, epo(cls))
    b.add(node, epo("inEvaluation"), evaluation or parent)
    return node


def scope_triples(iris: Iris, scope: Scope) -> list[Triple]:
    """The triples stating ``scope`` (step 1) in the evaluation graph."""
    b, e = Builder(), iris.evaluation
    target, boundary = iris.under("target"), iris.under("target/version-boundary")
    use, env = iris.under("use-boundary"), iris.under("operating-environment")
    b.add(e, TYPE, epo("Evaluation"))
    b.text(e, NamedNode(DCTERMS + "identifier"), scope.id)
    b.text(e, NamedNode(DCTERMS + "title"), scope.title)
    b.text(e, epo("riskQuestion"), scope.risk_question)
    if scope.method is not None:
        method = _member(b, e, "evaluationMethod", iris.under("method"), "EvaluationMethod")
        b.text(method, NamedNode(RDFS + "label"), scope.method.name)
        b.text(method, epo("methodVersion"), scope.method.version)
        b.text(method, epo("statement"), scope.method.statement)
    dso = iris.dso(scope.dso)
    b.add(e, epo("usesDso"), dso)
    b.add(dso, TYPE, epo("DsoRelease"))
    for kg in scope.knowledge_graphs:
        b.add(e, epo("usesKnowledgeGraph"), iris.kg(kg))
        b.add(iris.kg(kg), TYPE, epo("KnowledgeGraph"))
        b.add(iris.kg(kg), epo("conformsToDso"), dso)
    b.add(e, epo("testTarget"), target)
    b.add(e, epo("versionBoundary"), boundary)
    b.add(e, epo("useBoundary"), use)
    b.add(e, epo("operatingEnvironment"), env)
    t = scope.test_target
    for node, cls in (
        (target, "TestTarget"),
        (boundary, "VersionBoundary"),
        (use, "UseBoundary"),
        (env, "OperatingEnvironment"),
    ):
        b.add(node, TYPE, epo(cls))
        b.add(node, epo("inEvaluation"), e)
    b.text(target, NamedNode(RDFS + "label"), t.name)
    b.text(target, epo("targetKind"), t.kind)
    b.text(boundary, epo("targetVersion"), t.version_boundary.model_release)
    b.text(boundary, epo("configuration"), t.version_boundary.configuration)
    b.text(boundary, epo("configurationDigest"), hashlib.sha256(t.version_boundary.configuration.encode()).hexdigest())
    u = scope.use_boundary
    b.text(use, epo("statement"), u.statement)
    for field_name, facet in (
        ("users", "persona"),
        ("tasks", "informationNeed"),
        ("languages", "language"),
        ("countries", "country"),
    ):
        for value in getattr(u, field_name):
            b.add(use, epo(facet), value)
    o = scope.operating_environment
    b.text(env, epo("statement"), o.statement)
    for setting in o.settings:
        b.add(env, epo("setting"), setting)
    for assumption in o.assumptions:
        node = _member(b, env, "hasAssumption", iris.under(f"assumptions/{assumption.id}"), "Assumption", e)
        b.text(node, epo("statement"), assumption.statement)
    for stratum in scope.population:
        node = _member(b, e, "userPopulation", iris.under(f"population/{stratum.id}"), "PopulationStratum")
        b.text(node, NamedNode(DCTERMS + "identifier"), stratum.id)
        b.text(node, NamedNode(RDFS + "label"), stratum.label)
        b.add(node, epo("populationShare"), decimal_literal(stratum.share))
        add_triggers(b, node, "memberWhen", stratum.facts)
    for declaration in scope.out_of_scope:
        node = _member(b, e, "outOfScope", iris.under(f"out-of-scope/{declaration.id}"), "OutOfScopeDeclaration")
        b.text(node, epo("statement"), declaration.statement)
        for concept in declaration.concepts:
            b.add(node, epo("excludedConcept"), concept)
    return b.triples


def read_scope(iris: Iris, index: Index) -> Scope | None:
    """The scope stated in the graph, or ``None`` when it holds no evaluation ``iris.evaluation``."""
    e = iris.evaluation
    if not index.has_type(e, EPO + "Evaluation"):
        return None
    target = index.one(e, EPO + "testTarget") or iris.under("target")
    boundary = index.one(e, EPO + "versionBoundary") or iris.under("target/version-boundary")
    use = index.one(e, EPO + "useBoundary") or iris.under("use-boundary")
    env = index.one(e, EPO + "operatingEnvironment") or iris.under("operating-environment")
    dso = index.one(e, EPO + "usesDso") or ""
    method = index.one(e, EPO + "evaluationMethod")
    return Scope(
        id=iris.evaluation_id,
        title=index.one(e, DCTERMS + "title") or iris.evaluation_id,
        risk_question=index.one(e, EPO + "riskQuestion"),
        dso=tail(dso, iris.dso("")),
        knowledge_graphs=tuple(tail(kg, iris.kg("")) for kg in index.all(e, EPO + "usesKnowledgeGraph")),
        test_target=TestTarget(
            name=index.one(target, RDFS + "label") or "",
            kind=index.one(target, EPO + "targetKind") or "",
            version_boundary=VersionBoundary(
                model_release=index.one(boundary, EPO + "targetVersion") or "",
                configuration=index.one(boundary, EPO + "configuration") or "",
            ),
        ),
        use_boundary=UseBoundary(
            statement=index.one(use, EPO + "statement") or "",
            users=tuple(index.all(use, EPO + "persona")),
            tasks=tuple(index.all(use, EPO + "informationNeed")),
            languages=tuple(index.all(use, EPO + "language")),
            countries=tuple(index.all(use, EPO + "country")),
        ),
        operating_environment=OperatingEnvironment(
            statement=index.one(env, EPO + "statement") or "",
            settings=tuple(index.all(env, EPO + "setting")),
            assumptions=tuple(
                Assumption(tail(a, iris.under("assumptions/")), index.one(a, EPO + "statement") or "")
                for a in index.all(env, EPO + "hasAssumption")
            ),
        ),
        out_of_scope=tuple(
            OutOfScope(
                tail(o, iris.under("out-of-scope/")),
                index.one(o, EPO + "statement") or "",
                tuple(index.all(o, EPO + "excludedConcept")),
            )
            for o in index.all(e, EPO + "outOfScope")
        ),
        population=tuple(
            Stratum(
                tail(p, iris.under("population/")),
                index.one(p, RDFS + "label") or "",
                parse_decimal(index.one(p, EPO + "populationShare")) or Decimal(0),
                read_triggers(index, p, "memberWhen"),
            )
            for p in index.all(e, EPO + "userPopulation")
        ),
        method=None
        if method is None
        else EvaluationMethod(
            index.one(method, RDFS + "label") or "",
            index.one(method, EPO + "methodVersion") or "",
            index.one(method, EPO + "statement"),
        ),
    )


def scope_owned(iris: Iris, triple: Triple) -> bool:
    """Whether ``triple`` belongs to the scope (and is replaced with it)."""
    subject = triple.subject
    if not isinstance(subject, NamedNode):  # the scope's nodes are all IRIs
        return False
    if subject.value == iris.evaluation:
        return triple.predicate.value != EPO + "operationalEnvelope"
    if subject.value.startswith((iris.dso(""), iris.kg(""))):
        return True
    parts = ("target", "use-boundary", "operating-environment", "assumptions", "out-of-scope", "method", "population")
    return any(owned_by(iris.under(part), triple) for part in parts)
