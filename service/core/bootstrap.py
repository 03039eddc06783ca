"""Loading the published specification files (EPO, DSO, country knowledge graphs, shapes, opening-turn templates)
into a store.

Idempotent: a file whose digest equals the catalogued graph's is skipped, so restarts change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .catalog import GraphKind
from .config import Credential
from .digest import graph_digest
from .formats import rdf_format_for_path
from .graphs import GraphService, WriteMode
from .rdf import parse_triples

REPO = Path(__file__).resolve().parents[2]
SYSTEM = Credential(agent="caie-bootstrap", name="OB-CAIE bootstrap", roles=frozenset({"admin"}))


@dataclass(frozen=True)
class SpecFile:
    kind: GraphKind
    identifier: str
    path: Path


def engine_files(root: Path = REPO) -> Iterator[SpecFile]:
    """The engine's own ontologies, which every deployment serves: the EPO and the catalog's vocabulary."""
    yield SpecFile(GraphKind.ONTOLOGY, "epo", root / "ontologies" / "epo.ttl")
    yield SpecFile(GraphKind.ONTOLOGY, "catalog", root / "ontologies" / "catalog.ttl")


def spec_files(root: Path = REPO) -> Iterator[SpecFile]:
    """The repository's specification files, in load order (a KG needs its DSO first): the engine's, then the
    vaccine-education domain's data (DSO, shapes, KGs, templates, judges) that ``caie serve --examples`` loads."""
    yield from engine_files(root)
    for path in sorted((root / "ontologies" / "dso").glob("*.ttl")):
        yield SpecFile(GraphKind.DSO, path.stem, path)
    for path in sorted((root / "shapes").glob("*.ttl")):
        yield SpecFile(GraphKind.SHAPES, path.stem, path)
    for path in sorted((root / "ontologies" / "kg").glob("*.ttl")):
        yield SpecFile(GraphKind.KG, path.stem, path)
    for path in sorted((root / "ontologies" / "templates").glob("*.ttl")):
        yield SpecFile(GraphKind.TEMPLATES, path.stem, path)
    for path in sorted((root / "examples" / "judges").glob("*.ttl")):
        yield SpecFile(GraphKind.JUDGES, path.stem, path)


def load_spec_files(
    graphs: GraphService, report: Callable[[str], None] = lambda _: None, *, examples: bool = True
) -> int:
    """Load every specification file (only the engine's without ``examples``) whose content differs from the stored
    graph; how many were loaded."""
    loaded = 0
    for spec in spec_files() if examples else engine_files():
        ref = graphs.ref(spec.kind.value, spec.identifier)
        data = spec.path.read_bytes()
        rdf_format = rdf_format_for_path(spec.path.name)
        current = graphs.find(ref)
        if current is not None and current.digest == graph_digest(
            parse_triples(data, rdf_format, ref.iri.value, graphs.rdf_limits)
        ):
            continue
        graphs.write(ref, data, rdf_format, SYSTEM, mode=WriteMode.REPLACE)
        report(f"loaded {spec.path.relative_to(REPO)} into <{ref.iri.value}>")
        loaded += 1
    return loaded
