"""Compiled scenario tables, built once per distinct input and kept in a small in-process LRU.

Compiling the rule tables (:class:`.production.Production`: pySHACL over each rule's facet combinations,
OWL 2 RL over each facet group) takes seconds; checking a candidate afterwards takes microseconds. The
tables, the prepared :class:`.engine.Context` and the exact frame counts depend only on

* the content of the DSO, of each knowledge graph and of the scenario shapes graph (their RDFC-1.0 digests,
  :func:`service.core.digest.graph_digest`; the KGs as a set, since every step takes their union), and
* the envelope's restriction of the frame: the acceptance criteria (IRI and concepts, in order), the allowed
  countries and languages, and the excluded concepts.

:func:`tables_key` hashes exactly these, so a second plan or derivation over the same inputs reuses the
compiled tables, and any change to a graph's content or to the envelope's restriction compiles afresh.
Seed, sample size and evaluation IRI do not enter the tables and are not part of the key.

Compiling the worked example's tables takes seconds (the cross-check against the reference included), so a
process also keeps them on disk (:func:`service.core.memo.kept`, under ``$CAIE_CACHE_DIR/scenario-tables``):
a miss reads the tables another process pickled there for the same key and the same code
(:data:`CODE_VERSION`, a digest of this package's source), or compiles them under a file lock, so that
processes sharing the directory compile each input once.

What the cache hands out is shared, so it is never mutated: the context is built on the cache's own copies
of the graphs (a caller editing its graphs afterwards cannot reach into the cache), the tables of
:class:`.production.Production` are read-only mappings, and :class:`.frame.FrameCounts` is frozen.
"""

from __future__ import annotations

import copyreg
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from rdflib import Graph

from ..core.memo import kept, source_version
from ..core.validation import content_digest
from .engine import Context, Criterion
from .facets import Schema, build_facets
from .frame import FrameCounts, count_frame
from .production import Production

MAX_ENTRIES = 8
"""Distinct inputs kept (least recently used dropped first); a few evaluations' worth of tables."""


@dataclass(frozen=True)
class CompiledTables:
    """The prepared context, the compiled rule tables and the exact counts of one input. Read-only."""

    context: Context
    production: Production
    counts: FrameCounts


def tables_key(
    dso: Graph,
    kgs: Sequence[Graph],
    shapes: Graph,
    criteria: Sequence[Criterion],
    allowed_countries: Iterable[str] | None,
    allowed_languages: Iterable[str] | None,
    excluded_concepts: Iterable[str],
) -> str:
    """SHA-256 over exactly what determines the compiled tables (see the module docstring)."""
    parts = {
        "dso": content_digest(dso),
        "kgs": sorted(content_digest(g) for g in kgs),
        "shapes": content_digest(shapes),
        "criteria": [[c.iri, sorted(c.concepts), [[t.facet, list(t.values)] for t in c.triggers]] for c in criteria],
        "countries": None if allowed_countries is None else sorted(allowed_countries),
        "languages": None if allowed_languages is None else sorted(allowed_languages),
        "excluded": sorted(excluded_concepts),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()


def build_context(
    dso: Graph,
    kgs: Sequence[Graph],
    shapes: Graph,
    criteria: Sequence[Criterion],
    allowed_countries: frozenset[str] | None = None,
    allowed_languages: frozenset[str] | None = None,
    excluded_concepts: frozenset[str] = frozenset(),
) -> Context:
    """A fresh :class:`Context`: facets restricted by the envelope, rules read from ``shapes``."""
    facets = build_facets(Schema(dso, kgs), allowed_countries, allowed_languages, excluded_concepts)
    return Context(dso, kgs, facets, shapes, criteria)


def _copy(graph: Graph) -> Graph:
    own = Graph()
    own += graph
    return own


def compile_tables(
    dso: Graph,
    kgs: Sequence[Graph],
    shapes: Graph,
    criteria: Sequence[Criterion],
    allowed_countries: frozenset[str] | None = None,
    allowed_languages: frozenset[str] | None = None,
    excluded_concepts: frozenset[str] = frozenset(),
) -> CompiledTables:
    """Compile from scratch, on private copies of the graphs (what the cache stores)."""
    context = build_context(
        _copy(dso),
        tuple(_copy(g) for g in kgs),
        _copy(shapes),
        tuple(criteria),
        allowed_countries,
        allowed_languages,
        excluded_concepts,
    )
    production = Production(context)
    return CompiledTables(context, production, count_frame(production))


def read_only(mapping: dict[object, object]) -> MappingProxyType[object, object]:
    """A read-only view again, when pickled tables are loaded."""
    return MappingProxyType(mapping)


# The tables are read-only mappings (MappingProxyType), which pickle cannot take apart: kept as their dict.
copyreg.pickle(MappingProxyType, lambda mapping: (read_only, (dict(mapping),)))


CODE_VERSION = source_version(Path(__file__).parent)
"""A digest of this package's source: tables pickled by other code are never read."""


class TableCache:
    """A bounded LRU of :class:`CompiledTables` by :func:`tables_key`, safe to share between threads.

    Two threads missing on the same key both compile (the work is deterministic) and the first result
    stored wins; the lock only guards the dictionary, never a compilation.
    """

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, CompiledTables] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str, build: Callable[[], CompiledTables]) -> CompiledTables:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        built = build()
        with self._lock:
            kept = self._entries.setdefault(key, built)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return kept

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)


TABLES = TableCache()
"""The process's cache: every derivation (plans, the CLI, the tests) goes through it."""


def compiled_tables(
    dso: Graph,
    kgs: Sequence[Graph],
    shapes: Graph,
    criteria: Sequence[Criterion],
    allowed_countries: frozenset[str] | None = None,
    allowed_languages: frozenset[str] | None = None,
    excluded_concepts: frozenset[str] = frozenset(),
    cache: TableCache = TABLES,
) -> CompiledTables:
    """The compiled tables of these inputs: from ``cache`` when they were compiled before, else compiled now."""
    criteria = tuple(criteria)
    key = tables_key(dso, kgs, shapes, criteria, allowed_countries, allowed_languages, excluded_concepts)
    return cache.get(
        key,
        lambda: kept(
            "scenario-tables",
            f"{key}-{CODE_VERSION}",
            lambda: compile_tables(dso, kgs, shapes, criteria, allowed_countries, allowed_languages, excluded_concepts),
            CompiledTables,
        ),
    )
