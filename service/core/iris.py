"""The IRIs a deployment mints, and checking text that becomes an IRI.

The layout (below): which path segments the deployment mints IRIs under, the graph IRIs, and the one IRI a
request path names. The checks: pyoxigraph refuses to build a ``NamedNode`` from text that is not an IRI
(RFC 3987 §2.2), so user text is checked here first, and the caller gets a 400 naming the offending
character rather than a 500.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pyoxigraph import NamedNode

from .errors import BadRequest
from .rdf import local_name

# RFC 3987 §2.2: iunreserved, sub-delims, ':', '@', '/', '?', '#' and '%' (as pct-encoded) are the
# ASCII an IRI path, query or fragment may hold; everything else in ASCII is never allowed.
_ASCII_ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?#%")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_PROBE_BASE = "http://iri.check/"


@lru_cache(maxsize=4096)
def _ucs_allowed(char: str) -> bool:
    """Whether a non-ASCII character may appear in an IRI path (pyoxigraph is the authority)."""
    try:
        NamedNode(_PROBE_BASE + char)
        return True
    except ValueError:
        return False


def _describe(char: str) -> str:
    name = unicodedata.name(char, "a control character" if unicodedata.category(char) == "Cc" else "unnamed")
    return f"{char!r} (U+{ord(char):04X}, {name.lower()})"


def invalid_character(text: str) -> str | None:
    """What makes ``text`` unfit for an IRI's path, query or fragment, or ``None`` when nothing does.

    >>> invalid_character("measles")
    >>> invalid_character("a b")
    "' ' (U+0020, space) at position 1"
    """
    fragment = False
    for position, char in enumerate(text):
        if char == "%" and not _PERCENT.match(text, position):
            return f"'%' not followed by two hex digits at position {position}"
        if char == "#":
            if fragment:
                return f"a second '#' at position {position}"
            fragment = True
        elif (char not in _ASCII_ALLOWED) if char.isascii() else not _ucs_allowed(char):
            return f"{_describe(char)} at position {position}"
    return None


def require_iri_text(text: str, what: str) -> str:
    """``text`` if it may be part of an IRI (a path, an identifier); else 400 naming the character."""
    problem = invalid_character(text)
    if problem is not None:
        raise BadRequest(f"{what} {text!r} cannot be part of an IRI (RFC 3987 §2.2): it contains {problem}")
    return text


def named_node(iri: str, what: str = "the IRI") -> NamedNode:
    """``iri`` as a pyoxigraph ``NamedNode``, or 400 naming what makes it invalid (RFC 3987)."""
    try:
        return NamedNode(iri)
    except ValueError as error:
        problem = invalid_character(iri) or str(error)
        raise BadRequest(f"{what} {iri!r} is not an absolute IRI (RFC 3987): {problem}") from error


# ------------------------------------------------------------------------------------------ the IRI layout
# One path, one IRI (docs/publishing.md): the deployment mints IRIs only under the first path segments below;
# every other path at the service is the persistent vocabulary's (``https://w3id.org/ob-caie/{path}``, which w3id
# redirects here). The vocabulary never uses these segments, so no IRI shadows another.

GRAPHS_SEGMENT = "graphs"
RECORDS_SEGMENT = "evaluations"
DEPLOYMENT_SEGMENTS = frozenset({GRAPHS_SEGMENT, RECORDS_SEGMENT, "agents", "contexts", ".well-known"})
"""First path segments of the IRIs (and documents) a deployment mints."""


def catalog_graph_iri(base: str) -> str:
    """The catalog graph, ``{base}graphs``: the collection every other graph is a member of."""
    return base + GRAPHS_SEGMENT


def graph_iri(base: str, kind: str, identifier: str) -> str:
    """A named graph's IRI. A record's graphs are named by what they record (``{base}evaluations/{id}``, its
    batches below it); every other kind lives under the catalog, ``{base}graphs/{kind}/{id}``, which is also
    its Graph Store resource (``/graphs/{kind}/{id}``)."""
    if kind == RECORDS_SEGMENT:
        return f"{base}{RECORDS_SEGMENT}/{identifier}"
    return f"{base}{GRAPHS_SEGMENT}/{kind}/{identifier}"


def minted_number(iri: str) -> int:
    """The number a numbered IRI the deployment mints ends with (``…/{segment}/{n}``: a plan, run, report or retry
    batch, a probe, a scenario trigger). The records state no number of their own (adding one would change their
    digests), so the layout is read back here, in one place, as :func:`graph_iri` and the batches write it."""
    return int(iri.rsplit("/", 1)[-1])


def agent_name(iri: str) -> str:
    """The name an agent's IRI gives: ``{name}`` of ``{base}agents/{name}`` (:meth:`.catalog.Catalog.agent_iri`), or
    the local name of an agent another system named (an imported record's)."""
    _, minted, name = iri.rpartition("/agents/")
    return name if minted else local_name(iri)


def is_deployment_path(path: str) -> bool:
    """Whether a request path (without its leading '/') names an IRI under the deployment's base."""
    return path.split("/", 1)[0] in DEPLOYMENT_SEGMENTS


def iri_for_path(base: str, vocabulary: str, path: str) -> str:
    """The one IRI a request path names: ``{base}{path}`` under a deployment segment, else ``{vocabulary}{path}``."""
    path = path.lstrip("/")
    return (base if is_deployment_path(path) else vocabulary) + path


def path_for_iri(base: str, vocabulary: str, iri: str) -> str | None:
    """The request path that dereferences ``iri`` here (fragment dropped), or ``None`` when no path does."""
    document = iri.split("#", 1)[0]
    for prefix, deployment in ((base, True), (vocabulary, False)):
        if document.startswith(prefix):
            path = document[len(prefix) :]
            return "/" + path if is_deployment_path(path) == deployment else None
    return None
