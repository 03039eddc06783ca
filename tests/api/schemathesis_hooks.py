"""schemathesis hooks for tests/api/test_openapi.py (loaded through ``SCHEMATHESIS_HOOKS``).

schemathesis sends ``text/*`` bodies as text but refuses to send a body of a media type it does not know. The
RDF and SPARQL syntaxes the routes read are text in UTF-8 whatever their media type says, so they go as such.
"""

from __future__ import annotations

import schemathesis

TEXT_BODIES = (
    "application/sparql-query",
    "application/n-triples",
    "application/n-quads",
    "application/trig",
    "application/rdf+xml",
)


@schemathesis.serializer(*TEXT_BODIES)
def utf8(_: schemathesis.SerializationContext, value: object) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")
