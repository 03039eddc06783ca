"""``SERVICE`` clauses in a client's query, refused unless their endpoint is allow-listed.

A federated query makes the service open connections wherever the query says (any host, any port), so only
endpoints the operator lists (``CAIE_SERVICE_ALLOWLIST``) may be called. The scan skips comments, strings
and IRIs, so ``"SERVICE <…>"`` in a literal or a comment is no clause; a query without the word at all
skips the scan (the fast path).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from urllib.parse import urljoin

from ..errors import BadRequest

_TOKENS = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
      | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
      | (?P<prefix>\bPREFIX\s+(?P<pname>[A-Za-z][\w.-]*)?:\s*<(?P<namespace>[^<>"{}|^`\\\x00-\x20]*)>)
      | (?P<base>\bBASE\s*<(?P<base_iri>[^<>"{}|^`\\\x00-\x20]*)>)
      | (?P<service>(?<![?$\w:])SERVICE\b(?:\s+SILENT)?\s+(?P<endpoint><[^<>"{}|^`\\\x00-\x20]*>|[?$]\w+|(?:[A-Za-z][\w.-]*)?:[\w.:%-]*)?)
    """,
    re.IGNORECASE | re.VERBOSE,
)


def service_endpoints(query: str) -> list[str | None]:
    """The endpoint IRI of each ``SERVICE`` clause (``None`` where it is a variable or cannot be resolved)."""
    if "service" not in query.lower():
        return []
    prefixes: dict[str, str] = {}
    base = ""
    found: list[str | None] = []
    for match in _TOKENS.finditer(query):
        if match["prefix"]:
            prefixes[match["pname"] or ""] = urljoin(base, match["namespace"])
        elif match["base"]:
            base = urljoin(base, match["base_iri"])
        elif match["service"]:
            found.append(_resolve(match["endpoint"] or "", prefixes, base))
    return found


def _resolve(endpoint: str, prefixes: dict[str, str], base: str) -> str | None:
    if endpoint.startswith("<"):
        iri = urljoin(base, endpoint[1:-1])
        return iri if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", iri) else None
    if ":" in endpoint and endpoint[0] not in "?$":
        prefix, _, local = endpoint.partition(":")
        return prefixes[prefix] + local if prefix in prefixes else None
    return None


def refuse_unlisted_services(query: str, allowed: Collection[str]) -> None:
    """400 for a ``SERVICE`` whose endpoint is not on the allow-list (a variable endpoint never is)."""
    for endpoint in service_endpoints(query):
        if endpoint is None or endpoint not in allowed:
            listed = ", ".join(f"<{iri}>" for iri in sorted(allowed)) or "none"
            shown = f"<{endpoint}>" if endpoint else "an endpoint given by a variable or an unknown prefix"
            raise BadRequest(
                f"SERVICE {shown} is refused: federated queries may only call endpoints on the allow-list "
                f"(CAIE_SERVICE_ALLOWLIST; allowed: {listed})"
            )
