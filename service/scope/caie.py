"""caie-spec records (https://w3id.org/og-caie/): recognised, checked with caie-spec's own shapes, read in our terms.

caie-spec (DynamicalSystemsGroup/caie-spec, CC BY-SA 4.0) is the methodology's executable specification. Its
files are read where the deployment keeps them, never copied into this repository: the directory named by the
environment variable ``CAIE_SPEC_DIR``, by default ``../shared/interop/caie-spec`` beside the checkout. Three
files are used (docs/interop.md):

* ``explorer/data/epo.shapes.ttl``: the shapes S0..S9 a record must conform to;
* ``explorer/data/epo.ttl``: caie-spec's EPO, which the shapes read (class hierarchy, value lists);
* ``derived/caie.model.step-extract.ttl``: the part of caie-spec's system model from which the shapes derive
  an item's lifecycle step (``ogm:realizes``, ``sysml:*``); without it the valid measles record fails 14 results.

The shapes join across record, ontology and model, so all three are validated as ONE default graph.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import rdflib
from pyoxigraph import DefaultGraph, NamedNode, Quad, QueryTriples, RdfFormat, Store, Triple, parse

from ..core import queries
from ..core.namespaces import RDF
from ..core.store.base import bind
from ..core.validation import load_shapes, validate_record
from ..core.validation_report import ValidationOutcome, Violation

CAIE_BASE = "https://w3id.org/og-caie/"
"""caie-spec's namespaces (its EPO, ``ogc:``, ``ogm:``) all start here."""
DEFAULT_SPEC_DIR = Path(__file__).resolve().parents[3] / "shared" / "interop" / "caie-spec"
SHAPES_FILE = Path("explorer", "data", "epo.shapes.ttl")
ONTOLOGY_FILE = Path("explorer", "data", "epo.ttl")
MODEL_FILE = Path("derived", "caie.model.step-extract.ttl")
OUR_EPO_FILE = Path(__file__).resolve().parents[2] / "ontologies" / "epo.ttl"
_TYPE = RDF + "type"


@dataclass(frozen=True)
class CaieSpec:
    """caie-spec's shapes, and the ontology and model extract validated beside a record (loaded once)."""

    directory: Path
    shapes: rdflib.Graph
    context: rdflib.Graph
    """caie-spec's EPO + the model extract: what the shapes read besides the record."""


def spec_dir() -> Path:
    """Where this deployment keeps caie-spec's files (``CAIE_SPEC_DIR``, else ``../shared/interop/caie-spec``)."""
    configured = os.environ.get("CAIE_SPEC_DIR")
    return Path(configured) if configured else DEFAULT_SPEC_DIR


def load_spec(directory: Path | None = None) -> CaieSpec | None:
    """caie-spec's files in ``directory`` (default :func:`spec_dir`), or ``None`` when one of them is missing."""
    return _load(directory or spec_dir())


@lru_cache(maxsize=4)
def _load(directory: Path) -> CaieSpec | None:
    files = [directory / f for f in (SHAPES_FILE, ONTOLOGY_FILE, MODEL_FILE)]
    if not all(f.is_file() for f in files):
        return None
    shapes, ontology, model = files
    return CaieSpec(directory, load_shapes(shapes), load_shapes(ontology, model))


def is_caie_record(record: list[Triple]) -> bool:
    """Whether the record is written in caie-spec's vocabulary: a property or class of it is used."""
    return any(
        t.predicate.value.startswith(CAIE_BASE)
        or (t.predicate.value == _TYPE and not isinstance(t.object, Triple) and t.object.value.startswith(CAIE_BASE))
        for t in record
    )


def validate(record: rdflib.Graph, spec: CaieSpec) -> ValidationOutcome:
    """The record checked against caie-spec's shapes, validated with caie-spec's EPO and model in one graph."""
    return validate_record(record + spec.context, spec.shapes)


def shape_name(violation: Violation, spec: CaieSpec) -> str:
    """The named caie-spec shape a result comes from (``ogc:S7-Report``): a property shape's own node is blank,
    so the named node shape that holds it is found in the shapes graph."""
    node: rdflib.term.Node | None = _node(violation.source_shape)
    seen: set[rdflib.term.Node] = set()
    while isinstance(node, rdflib.BNode) and node not in seen:
        seen.add(node)
        node = next(spec.shapes.subjects(None, node), None)
    if not isinstance(node, rdflib.URIRef):
        return violation.source_shape or "an unnamed shape"
    name = str(node)
    return "ogc:" + name[len(CAIE_BASE) :] if name.startswith(CAIE_BASE) and "#" not in name else name


def _node(n3: str | None) -> rdflib.term.Node | None:
    if n3 is None:
        return None
    return rdflib.BNode(n3[2:]) if n3.startswith("_:") else rdflib.URIRef(n3.strip("<>"))


def failed_shapes(outcome: ValidationOutcome, spec: CaieSpec) -> list[str]:
    """The named shapes with at least one violation, in order."""
    return sorted({shape_name(v, spec) for v in outcome.violations if v.severity == "Violation"})


def materialize(record: list[Triple], evaluation: NamedNode) -> list[Triple]:
    """The record read in our vocabulary (``queries/transforms/caie-materialize.rq`` over the record and our EPO)."""
    store = Store()
    store.extend(Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in record)
    store.extend(_our_epo())
    answer = store.query(bind(queries.load("transforms/caie-materialize"), {"evaluation": evaluation}))
    if not isinstance(answer, QueryTriples):
        raise TypeError("queries/transforms/caie-materialize.rq must be a CONSTRUCT query")
    return list(dict.fromkeys(answer))


@lru_cache(maxsize=1)
def _our_epo() -> tuple[Quad, ...]:
    """ontologies/epo.ttl in the default graph: the equivalences the materialization reads."""
    return tuple(parse(path=str(OUR_EPO_FILE), format=RdfFormat.TURTLE))
