"""How deeply a client's SPARQL text nests, read before any parser sees it (issue 23 §5).

The engines parse a query by recursion: 3,000 nested braces overflowed a query worker's stack (SIGSEGV) and
reset a fast-lane front with every connection on it, and 200 nested blank-node brackets take a parser 16 s.
So a query or update that nests braces, parentheses or brackets past ``CAIE_QUERY_MAX_NESTING`` is refused
with 400 first, by a scan that costs one regular-expression pass and stops at the first level too deep.

The scan skips what cannot nest: comments, strings and IRIs. Parentheses inside what looks like an IRI are
counted all the same (``?a<((…))>1`` is a comparison to a parser, not an IRI): counting too much can only
refuse a pathological query, counting too little would let a crash through.
"""

from __future__ import annotations

import re

from .errors import BadRequest

_TOKENS = re.compile(
    r"""\#[^\n]*
      | \"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\" | '''(?:[^'\\]|\\.|'(?!''))*'''
      | "(?:[^"\\\n]|\\.)*" | '(?:[^'\\\n]|\\.)*'
      | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
      | (?P<open>[{(\[]) | (?P<close>[})\]])""",
    re.VERBOSE | re.DOTALL,
)


def deepest(text: str, most: int) -> int:
    """The deepest nesting of braces, parentheses and brackets in ``text``, read up to the first level past
    ``most`` (then ``most + 1``)."""
    depth = deepest_seen = 0
    for token in _TOKENS.finditer(text):
        kind = token.lastgroup
        if kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
        elif kind == "iri":
            deepest_seen = max(deepest_seen, depth + token.group().count("("))
            depth = max(depth + token.group().count("(") - token.group().count(")"), 0)
        deepest_seen = max(deepest_seen, depth)
        if deepest_seen > most:
            return most + 1
    return deepest_seen


def refuse_deep_nesting(text: str, most: int) -> None:
    """400 naming the limit when ``text`` (a query or update) nests braces, parentheses or brackets past ``most``."""
    if deepest(text, most) > most:
        raise BadRequest(
            f"the query nests braces, parentheses or brackets more than {most} deep (CAIE_QUERY_MAX_NESTING): "
            "it is refused before it is parsed; flatten it (fewer nested groups or expressions)"
        )
