"""The compiled-tables cache (service.scenarios.cache): keyed by exactly what the tables depend on (graph
contents and the envelope's restriction, not seed or sample size), bounded, shared read-only, and giving
the same derivation as tables compiled afresh."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef

from service.core.memo import CACHE_DIR_ENV
from service.scenarios.cache import TABLES, CompiledTables, TableCache, compile_tables, compiled_tables, tables_key
from service.scenarios.derive import CriterionScope, DerivationInput, derive, derive_with
from service.scenarios.engine import Criterion

from . import ROOT, VE
from .conftest import DSO, KGS, SHAPES, TINY, TINY_CRITERIA
from .worlds import OLD_CRITERION, small_dso, small_shapes

CRITERIA = TINY_CRITERIA
SMALL_DSO, SMALL_SHAPES = small_dso(["functional"]), small_shapes(["core", "routing"])
"""A small world (8 candidates, a consistency and a routing rule): compiling it takes about a second."""
SMALL = (SMALL_DSO, (), SMALL_SHAPES, (OLD_CRITERION,))


def key(**changes: object) -> str:
    args: dict[str, object] = dict(dso=DSO, kgs=KGS, shapes=SHAPES, criteria=CRITERIA, **TINY)
    args.update(changes)
    return tables_key(**args)  # type: ignore[arg-type]  # args mixes the key's argument types, which a dict[str, object] cannot say


def copy_of(graph: Graph) -> Graph:
    return Graph().parse(data=graph.serialize(format="nt"), format="nt")


def test_the_key_is_the_content_and_the_restriction() -> None:
    base = key()
    assert key(dso=copy_of(DSO), kgs=tuple(reversed(KGS))) == base  # same contents, other objects, other order
    edited = copy_of(KGS[0])
    edited.add((URIRef("https://example.org/x"), URIRef("https://example.org/p"), Literal("y")))
    shapes = copy_of(SHAPES)
    shapes.remove((next(iter(shapes.subjects())), None, None))
    others = [
        key(kgs=(edited, *KGS[1:])),
        key(kgs=KGS[1:]),
        key(shapes=shapes),
        key(criteria=()),
        key(criteria=(Criterion(CRITERIA[0].iri, frozenset({str(VE.MCV)})),)),
        key(allowed_countries=None),
        key(allowed_languages=frozenset()),
        key(excluded_concepts=TINY["excluded_concepts"] - {str(VE.Infant)}),
    ]
    assert len({base, *others}) == len(others) + 1


def test_a_cache_compiles_once_per_key_and_keeps_the_latest() -> None:
    cache = TableCache(max_entries=2)
    built: list[str] = []

    def build(name: str):
        return lambda: built.append(name) or name  # type: ignore[return-value, func-returns-value]  # append() returns None, so `or name` makes the builder's value: a counting stub

    assert cache.get("a", build("a")) == "a" and cache.get("a", build("a again")) == "a"
    cache.get("b", build("b"))
    cache.get("a", build("a"))  # a is now the most recently used
    cache.get("c", build("c"))  # so b is dropped
    assert built == ["a", "b", "c"] and len(cache) == 2
    cache.get("a", build("a"))
    cache.get("b", build("b"))
    assert built == ["a", "b", "c", "b"] and (cache.hits, cache.misses) == (3, 4)


@pytest.fixture(scope="module")
def private() -> tuple[TableCache, Graph, CompiledTables]:
    """Tables compiled from scratch into a private cache, from the caller's own copy of the DSO."""
    cache = TableCache()
    dso = copy_of(SMALL_DSO)
    return cache, dso, compiled_tables(dso, *SMALL[1:], cache=cache)


def test_cached_tables_are_shared_read_only_and_private_to_the_cache(private) -> None:
    cache, dso, first = private
    again = compiled_tables(copy_of(SMALL_DSO), *SMALL[1:], cache=cache)
    assert again is first and (cache.hits, cache.misses) == (1, 1)
    assert first.context.dso is not dso and first.context.shapes is not SMALL_SHAPES
    before = len(first.context.dso)
    dso.add((URIRef("https://example.org/x"), URIRef("https://example.org/p"), Literal("y")))  # the caller's graph
    assert len(first.context.dso) == before
    blocked = next(c for c in first.production.components if c.blocked)
    with pytest.raises(TypeError):
        blocked.blocked[0] = ()  # type: ignore[index]  # the point: a cached table is immutable, and assigning to it raises
    with pytest.raises(TypeError):
        first.production.component_of[0] = blocked  # type: ignore[index]  # the point: a cached table is immutable, and assigning to it raises
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.counts = first.counts  # type: ignore[misc]  # the point: a cached result is frozen, and assigning to it raises
    routing = next(c for c in first.production.components if c.pair_blocked)
    with pytest.raises(TypeError):
        routing.pair_blocked[OLD_CRITERION.iri][0] = ()  # type: ignore[index]  # the point: a cached table is immutable, and assigning to it raises


def test_cached_and_fresh_tables_derive_the_same(private) -> None:
    fresh: CompiledTables = private[2]  # compiled from scratch (compile_tables) by its private cache
    cached = compiled_tables(*SMALL)
    assert cached is not fresh
    assert cached.counts == fresh.counts and 0 < fresh.counts.eligible < fresh.counts.total
    for i in range(fresh.context.space.size):
        assert cached.production.blocks(i, "s") == fresh.production.blocks(i, "s")
        assert cached.production.pair_blocks(i, OLD_CRITERION.iri, "s") == fresh.production.pair_blocks(
            i, OLD_CRITERION.iri, "s"
        )


def test_derive_reuses_the_tables_of_the_same_inputs_whatever_the_seed() -> None:
    inp = DerivationInput(
        dso=DSO,
        kgs=KGS,
        shapes=(SHAPES,),
        criteria=(CriterionScope(CRITERIA[0].iri, CRITERIA[0].concepts),),
        seed=1,
        sample_size=10,
        **TINY,
    )  # type: ignore[arg-type]  # TINY is a dict of frozensets under the input's own field names
    _, ctx, production = derive_with(inp)
    hits = TABLES.hits
    other = derive(dataclasses.replace(inp, seed=2, sample_size=20, evaluation_iri="https://example.org/evaluations/2"))
    _, ctx_again, production_again = derive_with(dataclasses.replace(inp, dso=copy_of(DSO)))
    assert TABLES.hits == hits + 2 and ctx_again is ctx and production_again is production
    assert len(other.scenarios) == 20 and other.counts == derive(inp).counts
    fewer = derive(dataclasses.replace(inp, allowed_languages=frozenset()))  # another restriction: compiled anew
    assert fewer.counts.total == 0


def test_tables_kept_on_disk_by_one_process_serve_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``CAIE_CACHE_DIR``: another process compiles and keeps the tables; this one reads them instead of
    compiling, and they check candidates as tables compiled here do; an unreadable file is compiled again."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    other = (
        "from tests.scenarios.test_cache import SMALL; from service.scenarios.cache import compiled_tables; "
        "print(compiled_tables(*SMALL).counts.eligible)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", other],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, CACHE_DIR_ENV: str(tmp_path)},
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    [kept] = tmp_path.glob("scenario-tables/*.pickle")
    written = kept.stat().st_mtime_ns
    fresh = compile_tables(*SMALL)
    assert int(ran.stdout) == fresh.counts.eligible

    read = compiled_tables(*SMALL, cache=TableCache())
    assert read.counts == fresh.counts and read.production.fallback == fresh.production.fallback
    size = read.context.space.size
    assert [read.production.blocks(i, "s") for i in range(size)] == [
        fresh.production.blocks(i, "s") for i in range(size)
    ]
    assert kept.stat().st_mtime_ns == written  # read, not compiled and written again

    kept.write_bytes(b"not a pickle")
    again = compiled_tables(*SMALL, cache=TableCache())
    assert again.counts == fresh.counts and kept.read_bytes() != b"not a pickle"
