"""Checking text that becomes an IRI: a request path or parameter names a resource only if it can be one.

pyoxigraph refuses to build a ``NamedNode`` from text that is not an IRI (RFC 3987 §2.2). User text is
checked here first, so the caller gets a 400 naming the offending character rather than a 500.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pyoxigraph import NamedNode

from .errors import BadRequest

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
