"""The published SPARQL queries (``queries/*.rq``), loaded by name.

The queries are the specification: anyone can run them with any SPARQL 1.1 engine over an exported
record, binding the parameters their header names (our code binds them with a VALUES block).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

QUERIES = Path(__file__).resolve().parents[2] / "queries"


@cache
def load(name: str) -> str:
    """The text of ``queries/{name}.rq``."""
    path = QUERIES / f"{name}.rq"
    if not path.is_file():
        raise LookupError(f"no query named {name!r} in {QUERIES}")
    return path.read_text(encoding="utf-8")


def digest(name: str) -> str:
    """SHA-256 of a query file, recorded with every number computed from it."""
    return hashlib.sha256(load(name).encode("utf-8")).hexdigest()


def names() -> list[str]:
    return sorted(path.stem for path in QUERIES.glob("*.rq"))
