"""pySHACL's check of a SHACL-SPARQL constraint's query text, made once per text rather than once per focus node.

Before running a SPARQL constraint on a focus node, pySHACL checks its query text against the rules of SHACL
section 5 (no MINUS, VALUES or SERVICE; a nested SELECT selects the pre-bound variables; no AS re-binding them)
with regular expressions that scan the whole text, for every focus node: in a compile of the worked example's
scenario tables (tens of thousands of focus nodes, partial scenarios and probes) that was a fifth of the CPU
time. The verdict depends only on the text and on which variables may be pre-bound, so a text that passed is
remembered by exactly those; one that fails is checked, and raises pySHACL's own error, every time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import cast

from pyshacl.helper.sparql_query_helper import SPARQLQueryHelper

# pySHACL's method is untyped; it reads only class attributes (its regular expressions): the class serves as self
_check_text = cast(
    "Callable[[type[SPARQLQueryHelper], str, bool | None, frozenset[str]], bool]",
    SPARQLQueryHelper.check_invalid_sparql,
)


@lru_cache(maxsize=1024)  # distinct constraint texts of the shapes graphs in use: a handful each
def _passed(text: str, with_value: bool, extravars: frozenset[str]) -> bool:
    # the check reads only the class's regular expressions and whether a value node is given
    return _check_text(SPARQLQueryHelper, text, True if with_value else None, extravars)


def _check_once(
    self: SPARQLQueryHelper, sparql_text: str, valuenode: object = None, extravars: Iterable[str] | None = None
) -> bool:
    return _passed(sparql_text, valuenode is not None, frozenset(extravars or ()))


SPARQLQueryHelper.check_invalid_sparql = _check_once  # type: ignore[method-assign]  # the point of this module
