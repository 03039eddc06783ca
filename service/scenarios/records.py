"""Reading step 3's review: the derived scenarios of an evaluation, eligible or blocked (with why), filtered
and paged, and how many each consistency rule blocked.

Every listing, filter, count and page is a published query (``queries/scenarios.rq``, ``scenario-order.rq``,
``scenario-count.rq``, ``blocked-scenarios-by-rule.rq``) run with bound parameters; this module only
checks the parameters and turns rows into :mod:`.model` values. The scenarios live in the evaluation's
review graph ``{base}evaluations/{id}/scenarios``; exclusions in the record's exclusion batches.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote

from pyoxigraph import NamedNode
from rdflib import Graph

from ..core.catalog import GraphKind
from ..core.errors import BadRequest
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.iris import named_node
from ..core.namespaces import RDF
from ..core.rdf import local_name
from ..core.store import Row, Term
from .facets import read_specs
from .model import Exclusion, Page, ReviewedScenario, RuleBlocking, RuleCount, ScenarioStatus

MAX_PAGE = 1000
"""The largest page a listing gives."""
MAX_OFFSET = 2**53 - 1
"""The largest offset: past any listing's length, and an integer every JSON client and SPARQL store reads exactly."""
MAX_FACETS = 4
"""How many facet filters one listing takes (``queries/scenarios.rq`` has four facet parameters)."""


@functools.cache
def _bundled_facet_properties() -> dict[str, str]:
    """Facet names the listing shows (a facet property's local name, or the EPO property's) to the property
    IRI, from the facet declarations of the DSOs the repository ships (``ontologies/dso/*.ttl``); a facet of
    another DSO is named by its property IRI. Read on first use, not on import: every process importing the
    records (each ``caie`` command) paid the parse."""
    out: dict[str, str] = {}
    for path in sorted((Path(__file__).resolve().parents[2] / "ontologies" / "dso").glob("*.ttl")):
        for spec in read_specs(Graph().parse(path)):
            if str(spec.dso_property) != RDF + "type":
                out[local_name(str(spec.dso_property))] = str(spec.dso_property)
            out[local_name(str(spec.epo_property))] = str(spec.epo_property)
    return out


def check_page(limit: int, offset: int) -> None:
    """400 unless ``1 <= limit <= MAX_PAGE`` and ``0 <= offset <= MAX_OFFSET``: a page is bounded, so one request
    stays cheap (an offset past 2^64 was a SPARQL syntax error in the store)."""
    if not 1 <= limit <= MAX_PAGE or not 0 <= offset <= MAX_OFFSET:
        raise BadRequest(f"limit must be 1..{MAX_PAGE} and offset 0..{MAX_OFFSET}")


def page_rows(graphs: GraphService, name: str, bindings: Mapping[str, Term], limit: int, offset: int) -> list[Row]:
    """One page of the rows of ``queries/{name}.rq``, ``limit`` and ``offset`` checked first (400 otherwise)."""
    check_page(limit, offset)
    return graphs.rows(name, bindings, limit=limit, offset=offset)


def review_graph(graphs: GraphService, evaluation_id: str) -> GraphRef:
    """The evaluation's scenarios graph ``{base}evaluations/{id}/scenarios`` (400 for an invalid id)."""
    return graphs.member(GraphKind.EVALUATION, f"{evaluation_id}/scenarios")


def facet_property(name: str, recorded: Mapping[str, str] | None = None) -> NamedNode:
    """The property a facet filter names: a facet name the listing shows (``hasVaccinationStatus``: a property's
    local name, among ``recorded``, the evaluation's own facet properties, or the bundled DSOs'), or a property
    IRI; 400 for anything else."""
    known = {**_bundled_facet_properties(), **(recorded or {})}
    if name in known:
        return NamedNode(known[name])
    if ":" in name:
        return named_node(name, "the facet property")
    raise BadRequest(f"unknown facet {name!r}: name a property IRI or one of {', '.join(sorted(known))}")


def recorded_facet_properties(graphs: GraphService, graph: NamedNode) -> dict[str, str]:
    """The facet properties of the scenarios in ``graph`` by local name (``queries/scenario-facet-properties.rq``)."""
    properties = (row["property"].value for row in graphs.rows("scenario-facet-properties", {"graph": graph}))
    return {local_name(iri): iri for iri in properties}


def _filters(
    graphs: GraphService, evaluation_id: str, status: str | None, rule: str | None, facets: Mapping[str, str] | None
) -> dict[str, Term]:
    """The parameters of ``scenarios.rq``, ``scenario-order.rq`` and ``scenario-count.rq``, each checked (400 naming
    what is wrong)."""
    graph = review_graph(graphs, evaluation_id).iri
    bindings: dict[str, Term] = {"graph": graph}
    if status is not None:
        try:
            bindings["status"] = NamedNode(ScenarioStatus(status).iri)
        except ValueError:
            raise BadRequest(
                f"status must be one of {', '.join(s.value for s in ScenarioStatus)}, not {status!r}"
            ) from None
    if rule is not None:
        bindings["rule"] = named_node(rule, "the rule")
    chosen = list((facets or {}).items())
    if len(chosen) > MAX_FACETS:
        raise BadRequest(f"at most {MAX_FACETS} facet filters at once, not {len(chosen)}")
    recorded = recorded_facet_properties(graphs, graph) if chosen else {}
    for slot, (name, value) in enumerate(chosen, start=1):
        bindings[f"facet{slot}"] = facet_property(name, recorded)
        bindings[f"value{slot}"] = named_node(value, f"the value of facet {name!r}")
    return bindings


def _items(row: Row, column: str) -> list[str]:
    """The items of a space-separated list column (empty items stand for no value)."""
    return row[column].value.split() if column in row else []


def _scenario(row: Row) -> ReviewedScenario:
    facets = (item.partition("=") for item in _items(row, "facets"))
    exclusion = None
    if "excludedBy" in row:
        exclusion = Exclusion(row["excludedReason"].value, row["excludedBy"].value, row["excludedAt"].value)
    return ReviewedScenario(
        iri=row["scenario"].value,
        index=int(row["index"].value),
        status=ScenarioStatus.from_iri(row["class"].value),
        blocked_by=tuple(sorted(_items(row, "rules"))),
        messages=tuple(sorted(unquote(m) for m in _items(row, "messages"))),
        facets=tuple(sorted((unquote(p), unquote(v)) for p, _, v in facets)),
        exclusion=exclusion,
    )


def list_scenarios(
    graphs: GraphService,
    evaluation_id: str,
    *,
    status: str | None = None,
    rule: str | None = None,
    facets: Mapping[str, str] | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page[ReviewedScenario]:
    """The derived scenarios in index order, with status, blocking rules and messages, facets and exclusion.

    ``status`` is ``eligible`` or ``blocked``; ``rule`` a rule IRI; ``facets`` maps facet names or property
    IRIs to the value IRI each must have (at most :data:`MAX_FACETS`).
    """
    check_page(limit, offset)
    bindings = _filters(graphs, evaluation_id, status, rule, facets)
    total = int(graphs.rows("scenario-count", bindings)[0]["scenarios"].value)
    # The page's scenarios by index first (scenario-order.rq), then only their rows: ordering every scenario's whole
    # row to keep a page took 1.5 s on the worked example's 805 scenarios, this 80 ms.
    order = [row["scenario"] for row in page_rows(graphs, "scenario-order", bindings, limit, offset)]
    rows = {
        row["scenario"].value: row
        for row in graphs.rows_over("scenarios", ("graph", "scenario"), [(bindings["graph"], s) for s in order])
    }
    return Page(tuple(_scenario(rows[s.value]) for s in order if s.value in rows), total, limit, offset)


def blocking_summary(graphs: GraphService, evaluation_id: str) -> list[RuleCount]:
    """How many reviewed scenarios each rule blocked, and how many are eligible (``epo:EligibleScenario``), each
    rule with its label when the store has one."""
    rows = graphs.rows("blocked-scenarios-by-rule", {"graph": review_graph(graphs, evaluation_id).iri})
    # The labels asked for the few rules at once (labels.rq): joined to every scenario's row in the count, the same
    # lookup took 25 ms where the count takes 5 (worked example, 805 scenarios, 18 rules).
    labels = {
        row["resource"].value: row["label"].value
        for row in graphs.rows_over("labels", ("resource",), [(row["rule"],) for row in rows])
    }
    return [RuleCount(row["rule"].value, int(row["scenarios"].value), labels.get(row["rule"].value)) for row in rows]


def frame_blocking(graphs: GraphService, plan: str) -> list[RuleBlocking]:
    """Per consistency rule, how many candidates of the plan's frame it blocks (``queries/blocking-by-rule.rq``)."""
    rows = graphs.rows("blocking-by-rule", {"plan": NamedNode(plan)})
    return [
        RuleBlocking(
            row["rule"].value,
            row["label"].value if row.get("label") else None,
            int(row["blocked"].value),
            int(row["candidates"].value),
            int(row["eligible"].value),
        )
        for row in rows
    ]
