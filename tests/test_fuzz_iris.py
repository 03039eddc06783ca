"""Property tests (hypothesis) over the IRI checks (issue 23, "a fuzzing suite"): they accept only what pyoxigraph
accepts (else a 500 comes later, from the store), and :func:`service.core.iris.named_node` gives the IRI itself or a
400 naming it.

Examples are derandomized (the same run every time) and few enough for ``make test`` (tests/fuzzing.py).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import NamedNode

from service.core.errors import BadRequest
from service.core.iris import invalid_character, named_node, require_iri_text

from .fuzzing import BASE, FUZZ


@FUZZ
@given(text=st.text(max_size=40))
def test_iri_text_the_checks_accept_is_an_iri_to_pyoxigraph(text: str) -> None:
    try:
        require_iri_text(text, "the identifier")
    except BadRequest:
        assert invalid_character(text) is not None
        return
    NamedNode(BASE + text)  # raises (a 500 later, in the store) if the check let through what pyoxigraph refuses


@FUZZ
@given(iri=st.one_of(st.text(max_size=40), st.text(max_size=30).map(lambda t: "http://x/" + t)))
def test_named_node_is_the_iri_or_a_400(iri: str) -> None:
    try:
        assert named_node(iri).value == iri
    except BadRequest as error:
        assert repr(iri) in error.message
