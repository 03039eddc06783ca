"""``caie init DOMAIN [DIR]``: a new domain's files, scaffolded from the templates shipped in this package.

A domain is data (docs/new-domain.md): a DSO, a knowledge graph, scenario rules, opening-turn templates and rule
judges, each loaded into a graph of its kind, and the REST bodies that take one evaluation of it from scope to a
signed report. The files are ``templates/*.j2`` rendered with the domain's name; nothing existing is overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined

DOMAIN = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
"""A domain's name: it becomes graph identifiers (``dso/{domain}``) and IRI path segments, so lower-case and dashes."""
FILES = (
    "dso.ttl",
    "kg-example.ttl",
    "scenario-rules.ttl",
    "templates-en.ttl",
    "judges.ttl",
    "evaluation.json",
    "envelope.json",
    "run.json",
    "README.md",
)
"""What ``caie init`` writes, each from ``templates/{name}.j2``."""


class ScaffoldError(Exception):
    """Why nothing was scaffolded: a bad domain name, or files already there (named)."""


def scaffold(domain: str, directory: Path) -> list[Path]:
    """Write :data:`FILES` for ``domain`` into ``directory`` (made if absent); the paths written. Refuses, writing
    nothing, when the name is not a domain name or when any of the files exists: a user's edits are never lost."""
    if not DOMAIN.match(domain):
        raise ScaffoldError(
            f"{domain!r} is not a domain name: use 1-63 lower-case letters, digits and '-', "
            "starting with a letter or digit"
        )
    targets = [directory / name for name in FILES]
    existing = [str(path) for path in targets if path.exists()]
    if existing:
        raise ScaffoldError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}: "
            "nothing was written (move them, or choose another folder)"
        )
    templates = Environment(
        loader=PackageLoader(__name__, "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )  # Turtle and JSON, from a checked name
    directory.mkdir(parents=True, exist_ok=True)
    values = {"domain": domain, "title": domain.replace("-", " ").capitalize()}
    for path in targets:
        with path.open("x", encoding="utf-8") as out:  # "x": a file that appeared meanwhile is not overwritten
            out.write(templates.get_template(f"{path.name}.j2").render(values))
    return targets
