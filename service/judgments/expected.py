"""Expected behaviour derived from the graph before judging (issue 22 §4.2, docs/judgments.md "Expected
behaviour"): a rule's ``epo:expectedFacts`` SPARQL SELECT queries run over the DSO, the probe's country knowledge
graph, the evaluation's other knowledge graphs and a small graph of the probe's scenario facts, in which the
probe (``?probe``) has each facet value of its scenario under the facet's DSO property.

The rows are the reference facts a check compares the reply with (the contraindications that apply to this
subject, the country's services, a quantity and its unit); the same rows are kept on the determination's rationale
where they decide it, and given to the model judge. Nothing here names a domain: the queries are data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pyoxigraph import BlankNode, DefaultGraph, Literal as OxLiteral, NamedNode, Quad, QuerySolutions, Store
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDFS, SKOS
from rdflib.term import Node

from ..core.errors import Unprocessable
from ..core.rdf import from_rdflib
from .model import JudgingRule, ProbeContext

PROBE = NamedNode("urn:caie:probe")
"""The node that stands for the probe in the facts graph: rows are the same for every probe with the same facts."""
LABELS = (RDFS.label, SKOS.prefLabel, SKOS.altLabel, SKOS.hiddenLabel)

Row = Mapping[str, Node]


@dataclass(frozen=True)
class Knowledge:
    """The DSO and knowledge graphs of one probe's context loaded once into a store, each graph in its own named
    graph, with one more named graph per distinct set of scenario facts."""

    graphs: tuple[Graph, ...]
    store: Store
    rows: dict[tuple[str, NamedNode], tuple[Row, ...]] = field(default_factory=dict)

    def facts_graph(self, facts: Mapping[str, frozenset[Node]]) -> NamedNode:
        lines = sorted(f"<{prop}> {value.n3()}" for prop, values in facts.items() for value in values)
        name = NamedNode("urn:caie:facts:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32])
        if not any(True for _ in self.store.quads_for_pattern(None, None, None, name)):
            self.store.extend([Quad(PROBE, NamedNode(prop), _ox(value), name)
                               for prop, values in facts.items() for value in values])
        return name


_KNOWLEDGE: list[Knowledge] = []
_KEEP = 8


def _ox(term: Node) -> NamedNode | OxLiteral | BlankNode:
    if isinstance(term, URIRef):
        return NamedNode(str(term))
    if isinstance(term, Literal):
        if term.language:
            return OxLiteral(str(term), language=term.language)
        return OxLiteral(str(term), datatype=NamedNode(str(term.datatype))) if term.datatype else OxLiteral(str(term))
    return BlankNode()


def rdflib_term(term: object) -> Node:
    """A pyoxigraph term (an IRI or a literal) as rdflib's."""
    if isinstance(term, NamedNode):
        return URIRef(term.value)
    if isinstance(term, OxLiteral):
        if term.language:
            return Literal(term.value, lang=term.language)
        return Literal(term.value, datatype=URIRef(term.datatype.value))
    return Literal(str(term))


def knowledge(context: ProbeContext) -> Knowledge:
    """The store of ``context``'s DSO and knowledge graphs, made once for the same graph objects."""
    graphs = (context.dso, context.country, *context.others)
    for known in _KNOWLEDGE:
        if len(known.graphs) == len(graphs) and all(a is b for a, b in zip(known.graphs, graphs)):
            return known
    store = Store()
    for number, graph in enumerate(graphs):
        name = NamedNode(f"urn:caie:knowledge:{number}")
        store.extend([Quad(t.subject, t.predicate, t.object, name) for t in from_rdflib(graph)])
    made = Knowledge(graphs, store)
    _KNOWLEDGE.insert(0, made)
    del _KNOWLEDGE[_KEEP:]
    return made


def expected_rows(rule: JudgingRule, context: ProbeContext) -> tuple[Row, ...]:
    """Every row of the rule's ``epo:expectedFacts`` queries for this probe's facts (none without queries); 422
    naming the rule when a query is not a SELECT that runs."""
    if not rule.expected_facts:
        return ()
    known = knowledge(context)
    facts = known.facts_graph(context.facts)
    defaults = [NamedNode(f"urn:caie:knowledge:{n}") for n in range(len(known.graphs))] + [facts]
    rows: list[Row] = []
    for text in rule.expected_facts:
        key = (text, facts)
        if key not in known.rows:
            try:
                answer = known.store.query(_bound(text), default_graph=defaults)
            except (SyntaxError, ValueError, OSError, RuntimeError) as error:
                raise Unprocessable(f"judging rule {rule.judge.iri}: its epo:expectedFacts query fails: {error}") from None
            if not isinstance(answer, QuerySolutions):
                raise Unprocessable(f"judging rule {rule.judge.iri}: its epo:expectedFacts query must be a SELECT")
            names = [v.value for v in answer.variables]
            known.rows[key] = tuple({name: rdflib_term(solution[name]) for name in names if solution[name] is not None}
                               for solution in answer)
        rows += known.rows[key]
    return tuple(rows)


def _bound(text: str) -> str:
    """The query with ``?probe`` bound by a trailing VALUES block (SPARQL 1.1's ValuesClause), not pasted into it."""
    return f"{text}\nVALUES ?probe {{ {PROBE} }}\n"


def labels(context: ProbeContext, node: Node) -> tuple[str, ...]:
    """Every label of ``node`` in any language, in the DSO and the knowledge graphs."""
    return tuple(sorted({str(value) for graph in (context.dso, context.country, *context.others)
                         for prop in LABELS for value in graph.objects(node, prop)}))


def describe(rows: Iterable[Row], columns: Sequence[str] | None = None) -> str:
    """The rows as a reader checks them: ``column=value`` pairs, rows separated by semicolons."""
    def term(value: Node) -> str:
        return str(value) if not isinstance(value, Literal) or not value.language else f'"{value}"@{value.language}'
    return "; ".join(", ".join(f"{name}={term(value)}" for name, value in sorted(row.items())
                               if columns is None or name in columns) for row in rows)


def validate_query(text: str) -> str | None:
    """Why ``text`` cannot serve as an ``epo:expectedFacts`` query, or ``None`` (it parses as a SELECT)."""
    try:
        answer = Store().query(_bound(text), default_graph=DefaultGraph())
    except (SyntaxError, ValueError, OSError, RuntimeError) as error:
        return f"epo:expectedFacts is not a SPARQL query: {error}"
    return None if isinstance(answer, QuerySolutions) else "epo:expectedFacts must be a SELECT query"
