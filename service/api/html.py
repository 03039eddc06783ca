"""HTML pages for people, from Jinja2 templates (``templates/``, autoescaped) and packaged assets (``static/``).

Only http(s) IRIs and paths on this site become links: the record holds IRIs anyone may have written
(``javascript:``, ``data:``), and those are shown as text. Pages load their stylesheet and scripts from
``/static`` only, so the Content-Security-Policy allows no inline script or style at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from os.path import commonprefix
from pathlib import Path
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from ..core.catalog import CatalogEntry
from ..core.iris import agent_name, minted_number
from ..core.namespaces import RDF, RDFS, SKOS
from ..core.plugins import prefixes
from ..core.rdf import local_name
from ..publishing.ontology_docs import DOCUMENTED, Link, OntologyIndex, TermDoc
from ..publishing.query_examples import examples
from ..scenarios.model import Page
from .diagram import layout
from .sessions import csrf_field, csrf_token, visit

Linker = Callable[[str], str | None]

STATIC = Path(__file__).resolve().parent / "static"
"""The pages' stylesheet, scripts and icon, served at ``/static``."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""What the pages need (CSP Level 3): their stylesheet and scripts from this site, fetch to this site (the query
page runs queries on /sparql), and the query form's fallback post; no inline script or style, no frames."""

FORMATS = (
    ("text/turtle", "Turtle"),
    ("application/ld+json", "JSON-LD"),
    ("application/n-triples", "N-Triples"),
    ("application/rdf+xml", "RDF/XML"),
)

_ENV = Environment(
    loader=PackageLoader("service.api", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.globals.update(csrf_field=csrf_field, csrf_token=csrf_token, visit=visit)  # who is signed in: base.html, forms


def thousands(count: int) -> str:
    """A count as the pages print it, its thousands separated: ``{{ n|thousands }}``.

    >>> thousands(130636800), thousands(300)
    ('130,636,800', '300')
    """
    return f"{count:,}"


_ENV.filters["thousands"] = thousands
# what a page shows of an IRI: a minted record's number, an agent's name, a vocabulary term's local name
_ENV.filters.update(number=minted_number, agent=agent_name, local_name=local_name)

_INCOMING_TITLES = {
    RDFS + "subClassOf": "Subclasses",
    RDF + "type": "Instances",
    RDFS + "range": "Properties with this range",
    RDFS + "subPropertyOf": "Subproperties",
    RDFS + "isDefinedBy": "Terms it defines",
}


_LONGEST_FIRST = sorted(prefixes().items(), key=lambda item: -len(item[1]))


def compact(iri: str) -> str:
    """``prefix:local`` for known namespaces, else the IRI."""
    for prefix, namespace in _LONGEST_FIRST:
        if iri.startswith(namespace) and "/" not in iri[len(namespace) :]:
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def _segments(iri: str) -> list[str]:
    return [part for part in re.split(r"[/#]", iri) if part]


def distinct_names(labels: Mapping[str, str | None]) -> dict[str, str]:
    """What a page calls each IRI of a list (its label, given as ``None`` when it has none): the label, else
    ``prefix:local``, else its last segment; where two would read the same, each followed by the segments of its IRI
    that tell it apart from the others of that name, its namespace's own ones.

    >>> names = distinct_names({"https://w3id.org/x/dso/ve/InfantAsker": "infant asker",
    ...                         "https://w3id.org/x/shapes/sc/InfantAsker": "infant asker",
    ...                         "http://www.w3.org/2000/01/rdf-schema#label": None})
    >>> sorted(names.values())
    ['infant asker (dso/ve)', 'infant asker (shapes/sc)', 'rdfs:label']
    """

    def plain(iri: str) -> str:
        short = compact(iri)
        return short if short != iri else (_segments(iri) or [iri])[-1]

    named = {iri: label or plain(iri) for iri, label in labels.items()}
    sharing: dict[str, list[str]] = {}
    for iri, name in named.items():
        sharing.setdefault(name, []).append(iri)
    for name, iris in sharing.items():
        if len(iris) < 2:
            continue
        parts = [_segments(iri) for iri in iris]
        common = len(commonprefix(parts))
        rests = [segments[common:] for segments in parts]
        # the segments all end with go too, but each keeps one
        same_end = min(len(commonprefix([rest[::-1] for rest in rests])), min(map(len, rests)) - 1)
        told = ["/".join(rest[: len(rest) - same_end]) for rest in rests]
        unique = len(set(told)) == len(told) and all(told)
        for iri, apart in zip(iris, told):
            named[iri] = f"{name} ({apart if unique else iri})"
    return named


_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
"""Whitespace and control characters: a regular expression, not a loop over characters (a report page checks 7,000
links, 90 ms of its rendering as a loop)."""


def safe_href(href: str | None) -> str | None:
    """``href`` if following it can only load a page: an http(s) IRI, or a path on this site; else ``None``.

    ``javascript:``, ``data:`` and other schemes, and ``//host`` or ``/\\host`` (another site), are refused,
    as is anything with whitespace or control characters (browsers drop some of them before parsing).

    >>> safe_href("https://w3id.org/ob-caie/epo/Probe"), safe_href("/epo"), safe_href("javascript:alert(1)")
    ('https://w3id.org/ob-caie/epo/Probe', '/epo', None)
    """
    if not href or _UNSAFE.search(href):
        return None
    if href.startswith("/"):
        return None if href.startswith(("//", "/\\")) else href
    scheme, colon, _ = href.partition(":")
    return href if colon and scheme.lower() in ("http", "https") else None


def local_href(target: str | None) -> str | None:
    """``target`` if it is a path on this site (a ``next`` to go back to after sign-in), else ``None``.

    >>> local_href("/evaluations/x?tab=1"), local_href("https://evil.example/"), local_href("//evil.example/")
    ('/evaluations/x?tab=1', None, None)
    """
    if not target or not target.startswith("/") or "\\" in target:
        return None
    return safe_href(target)


def render(
    template: str,
    *,
    title: str,
    link: Linker = lambda _: None,
    path: str | None = None,
    scripts: Sequence[str] = (),
    **context: object,
) -> str:
    """A page: ``link`` maps an IRI to its path here; ``path`` (this page's) gets RDF alternates."""
    alternate = safe_href(path)

    def shown(iri: str) -> str:
        """A link's text when no label is known: ``prefix:local``, else the path here (an IRI this service
        mints is long, and the same on every row but its tail), else the IRI."""
        short = compact(iri)
        local = link(iri) if short == iri else None
        return local.lstrip("/") if local and safe_href(local) else short

    return _ENV.get_template(template).render(
        title=title,
        scripts=scripts,
        compact=shown,
        formats=FORMATS,
        href=lambda iri: safe_href(link(iri)) or safe_href(iri),
        alternates=FORMATS if alternate else (),
        alternate_href=alternate or "",
        **context,
    )


def _page_href(parameter: str) -> Callable[[str, int], str]:
    """Links to another page of a listing: ``?{parameter}={listing}&page={n}``."""
    return lambda listing, number: "?" + urlencode({parameter: listing, "page": number})


def _value(term: object, labels: dict[str, str], nested: dict[str, list[Triple]] | None = None) -> dict[str, object]:
    """How the statements table shows an object: a labelled link, a literal, or a blank node's own statements."""
    if isinstance(term, NamedNode):
        return {"kind": "iri", "iri": term.value, "label": labels.get(term.value)}
    if isinstance(term, Literal):
        return {"kind": "literal", "text": term.value, "lang": term.language}
    if isinstance(term, BlankNode) and nested and term.value in nested:
        pairs = [
            (Link(t.predicate.value, labels.get(t.predicate.value)), _value(t.object, labels))
            for t in nested[term.value]
        ]
        return {"kind": "nested", "pairs": pairs}
    return {"kind": "blank"}


def _statements(iri: str, triples: list[Triple], labels: dict[str, str]) -> list[tuple[Link, dict[str, object]]]:
    nested: dict[str, list[Triple]] = {}
    for triple in triples:
        if isinstance(triple.subject, BlankNode):
            nested.setdefault(triple.subject.value, []).append(triple)
    own = [t for t in triples if isinstance(t.subject, NamedNode) and t.subject.value == iri]
    return [
        (Link(t.predicate.value, labels.get(t.predicate.value)), _value(t.object, labels, nested))
        for t in sorted(own, key=lambda t: (t.predicate.value, str(t.object)))
    ]


def _objects(iri: str, triples: list[Triple], predicate: str, labels: dict[str, str]) -> list[Link]:
    """The IRIs ``iri`` has as ``predicate`` in its statements, labelled."""
    return [
        Link(t.object.value, labels.get(t.object.value))
        for t in triples
        if _text(t.subject) == iri and t.predicate.value == predicate and isinstance(t.object, NamedNode)
    ]


def _text(term: NamedNode | BlankNode | Literal | Triple) -> str | None:
    """A term's value; ``None`` for a quoted triple (RDF 1.2, which a stored graph may hold), which has none."""
    return None if isinstance(term, Triple) else term.value


def _label_of(subject: str, triples: list[Triple]) -> str | None:
    return next(
        (
            t.object.value
            for t in triples
            if _text(t.subject) == subject and t.predicate.value == RDFS + "label" and not isinstance(t.object, Triple)
        ),
        None,
    )


def resource_page(
    iri: str,
    label: str,
    triples: list[Triple],
    incoming: list[tuple[str, str]],
    link: Linker,
    path: str,
    term: TermDoc | None = None,
) -> str:
    """A resource's page: label, definition, what it is, its place in the hierarchy, its properties, what links
    to it, where it is used, every statement, and its RDF alternates. Without ``term`` (the documentation reads,
    :meth:`OntologyDocs.term`), its statements and the ``incoming`` links alone."""
    labels = dict(term.labels) if term else {}
    labels.update({s: lab for s in {_text(t.subject) for t in triples} if s and (lab := _label_of(s, triples))})
    definition = next(
        (
            t.object.value
            for t in triples
            if _text(t.subject) == iri
            and t.predicate.value in (SKOS + "definition", RDFS + "comment")
            and not isinstance(t.object, Triple)
        ),
        None,
    )
    outline = [
        {"title": title, "links": _objects(iri, triples, predicate, labels)}
        for title, predicate in (
            ("Types", RDF + "type"),
            ("Superclasses", RDFS + "subClassOf"),
            ("Superproperties", RDFS + "subPropertyOf"),
            ("Domain", RDFS + "domain"),
            ("Range", RDFS + "range"),
        )
    ]
    # A document (an ontology's whole graph) lists the terms it describes.
    terms = sorted(
        (
            Link(s, labels.get(s))
            for s in {t.subject.value for t in triples if isinstance(t.subject, NamedNode) and t.subject.value != iri}
        ),
        key=lambda item: (item.label or item.iri).lower(),
    )
    return render(
        "resource.html",
        title=label,
        link=link,
        path=path,
        scripts=["alternates.js"],
        iri=iri,
        label=label,
        definition=definition,
        doc=term,
        outline=outline,
        incoming=incoming,
        statements=_statements(iri, triples, labels),
        terms=terms,
        page_href=_page_href("via"),
        incoming_title=lambda predicate: _INCOMING_TITLES.get(
            predicate.iri, f"Linked to by {predicate.label or compact(predicate.iri)}"
        ),
        graph_name=lambda graph: (link(graph) or graph).lstrip("/"),
    )


def index_page(index: OntologyIndex, link: Linker, path: str) -> str:
    """The index of an ontology, DSO or knowledge graph: metadata, class hierarchy diagram, paged term lists."""
    return render(
        "index.html",
        title=index.metadata.title,
        link=link,
        path=path,
        scripts=["alternates.js"],
        index=index,
        diagram=layout(index.hierarchy),
        page_href=_page_href("list"),
        kinds={"ontologies": "ontology", "dso": "domain-specific ontology (DSO)", "kg": "knowledge graph"},
        singular={"classes": "class", "properties": "property", "individuals": "individual"},
    )


def catalog_page(
    entries: list[CatalogEntry],
    base_url: str,
    *,
    page: int = 1,
    path: str = "/graphs",
    heading: str = "Graphs",
    intro: str = "",
    void: dict[str, object] | None = None,
) -> str:
    """The catalog as a table, 100 graphs a page: each graph's kind, size, digest, who loaded it and when."""
    size = 100
    listing = Page(tuple(entries[(page - 1) * size : page * size]), len(entries), size, (page - 1) * size)
    return render(
        "catalog.html",
        title=heading,
        path=path,
        scripts=["alternates.js"],
        heading=heading,
        intro=intro,
        base_url=base_url,
        page=listing,
        void=void,
        page_href=_page_href("list"),
        documented={kind.value for kind in DOCUMENTED},
    )


def query_page(initial: str = "") -> str:
    """The query page: an editor, the examples (every published query among them) and a results area."""
    chosen = initial or examples()[0].text
    return render("query.html", title="Query", scripts=["query.js"], initial=chosen, examples=examples())


def error_page(status: int, title: str, message: str) -> str:
    """An error for a browser: the same status, title and message as the problem details."""
    return render("error.html", title=f"{status} {title}", message=message)
