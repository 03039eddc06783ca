"""The query page's examples: a few starting points, then every published query (``queries/*.rq``) with what
its header comment says it answers and the parameters it names.

A published query is shown ready to run: its parameters are bound by a ``VALUES`` row of ``UNDEF`` at the
head of its WHERE group (where the service binds them), which the user replaces by the terms they want.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from pyoxigraph import NamedNode

from ..core import queries
from ..core.store.base import bind

_VARIABLE = re.compile(r"\?([A-Za-z_][A-Za-z0-9_]*)")
_PARAMETER = re.compile(r"^(\?[A-Za-z_]\w*(?:\s*\.\.\s*\?[A-Za-z_]\w*)?)\s+(.*)$")
_PLACEHOLDER = "urn:x-ob-caie:parameter:"


@dataclass(frozen=True)
class Example:
    name: str
    summary: str
    parameters: tuple[tuple[str, str], ...]
    """Each parameter as the header names it (``?graph``, ``?facet1 .. ?facet4``) and what it means."""
    text: str


STARTERS = (
    Example(
        "catalogued-graphs",
        "every named graph in the catalog, with its kind, title and size",
        (),
        """\
PREFIX cat:     <https://w3id.org/ob-caie/catalog/>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX void:    <http://rdfs.org/ns/void#>

SELECT ?graph ?kind ?title ?triples
WHERE {
  GRAPH ?catalog { ?graph cat:kind ?kind ; dcterms:title ?title ; void:triples ?triples }
}
ORDER BY ?graph
""",
    ),
    Example(
        "epo-classes",
        "the classes of the Evaluation Process Ontology and their superclasses",
        (),
        """\
PREFIX owl:  <http://www.w3.org/2002/07/owl#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>

SELECT ?class ?label ?superclass
WHERE {
  ?class a owl:Class ; rdfs:isDefinedBy <https://w3id.org/ob-caie/epo> ; rdfs:label ?label .
  OPTIONAL { ?class rdfs:subClassOf ?superclass FILTER(isIRI(?superclass)) }
}
ORDER BY ?label
""",
    ),
    Example(
        "triples-per-graph",
        "how many triples each named graph holds, counted by the store",
        (),
        """\
SELECT ?graph (COUNT(*) AS ?triples)
WHERE { GRAPH ?graph { ?s ?p ?o } }
GROUP BY ?graph
ORDER BY DESC(?triples)
""",
    ),
)


def _header(text: str) -> list[str]:
    """The leading comment lines, without their ``#`` and one following space."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[2:] if line.startswith("# ") else line[1:])
    return lines


def published(name: str) -> Example:
    """The published query ``queries/{name}.rq`` as an example."""
    text = queries.load(name)
    header = _header(text)
    blank = next((i for i, line in enumerate(header) if not line.strip()), len(header))
    summary = " ".join(line.strip() for line in header[:blank] if "Parameters" not in line)
    parameters: list[list[str]] = []
    section = False
    for line in header:
        if "Parameters" in line:
            section = True
            line = "  " + line.partition(":")[2]  # a header may name its one parameter on this line
        elif section and not line[:1].isspace():
            break  # the section is the indented lines under "Parameters"
        if not section:
            continue
        match = _PARAMETER.match(line.strip())
        if match:
            parameters.append([match.group(1), match.group(2).rstrip(".")])
        elif parameters and line.strip():
            parameters[-1][1] += " " + line.strip()  # the meaning goes on on the next line
    names = sorted({variable for label, _ in parameters for variable in _VARIABLE.findall(label)})
    if names:
        # bind() places the VALUES block as the service does; its placeholders become UNDEF for the user to fill.
        text = bind(text, {variable: NamedNode(_PLACEHOLDER + variable) for variable in names})
        text = re.sub(rf"<{re.escape(_PLACEHOLDER)}\w+>", "UNDEF", text)
    return Example(name, summary, tuple((label, meaning) for label, meaning in parameters), text)


@cache
def examples() -> tuple[Example, ...]:
    """The starting points, then every published query by name (the files ship with the service: read once)."""
    return STARTERS + tuple(published(name) for name in queries.names())
