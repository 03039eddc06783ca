"""Property tests (hypothesis) over the SPARQL scanner that runs before the query parser (issue 23, "a fuzzing
suite"): :mod:`service.core.sparql_depth` counts nesting exactly on queries built with a known depth, their strings,
comments and IRIs full of brackets (a parser recurses on nesting, so a scanner that counted less would let a crash
through, and one that counted more would refuse sane queries); each built query runs on pyoxigraph, so the generator
writes what a client could; any text at all is taken, and the scan stops past its limit.

Examples are derandomized (the same run every time) and few enough for ``make test`` (tests/fuzzing.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import Store

from service.core.errors import BadRequest
from service.core.sparql_depth import deepest, refuse_deep_nesting

from .fuzzing import FUZZ, NOISE_STRINGS, TURTLE_ALPHABET


@st.composite
def sparql_group(draw: st.DrawFn, depth: int) -> str:
    """A group graph pattern nesting ``depth`` braces, parentheses or brackets below its own braces."""
    noise = draw(NOISE_STRINGS)
    if depth == 0:
        return draw(
            st.sampled_from(
                [f'?s ?p "{noise}" .', "?s <http://x/p(1)> ?o .", f"# {noise}\n?s ?p ?o .", f"?s ?p '''{noise}''' ."]
            )
        )
    kind = draw(st.sampled_from(["group", "optional", "filter", "blank", "union"]))
    inner = draw(sparql_group(depth - 1))
    if kind == "group":
        return "{ " + inner + " }"
    if kind == "optional":
        return "OPTIONAL { " + inner + " }"
    if kind == "union":
        return "{ ?s ?p ?o } UNION { " + inner + " }"
    if kind == "blank":
        return f"?s ?p [ <http://x/q> ?o ] . {{ {inner} }}"
    return f'FILTER(STRLEN("{noise}") > 0) {{ {inner} }}'


@FUZZ
@given(depth=st.integers(0, 25), data=st.data())
def test_the_query_scanner_counts_nesting_exactly(depth: int, data: st.DataObject) -> None:
    query = "SELECT * WHERE { " + data.draw(sparql_group(depth)) + " }"
    list(Store().query(query))  # a query a client could send
    counted = deepest(query, 1_000)
    assert depth + 1 <= counted <= depth + 2  # its own braces; FILTER's parentheses beside a group add one
    refuse_deep_nesting(query, counted)
    with pytest.raises(BadRequest):
        refuse_deep_nesting(query, counted - 1)
    assert deepest(query, counted - 1) == counted  # it stops at the first level past the limit, and says so


@FUZZ
@given(text=st.text(TURTLE_ALPHABET + "?$SELECTWHR", max_size=400), most=st.integers(0, 10))
def test_the_query_scanner_takes_any_text_and_stops_past_its_limit(text: str, most: int) -> None:
    counted = deepest(text, most)
    assert 0 <= counted <= most + 1
    assert counted <= deepest(text, most + 5)
