"""What a client's SPARQL request is: its form (SELECT, ASK, CONSTRUCT, DESCRIBE) or an update to refuse.

The form decides which media types can answer it (SPARQL 1.1 Protocol §2.1,
https://www.w3.org/TR/sparql11-protocol/#query-operation).
"""

from __future__ import annotations

import re
from enum import Enum
from typing import NoReturn

from .errors import BadRequest

_PROLOGUE = re.compile(
    r"""\s*(?:\#[^\n]*\n?               # a comment
        |BASE\s*<[^>]*>                 # BASE <iri>
        |PREFIX\s+[^\s:]*:\s*<[^>]*>    # PREFIX p: <iri>
        )""",
    re.IGNORECASE | re.VERBOSE,
)
_KEYWORD = re.compile(r"\s*([A-Za-z]+)")
_UPDATES = {"INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY", "WITH"}


class QueryForm(Enum):
    SELECT = "SELECT"
    ASK = "ASK"
    CONSTRUCT = "CONSTRUCT"
    DESCRIBE = "DESCRIBE"

    @property
    def returns_graph(self) -> bool:
        return self in (QueryForm.CONSTRUCT, QueryForm.DESCRIBE)


def refuse_update() -> NoReturn:
    """400: this endpoint does not offer the SPARQL 1.1 Protocol update operation."""
    raise BadRequest(
        "this SPARQL endpoint is read-only: updates are refused. "
        "Write graphs with PUT/POST /graphs/{kind}/{id} (SPARQL 1.1 Protocol §2.2 is not offered here)"
    )


def query_form(query: str) -> QueryForm:
    """The form of a query, or 400 for an update or text that is no query."""
    position = 0
    while True:
        match = _PROLOGUE.match(query, position)
        if not match or match.end() == position:
            break
        position = match.end()
    keyword = _KEYWORD.match(query, position)
    word = keyword.group(1).upper() if keyword else ""
    if word in _UPDATES:
        refuse_update()
    try:
        return QueryForm(word)
    except ValueError:
        raise BadRequest(f"not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE, found {word or 'nothing'!r}") from None
