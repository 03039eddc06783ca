"""The published queries (``queries/*.rq``) are documented and valid SPARQL 1.1 for any engine."""

from __future__ import annotations

import pytest
import rdflib
from rdflib.plugins.sparql import prepareQuery

from service.core import queries
from service.core.store import EmbeddedStore


@pytest.mark.parametrize("name", queries.names())
def test_query_is_headed_by_a_comment_and_parses_everywhere(name: str) -> None:
    text = queries.load(name)
    assert text.startswith("# "), f"{name}.rq must open with a comment saying what it computes"
    assert "Parameters" in text
    prepareQuery(text)
    EmbeddedStore().select(text)
    rdflib.Dataset().query(text)


def test_queries_exist() -> None:
    assert {"plan-traceability", "blocked-scenarios-by-rule"} <= set(queries.names())
