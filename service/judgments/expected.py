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
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar, cast

from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad, QuerySolutions, Store
from pyoxigraph import Literal as OxLiteral
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
T = TypeVar("T")

_Kept = tuple[tuple[Graph, ...], object]
_PER_GRAPHS: OrderedDict[tuple[tuple[int, ...], Callable[..., object]], _Kept] = OrderedDict()
_KEEP_PER_GRAPHS = 256


def per_graphs(graphs: Sequence[Graph], make: Callable[..., T]) -> T:
    """``make(*graphs)``, made once per sequence of graph objects and kept for the next reply, as :func:`knowledge`
    keeps their store (a context's graphs do not change while it is judged): a run's thousands of replies are judged
    against the same few graphs, and each rdflib lookup costs microseconds."""
    key = (tuple(id(graph) for graph in graphs), make)
    kept = _PER_GRAPHS.get(key)
    if kept is not None and all(a is b for a, b in zip(kept[0], graphs)):
        _PER_GRAPHS.move_to_end(key)
        return cast("T", kept[1])  # kept by this same make (part of the key), so of its type
    made = make(*graphs)
    _PER_GRAPHS[key] = (tuple(graphs), made)  # the graphs are kept, so that no other graph takes their ids
    while len(_PER_GRAPHS) > _KEEP_PER_GRAPHS:
        _PER_GRAPHS.popitem(last=False)
    return made


def _label_index(graph: Graph) -> dict[Node, tuple[Node, ...]]:
    index: dict[Node, list[Node]] = {}
    for prop in LABELS:
        for subject, value in graph.subject_objects(prop):
            index.setdefault(subject, []).append(value)
    return {subject: tuple(values) for subject, values in index.items()}


def label_values(graph: Graph, node: Node) -> tuple[Node, ...]:
    """The values of ``node``'s labels (:data:`LABELS`) in ``graph``, from an index of the graph's labels."""
    return per_graphs((graph,), _label_index).get(node, ())


@dataclass(frozen=True)
class Knowledge:
    """The DSO and knowledge graphs of one probe's context loaded once into a store, each graph in its own named
    graph, with one more named graph per distinct set of scenario facts."""

    graphs: tuple[Graph, ...]
    store: Store
    rows: dict[tuple[str, NamedNode], tuple[Row, ...]] = field(default_factory=dict)
    facts_graphs: dict[frozenset[tuple[str, Node]], NamedNode] = field(default_factory=dict)
    """Each distinct set of facts loaded so far, to its graph."""
    last: list[tuple[Mapping[str, frozenset[Node]], NamedNode]] = field(default_factory=list)
    """The facts object asked for last and its graph: every rule on every reply of a probe asks with the same one."""

    def facts_graph(self, facts: Mapping[str, frozenset[Node]]) -> NamedNode:
        if self.last and self.last[0][0] is facts:
            return self.last[0][1]
        key = frozenset((prop, value) for prop, values in facts.items() for value in values)
        if (name := self.facts_graphs.get(key)) is None:
            lines = sorted(f"<{prop}> {value.n3()}" for prop, value in key)
            name = NamedNode("urn:caie:facts:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()[:32])
            self.store.extend([Quad(PROBE, NamedNode(prop), _ox(value), name) for prop, value in key])
            self.facts_graphs[key] = name
        self.last[:] = [(facts, name)]
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


@lru_cache(maxsize=4096)
def rdflib_term(term: object) -> Node:
    """A pyoxigraph term (an IRI or a literal) as rdflib's (kept: rows repeat the same few terms)."""
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
    defaults: list[NamedNode | BlankNode | DefaultGraph] = [
        *(NamedNode(f"urn:caie:knowledge:{n}") for n in range(len(known.graphs))),
        facts,
    ]
    rows: list[Row] = []
    for text in rule.expected_facts:
        key = (text, facts)
        if key not in known.rows:
            try:
                answer = known.store.query(_bound(text), default_graph=defaults)
            except (SyntaxError, ValueError, OSError, RuntimeError) as error:
                raise Unprocessable(
                    f"judging rule {rule.judge.iri}: its epo:expectedFacts query fails: {error}"
                ) from None
            if not isinstance(answer, QuerySolutions):
                raise Unprocessable(f"judging rule {rule.judge.iri}: its epo:expectedFacts query must be a SELECT")
            names = [v.value for v in answer.variables]
            known.rows[key] = tuple(
                {name: rdflib_term(solution[name]) for name in names if solution[name] is not None}
                for solution in answer
            )
        rows += known.rows[key]
    return tuple(rows)


def _bound(text: str) -> str:
    """The query with ``?probe`` bound by a trailing VALUES block (SPARQL 1.1's ValuesClause), not pasted into it."""
    return f"{text}\nVALUES ?probe {{ {PROBE} }}\n"


def labels(context: ProbeContext, node: Node) -> tuple[str, ...]:
    """Every label of ``node`` in any language, in the DSO and the knowledge graphs."""
    graphs = (context.dso, context.country, *context.others)
    memo = per_graphs(graphs, _labels_memo)
    if node not in memo:
        memo[node] = tuple(sorted({str(value) for graph in graphs for value in label_values(graph, node)}))
    return memo[node]


def _labels_memo(*_: Graph) -> dict[Node, tuple[str, ...]]:
    return {}


def describe(rows: Iterable[Row], columns: Sequence[str] | None = None) -> str:
    """The rows as a reader checks them: ``column=value`` pairs, rows separated by semicolons."""

    def term(value: Node) -> str:
        return str(value) if not isinstance(value, Literal) or not value.language else f'"{value}"@{value.language}'

    return "; ".join(
        ", ".join(f"{name}={term(value)}" for name, value in sorted(row.items()) if columns is None or name in columns)
        for row in rows
    )


def validate_query(text: str) -> str | None:
    """Why ``text`` cannot serve as an ``epo:expectedFacts`` query, or ``None`` (it parses as a SELECT)."""
    try:
        answer = Store().query(_bound(text), default_graph=DefaultGraph())
    except (SyntaxError, ValueError, OSError, RuntimeError) as error:
        return f"epo:expectedFacts is not a SPARQL query: {error}"
    return None if isinstance(answer, QuerySolutions) else "epo:expectedFacts must be a SELECT query"
