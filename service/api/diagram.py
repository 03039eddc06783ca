"""The class hierarchy of an index page as an indented tree, laid out here and drawn as SVG by the template.

Each class is a row, indented under its superclass; a class with several superclasses appears under each,
expanded once and marked as a repeat elsewhere (so a lattice cannot blow up the drawing, nor a cycle loop).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.rdf import local_name
from ..publishing.ontology_docs import ClassNode, Link

ROW = 22
INDENT = 18
CHAR = 7.2
"""Approximate width of a character of the diagram's 13 px font, to size the drawing."""
MAX_ROWS = 600
"""Rows drawn at most; the page says when the diagram stops there (the class lists are complete)."""


@dataclass(frozen=True)
class DiagramRow:
    term: Link
    depth: int
    y: int
    repeat: bool
    """Already drawn (with its subclasses) under another superclass."""


@dataclass(frozen=True)
class Diagram:
    rows: tuple[DiagramRow, ...]
    edges: tuple[str, ...]
    """SVG path data, one elbow from a superclass down and across to each subclass."""
    width: int
    height: int
    classes: int
    truncated: bool


def _name(term: Link) -> str:
    return (term.label or local_name(term.iri.rstrip("/#"))).lower()


def layout(nodes: tuple[ClassNode, ...]) -> Diagram:
    """The rows and edges of the tree: roots (no superclass among the graph's classes) first, by label."""
    by_iri = {node.term.iri: node for node in nodes}
    children: dict[str, list[ClassNode]] = {}
    for node in nodes:
        for parent in node.supers:
            children.setdefault(parent, []).append(node)
    roots = sorted((n for n in nodes if not any(p in by_iri for p in n.supers)), key=lambda n: _name(n.term))
    # Classes only reachable through a cycle have no root: they start trees of their own.
    rows: list[DiagramRow] = []
    edges: list[str] = []
    expanded: set[str] = set()

    def visit(node: ClassNode, depth: int, parent_y: int | None) -> None:
        if len(rows) >= MAX_ROWS:
            return
        y = ROW * len(rows) + ROW // 2 + 4
        repeat = node.term.iri in expanded
        rows.append(DiagramRow(node.term, depth, y, repeat))
        if parent_y is not None:
            x = INDENT * (depth - 1) + 6
            edges.append(f"M{x},{parent_y + 4} V{y - 4} H{INDENT * depth + 2}")
        if repeat:
            return
        expanded.add(node.term.iri)
        for child in sorted(children.get(node.term.iri, []), key=lambda n: _name(n.term)):
            visit(child, depth + 1, y)

    for root in roots:
        visit(root, 0, None)
    for node in sorted(nodes, key=lambda n: _name(n.term)):
        if node.term.iri not in expanded:
            visit(node, 0, None)
    width = max((INDENT * r.depth + 14 + int(CHAR * len(r.term.label or r.term.iri)) for r in rows), default=100)
    return Diagram(tuple(rows), tuple(edges), width + 80, ROW * len(rows) + 8, len(nodes), len(rows) >= MAX_ROWS)
