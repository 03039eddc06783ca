"""The JSON-LD contexts the credentials use, shipped in the package (``contexts/``, their source and licence in
``contexts/SOURCE.md``), and the document loader that serves them and nothing else: a credential is read with no
network, and a document naming another context is refused (a context fetched at verification time could change
what the signed triples say).

The service also serves each shipped context by its file name, ``/contexts/{file}`` (e.g.
``https://www.w3.org/ns/credentials/v2`` at ``/contexts/credentials-v2.jsonld``), so that a verifier can take them
from the service instead of the package: they are the same bytes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from ..core.errors import Unprocessable

DIRECTORY = Path(__file__).resolve().parent / "contexts"
CREDENTIALS_V2 = "https://www.w3.org/ns/credentials/v2"
SHIPPED = {CREDENTIALS_V2: "credentials-v2.jsonld"}
"""Each shipped context's URL and its file in :data:`DIRECTORY`."""


def context_bytes(url: str) -> bytes:
    return (DIRECTORY / SHIPPED[url]).read_bytes()


def shipped_file(name: str) -> bytes | None:
    """The shipped context file ``name`` (as served at ``/contexts/{name}``), or ``None``."""
    return next((context_bytes(url) for url, file in SHIPPED.items() if file == name), None)


@cache
def _document(url: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(context_bytes(url))
    return parsed


def document_loader(url: str, options: object = None) -> dict[str, Any]:
    """pyld's document loader over the shipped contexts only: 422 naming any other URL."""
    if url not in SHIPPED:
        raise Unprocessable(
            f"the JSON-LD context {url} is not one the service ships ({', '.join(SHIPPED)}): refused, not fetched"
        )
    return {"contextUrl": None, "documentUrl": url, "document": _document(url)}
