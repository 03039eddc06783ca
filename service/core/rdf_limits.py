"""Limits on RDF request bodies, checked by a byte scan before the parser sees them (issue 23 §1, §3, §6).

The parsers recurse or go quadratic on nesting (pyoxigraph's JSON-LD parser aborted the process at 20,000
nested objects; 20,000 nested RDF/XML elements took 5 s) and its RDF/XML parser expands entities (nine levels
of them, 614 bytes, grew to 6.4 GB). So before parsing:

- RDF/XML with a document type or entity declaration is refused (400), whatever else it holds;
- a body whose nesting is deeper than ``max_nesting`` is refused (413): blank-node property lists,
  collections, quoted triples and TriG graphs in the Turtle family, elements in RDF/XML, objects and arrays
  in JSON-LD. The scan skips what cannot nest (strings, IRIs, comments, XML attribute values and CDATA), so
  a ``[`` inside a literal is not counted. It runs in C loops (regular expressions, ``translate``) except for
  RDF/XML's tags, and not at all when the body holds fewer opening brackets than the limit.

The triple count and literal size are checked while parsing (:func:`service.core.rdf.parse_triples`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

from pyoxigraph import RdfFormat

from .config import Settings
from .errors import BadRequest, PayloadTooLarge


@dataclass(frozen=True)
class RdfLimits:
    """The bounds on one RDF body, from the deployment's settings (``CAIE_RDF_…``, ``CAIE_CANONICALIZE_…``)."""

    max_nesting: int
    max_triples: int
    max_literal_bytes: int
    canonicalize_time_limit_s: float

    @classmethod
    def of(cls, settings: Settings) -> RdfLimits:
        return cls(
            settings.rdf_max_nesting,
            settings.rdf_max_triples,
            settings.rdf_max_literal_bytes,
            settings.canonicalize_time_limit_s,
        )


DEFAULT_LIMITS = RdfLimits(
    *(
        Settings.model_fields[name].default
        for name in ("rdf_max_nesting", "rdf_max_triples", "rdf_max_literal_bytes", "canonicalize_time_limit_s")
    )
)
"""The settings' defaults, for callers without a deployment's settings (files of the repository, tools)."""

# Turtle, TriG, N-Triples, N-Quads: what cannot nest, leftmost first. Possessive quantifiers keep an unterminated
# string from backtracking; each alternative fails at most once per kind of quote, so the scan is linear.
_TURTLE_OPAQUE = re.compile(
    rb'"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    rb"|'''(?:[^'\\]++|\\.|'(?!''))*+'''"
    rb'|"(?:[^"\\\n\r]++|\\.)*+"'
    rb"|'(?:[^'\\\n\r]++|\\.)*+'"
    rb"|<[^<>\x00-\x20]*+>"  # an IRI; '<<' (a quoted triple) is left
    rb"|#[^\n\r]*+"
    rb"|\\.",
    re.DOTALL,
)
_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
# RDF/XML: comments, CDATA, processing instructions and declarations, then tags (attribute values may hold '>').
# Every alternative ends at the end of the body if nothing closes it, so no start is scanned twice.
_XML_TOKEN = re.compile(
    rb"<!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)|<[?!].*?(?:>|\Z)"
    rb"""|<(/?)(?:[^>"'/]++|/(?!>)|"[^"]*+(?:"|\Z)|'[^']*+(?:'|\Z))*+(/?)(?:>|\Z)""",
    re.DOTALL,
)
_DTD = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)

_OPENERS, _CLOSERS = b"[({", b"])}"
_SIGNED = bytes.maketrans(_OPENERS + _CLOSERS, b"\x01" * 3 + b"\xff" * 3)  # +1 and -1 as signed bytes
_NOT_BRACKET = bytes(sorted(set(range(256)) - set(_OPENERS + _CLOSERS)))


def check_before_parsing(data: bytes, rdf_format: RdfFormat, limits: RdfLimits) -> None:
    """400 for RDF/XML that declares a DTD or entities; 413 for a body nested deeper than ``limits.max_nesting``."""
    if rdf_format == RdfFormat.RDF_XML:
        if _DTD.search(data):
            raise BadRequest(
                "the RDF/XML body has a document type or entity declaration (<!DOCTYPE …>, <!ENTITY …>): "
                "this service reads none, since entities can expand exponentially (billion laughs)"
            )
        depth = _xml_depth(data, limits.max_nesting)
        what = "elements"
    elif rdf_format == RdfFormat.JSON_LD:
        depth = _bracket_depth(_JSON_STRING.sub(b"", data)) if _openers(data) > limits.max_nesting else 0
        what = "objects and arrays"
    else:
        depth = _turtle_depth(data) if _openers(data) > limits.max_nesting else 0
        what = "blank-node property lists, collections, quoted triples or graphs"
    if depth > limits.max_nesting:
        deep = f"at least {depth}" if rdf_format == RdfFormat.RDF_XML else str(depth)  # its scan stops there
        raise PayloadTooLarge(
            f"the {rdf_format.name} body nests {what} {deep} deep; this deployment reads at most "
            f"{limits.max_nesting} levels (CAIE_RDF_MAX_NESTING)"
        )


def nesting_depth(data: bytes, rdf_format: RdfFormat) -> int:
    """How deep ``data`` nests, as :func:`check_before_parsing` counts it (RDF/XML: counted in full)."""
    if rdf_format == RdfFormat.RDF_XML:
        return _xml_depth(data, None)
    if rdf_format == RdfFormat.JSON_LD:
        return _bracket_depth(_JSON_STRING.sub(b"", data))
    return _turtle_depth(data)


def _openers(data: bytes) -> int:
    """An upper bound of the nesting depth: nothing nests deeper than the brackets that open it."""
    return sum(data.count(bytes((c,))) for c in _OPENERS) + data.count(b"<<")


def _turtle_depth(data: bytes) -> int:
    return _bracket_depth(_TURTLE_OPAQUE.sub(b"", data).replace(b"<<", b"(").replace(b">>", b")"))


def _bracket_depth(data: bytes) -> int:
    """The deepest nesting of ``[ ( {`` in ``data``, counted in C: each bracket a signed byte, then running sums."""
    steps = data.translate(_SIGNED, _NOT_BRACKET)
    return max(accumulate(memoryview(steps).cast("b")), default=0)


def _xml_depth(data: bytes, limit: int | None) -> int:
    """The deepest element nesting of ``data``; the scan stops once past ``limit`` (returning that depth)."""
    if limit is not None and data.count(b"<") <= limit:
        return 0
    depth = deepest = 0
    for token in _XML_TOKEN.finditer(data):
        closing, empty = token.group(1), token.group(2)
        if closing is None:  # a comment, CDATA, a processing instruction
            continue
        if closing:
            depth -= 1
        elif not empty:
            depth += 1
            if depth > deepest:
                deepest = depth
                if limit is not None and deepest > limit:
                    break
    return deepest
