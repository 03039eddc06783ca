"""HTML pages for people: resource descriptions, the catalog, the home page. Plain HTML, no scripts.

Only http(s) IRIs and paths on this site become links: the record holds IRIs anyone may have written
(``javascript:``, ``data:``), and those are shown as text.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from html import escape

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from ..core.catalog import CatalogEntry
from ..core.namespaces import PREFIXES, RDFS, SKOS

Linker = Callable[[str], str | None]

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;color:#1d2330;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}code,.iri{font-family:ui-monospace,Menlo,monospace;font-size:.88em;word-break:break-all}
.iri{color:#555}table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid #e3e6ec}
th{background:#f5f7fa;font-weight:600}a{color:#1a56b0;text-decoration:none}a:hover{text-decoration:underline}
.comment{font-size:1.05rem;background:#f5f7fa;border-left:4px solid #1a56b0;padding:.6rem .9rem}nav a{margin-right:1rem}
.formats a{margin-right:.6rem;font-size:.85em}.lang{color:#888;font-size:.8em}
"""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    f"style-src 'sha256-{base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()}'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""What the pages need (CSP Level 3): their one inline stylesheet, by hash; no scripts, frames or forms."""


def _page(title: str, body: str, alternates: str = "") -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<meta name=viewport content='width=device-width,initial-scale=1'><title>{escape(title)}</title>"
        f"{alternates}<style>{_STYLE}</style></head><body>"
        "<nav><a href='/'>OB-CAIE</a><a href='/graphs'>Graphs</a><a href='/epo'>EPO</a>"
        "<a href='/sparql'>SPARQL</a><a href='/docs'>API</a></nav>"
        f"{body}</body></html>"
    )


def compact(iri: str) -> str:
    """``prefix:local`` for known namespaces, else the IRI."""
    for prefix, namespace in sorted(PREFIXES.items(), key=lambda item: -len(item[1])):
        if iri.startswith(namespace) and "/" not in iri[len(namespace):]:
            return f"{prefix}:{iri[len(namespace):]}"
    return iri


def safe_href(href: str | None) -> str | None:
    """``href`` if following it can only load a page: an http(s) IRI, or a path on this site; else ``None``.

    ``javascript:``, ``data:`` and other schemes, and ``//host`` or ``/\\host`` (another site), are refused,
    as is anything with whitespace or control characters (browsers drop some of them before parsing).

    >>> safe_href("https://w3id.org/ob-caie/epo/Probe"), safe_href("/epo"), safe_href("javascript:alert(1)")
    ('https://w3id.org/ob-caie/epo/Probe', '/epo', None)
    """
    if not href or any(ord(char) <= 0x20 or ord(char) == 0x7F for char in href):
        return None
    if href.startswith("/"):
        return None if href.startswith(("//", "/\\")) else href
    scheme, colon, _ = href.partition(":")
    return href if colon and scheme.lower() in ("http", "https") else None


def _term(term: object, link: Linker) -> str:
    if isinstance(term, NamedNode):
        text, title = escape(compact(term.value)), escape(term.value)
        href = safe_href(link(term.value)) or safe_href(term.value)
        return f"<a href='{escape(href)}' title='{title}'>{text}</a>" if href else f"<span class=iri title='{title}'>{text}</span>"
    if isinstance(term, Literal):
        lang = f" <span class=lang>@{escape(term.language)}</span>" if term.language else ""
        return escape(term.value).replace("\n", "<br>") + lang
    if isinstance(term, BlankNode):
        return "<em>(anonymous)</em>"
    return escape(str(term))


def _rows(subject: str, triples: list[Triple], link: Linker) -> str:
    nested: dict[str, list[Triple]] = {}
    for triple in triples:
        if isinstance(triple.subject, BlankNode):
            nested.setdefault(triple.subject.value, []).append(triple)
    rows = []
    for triple in sorted(triples, key=lambda t: (t.predicate.value, str(t.object))):
        if triple.subject.value != subject or isinstance(triple.subject, BlankNode):
            continue
        value = _term(triple.object, link)
        if isinstance(triple.object, BlankNode) and triple.object.value in nested:
            inner = "".join(
                f"<div>{_term(t.predicate, link)}: {_term(t.object, link)}</div>" for t in nested[triple.object.value]
            )
            value = f"<div>{inner}</div>"
        rows.append(f"<tr><th>{_term(triple.predicate, link)}</th><td>{value}</td></tr>")
    return "<table>" + "".join(rows) + "</table>" if rows else ""


def _alternates(path: str) -> str:
    href = safe_href(path)
    if href is None:
        return ""
    formats = {"text/turtle": "Turtle", "application/ld+json": "JSON-LD", "application/n-triples": "N-Triples", "application/rdf+xml": "RDF/XML"}
    return "".join(f"<link rel=alternate type='{media}' href='{escape(href)}' title='{name}'>" for media, name in formats.items())


def resource_page(iri: str, label: str, triples: list[Triple], incoming: list[tuple[str, str]], link: Linker, path: str) -> str:
    """A resource's page: label, definition, every statement, and what links to it."""
    comment = next(
        (t.object.value for t in triples if t.subject.value == iri and t.predicate.value in (RDFS + "comment", SKOS + "definition")),
        None,
    )
    body = f"<h1>{escape(label)}</h1><div class=iri>{escape(iri)}</div>"
    if comment:
        body += f"<p class=comment>{escape(comment)}</p>"
    body += _rows(iri, triples, link)
    subjects = sorted({t.subject.value for t in triples if isinstance(t.subject, NamedNode) and t.subject.value != iri})
    if subjects:
        items = "".join(f"<li>{_term(NamedNode(s), link)} — {escape(_label_of(s, triples))}</li>" for s in subjects)
        body += f"<h2>Terms ({len(subjects)})</h2><ul>{items}</ul>"
    if incoming:
        items = "".join(f"<li>{_term(NamedNode(s), link)} <em>{escape(compact(p))}</em></li>" for s, p in incoming)
        body += f"<h2>Referenced by</h2><ul>{items}</ul>"
    body += "<p class=formats>Also as: " + " ".join(
        f"<code>curl -H 'Accept: {m}' …</code>" for m in ("text/turtle", "application/ld+json")
    ) + "</p>"
    return _page(label, body, _alternates(path))


def _label_of(subject: str, triples: list[Triple]) -> str:
    return next(
        (t.object.value for t in triples if t.subject.value == subject and t.predicate.value == RDFS + "label"),
        "",
    )


def catalog_page(entries: list[CatalogEntry], base_url: str) -> str:
    """The catalog as a table: every graph, its kind, size, digest, who loaded it and when."""
    rows = "".join(
        "<tr>"
        f"<td><a href='/graphs/{e.kind.value}/{escape(e.identifier)}'>{escape(e.kind.value)}/{escape(e.identifier)}</a></td>"
        f"<td>{escape(e.title)}</td><td>{e.triples:,}</td><td><code>{e.digest[:16]}…</code></td>"
        f"<td>{escape(e.agent)}</td><td>{escape(e.modified.strftime('%Y-%m-%d %H:%M:%S UTC'))}</td>"
        "</tr>"
        for e in entries
    )
    body = (
        f"<h1>Graphs</h1><p>Named graphs of this deployment (<span class=iri>{escape(base_url)}</span>). "
        "Digests are SHA-256 over RDFC-1.0 canonical N-Quads.</p>"
        "<table><tr><th>graph</th><th>title</th><th>triples</th><th>digest</th><th>loaded by</th><th>modified</th></tr>"
        f"{rows}</table>"
    )
    return _page("Graphs", body, _alternates("/graphs"))


def home_page(base_url: str, entries: list[CatalogEntry]) -> str:
    """Where to start: what the service holds and where to look."""
    body = (
        "<h1>OB-CAIE</h1><p>Ontology-Based Contextual AI Evaluations: the problem space and record of "
        "AI evaluations as linked data.</p><ul>"
        "<li><a href='/graphs'>Graphs</a>: the catalog of ontologies, DSOs, knowledge graphs and records "
        f"({len(entries)} graphs)</li>"
        "<li><a href='/epo'>Evaluation Process Ontology</a>: every term has its own page</li>"
        "<li><a href='/sparql'>SPARQL endpoint</a>: read-only, SPARQL 1.1 Protocol</li>"
        "<li><a href='/docs'>REST API</a> (OpenAPI)</li></ul>"
    )
    return _page("OB-CAIE", body)
