"""Media types the service reads and writes, and HTTP content negotiation (RFC 9110 §12.5.1)."""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import QueryResultsFormat, RdfFormat

from .errors import NotAcceptable, UnsupportedMediaType

HTML = "text/html"
JSON = "application/json"

RDF_FORMATS: dict[str, RdfFormat] = {
    "text/turtle": RdfFormat.TURTLE,
    "application/trig": RdfFormat.TRIG,
    "application/n-triples": RdfFormat.N_TRIPLES,
    "application/n-quads": RdfFormat.N_QUADS,
    "application/ld+json": RdfFormat.JSON_LD,
    "application/rdf+xml": RdfFormat.RDF_XML,
}
"""Every RDF syntax the service parses and serializes, by its registered media type."""

RDF_ALIASES: dict[str, str] = {
    "application/x-turtle": "text/turtle",
    "application/turtle": "text/turtle",
    "text/n3": "text/turtle",
    "text/plain": "application/n-triples",
    "application/x-trig": "application/trig",
    "text/x-nquads": "application/n-quads",
    "application/xml": "application/rdf+xml",
    "application/x-json+ld": "application/ld+json",
}

GRAPH_FORMATS: tuple[str, ...] = (
    "text/turtle",
    "application/ld+json",
    "application/n-triples",
    "application/rdf+xml",
    "application/trig",
    "application/n-quads",
)
"""What a single graph can be written as, in order of preference when the client has none."""

RESULT_FORMATS: dict[str, QueryResultsFormat] = {
    "application/sparql-results+json": QueryResultsFormat.JSON,
    "application/sparql-results+xml": QueryResultsFormat.XML,
    "text/csv": QueryResultsFormat.CSV,
    "text/tab-separated-values": QueryResultsFormat.TSV,
}
RESULT_ALIASES: dict[str, str] = {
    "application/json": "application/sparql-results+json",
    "application/xml": "application/sparql-results+xml",
}

EXTENSIONS: dict[str, str] = {
    ".ttl": "text/turtle",
    ".trig": "application/trig",
    ".nt": "application/n-triples",
    ".nq": "application/n-quads",
    ".jsonld": "application/ld+json",
    ".rdf": "application/rdf+xml",
    ".owl": "application/rdf+xml",
    ".xml": "application/rdf+xml",
}


def base_type(content_type: str | None) -> str:
    """The media type without parameters, lower-cased: ``text/turtle; charset=utf-8`` -> ``text/turtle``."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def rdf_format_for(content_type: str | None) -> RdfFormat:
    """The RDF syntax of a request body, or 415 naming what is accepted."""
    media = base_type(content_type)
    media = RDF_ALIASES.get(media, media)
    if media in RDF_FORMATS:
        return RDF_FORMATS[media]
    given = media or "no Content-Type"
    raise UnsupportedMediaType(
        f"cannot read {given}: send one of {', '.join(RDF_FORMATS)}",
    )


def rdf_format_for_path(path: str) -> RdfFormat:
    """The RDF syntax of a file, from its extension."""
    for extension, media in EXTENSIONS.items():
        if path.lower().endswith(extension):
            return RDF_FORMATS[media]
    raise UnsupportedMediaType(f"cannot tell the RDF syntax of {path!r} from its extension")


@dataclass(frozen=True)
class _Range:
    media: str
    quality: float
    specificity: int


def _parse_accept(accept: str | None) -> list[_Range]:
    if not accept or not accept.strip():
        return [_Range("*/*", 1.0, 0)]
    ranges: list[_Range] = []
    for part in accept.split(","):
        fields = [field.strip() for field in part.split(";")]
        media = fields[0].lower()
        if not media:
            continue
        quality = 1.0
        for field in fields[1:]:
            name, _, value = field.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        specificity = 0 if media == "*/*" else 1 if media.endswith("/*") else 2
        ranges.append(_Range(media, quality, specificity))
    return ranges


def _quality(media: str, ranges: list[_Range]) -> float:
    best: _Range | None = None
    for candidate in ranges:
        matches = (
            candidate.media == media
            or candidate.media == "*/*"
            or (candidate.media.endswith("/*") and media.startswith(candidate.media[:-1]))
        )
        if matches and (best is None or candidate.specificity > best.specificity):
            best = candidate
    return best.quality if best else 0.0


def negotiate(
    accept: str | None, offered: list[str] | tuple[str, ...], *, aliases: dict[str, str] | None = None
) -> str:
    """The offered media type the client prefers most (ties go to the server's order), or 406."""
    ranges = _parse_accept(accept)
    aliases = aliases or {}
    for alias, target in aliases.items():
        alias_quality = _quality(alias, [r for r in ranges if r.specificity == 2])
        if alias_quality > 0 and target in offered:
            ranges.append(_Range(target, alias_quality, 2))
    best_media, best_quality = None, 0.0
    for media in offered:
        quality = _quality(media, ranges)
        if quality > best_quality:
            best_media, best_quality = media, quality
    if best_media is None:
        raise NotAcceptable(
            f"none of the accepted types ({accept}) can be produced here; available: {', '.join(offered)}",
        )
    return best_media


def written(document: bytes | None) -> bytes:
    """A document a pyoxigraph writer (``serialize``, ``dump``) returned: their stubs type the return as
    ``bytes | None``, ``None`` being what they return when given a file to write, which the service never gives."""
    if document is None:
        raise TypeError("the pyoxigraph writer was given a file: no document to return")
    return document
