"""Property tests (hypothesis) over the digest's canonical literals (issue 23, "a fuzzing suite"): they are a function
of the value. Spellings of one number or instant digest alike, the value read back from the canonical form is the
value written, Oxigraph's read-back digests as what was written, any lexical form at all is taken without an
exception, and a graph's digest does not depend on its blank nodes' labels or its order.

Examples are derandomized (the same run every time) and few enough for ``make test`` (tests/fuzzing.py).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Store, Triple

from service.core.digest import graph_digest
from service.core.literal_forms import XSD, canonical_literal

from .fuzzing import FUZZ


def canonical(text: str, datatype: str) -> Literal:
    return canonical_literal(Literal(text, datatype=NamedNode(XSD + datatype)))


@FUZZ
@given(
    value=st.integers(0, 12).flatmap(lambda places: st.decimals(allow_nan=False, allow_infinity=False, places=places)),
    zeros=st.integers(0, 5),
    plus=st.booleans(),
)
def test_spellings_of_one_decimal_digest_alike_and_keep_its_value(value: Decimal, zeros: int, plus: bool) -> None:
    plain = format(value, "f")
    whole, _, fraction = plain.lstrip("-").partition(".")
    sign = "-" if plain.startswith("-") else ("+" if plus else "")
    padded = f"{sign}{'0' * zeros}{whole}.{fraction}{'0' * zeros}"
    first, second = canonical(plain, "decimal"), canonical(padded, "decimal")
    assert first == second and Decimal(first.value) == value
    assert canonical_literal(first) == first  # canonical is a fixed point


@FUZZ
@given(value=st.integers(-(10**40), 10**40), datatype=st.sampled_from(["integer", "long", "nonNegativeInteger", "int"]))
def test_an_integer_digests_as_the_decimal_of_its_value(value: int, datatype: str) -> None:
    assert canonical(f"+00{value}" if value >= 0 else f"-00{-value}", datatype) == canonical(str(value), "decimal")


@FUZZ
@given(value=st.floats())
def test_spellings_of_one_double_digest_alike_and_read_back_as_it(value: float) -> None:
    spellings = [repr(value), f"{value:.17e}", f"{value:.17E}", f"{value:.17g}"]
    forms = {canonical(s, "double") for s in spellings}
    assert len(forms) == 1
    (form,) = forms
    back = float(form.value.replace("INF", "inf"))
    assert back == value or (math.isnan(back) and math.isnan(value))
    assert canonical_literal(form) == form


@FUZZ
@given(
    moment=st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    offset=st.integers(-14 * 4, 14 * 4).map(lambda q: timedelta(minutes=15 * q)),
)
def test_one_instant_in_any_timezone_digests_alike(moment: datetime, offset: timedelta) -> None:
    utc = moment.replace(tzinfo=UTC)
    local = utc.astimezone(timezone(offset))
    assert canonical(local.isoformat(), "dateTime") == canonical(utc.isoformat(), "dateTime")


LEXICAL = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"[+-]?\d{0,30}(\.\d{0,30})?([eE][+-]?\d{1,6})?", fullmatch=True),
    st.from_regex(r"-?\d{4,12}-\d\d-\d\d(T\d\d:\d\d:\d\d(\.\d{1,12})?)?(Z|[+-]\d\d:\d\d)?", fullmatch=True),
    st.from_regex(
        r"-?P(\d{1,20}Y)?(\d{1,20}M)?(\d{1,20}D)?(T(\d{1,20}H)?(\d{1,20}M)?(\d{1,20}(\.\d{1,9})?S)?)?", fullmatch=True
    ),
)
DATATYPES = [
    "decimal",
    "integer",
    "byte",
    "double",
    "float",
    "boolean",
    "dateTime",
    "dateTimeStamp",
    "time",
    "date",
    "gYear",
    "gYearMonth",
    "gMonthDay",
    "gDay",
    "gMonth",
    "duration",
    "yearMonthDuration",
    "dayTimeDuration",
]


@FUZZ
@given(text=LEXICAL, datatype=st.sampled_from(DATATYPES))
def test_any_lexical_form_is_taken_and_oxigraph_reads_back_what_digests_alike(text: str, datatype: str) -> None:
    try:
        written = Literal(text, datatype=NamedNode(XSD + datatype))
    except ValueError:  # no literal pyoxigraph makes (a lone surrogate): nothing to digest
        return
    form = canonical_literal(written)
    assert canonical_literal(form) == form
    store = Store()
    store.add(Quad(NamedNode("http://x/s"), NamedNode("http://x/p"), written, DefaultGraph()))
    (read,) = [q.object for q in store.quads_for_pattern(None, None, None)]
    assert canonical_literal(read) == form, (written, read)


@st.composite
def blank_graphs(draw: st.DrawFn) -> list[Triple]:
    nodes = [BlankNode(f"b{i}") for i in range(draw(st.integers(1, 5)))]
    named = [NamedNode(f"http://x/n{i}") for i in range(3)]
    terms = st.sampled_from(nodes + named)
    return draw(st.lists(st.builds(Triple, terms, st.sampled_from(named), terms), min_size=1, max_size=12, unique=True))


@FUZZ
@given(graph=blank_graphs(), data=st.data())
def test_a_digest_does_not_depend_on_blank_node_labels_or_order(graph: list[Triple], data: st.DataObject) -> None:
    relabel = {f"b{i}": BlankNode() for i in range(5)}

    def term(value: NamedNode | BlankNode) -> NamedNode | BlankNode:
        return relabel[value.value] if isinstance(value, BlankNode) else value

    other = [Triple(term(t.subject), t.predicate, term(t.object)) for t in data.draw(st.permutations(graph))]
    assert graph_digest(other) == graph_digest(graph)
    assert graph_digest(
        [*graph, Triple(NamedNode("http://x/new"), NamedNode("http://x/n0"), NamedNode("http://x/n1"))]
    ) != graph_digest(graph)
