"""KG validations kept on disk by the digest of their inputs (service.core.memo): another process's outcome is
read, never one of other inputs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF

from service.core.kg_shapes import kg_shapes, repository_shapes
from service.core.memo import CACHE_DIR_ENV
from service.core.validation import validate_kg

ROOT = Path(__file__).resolve().parents[1]
DSO_PATH = ROOT / "ontologies" / "dso" / "vaccine-education.ttl"
KG_PATH = ROOT / "ontologies" / "kg" / "kenya.ttl"
VE = "https://w3id.org/ob-caie/dso/vaccine-education/"


def test_a_kept_validation_serves_the_same_inputs_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    other = (
        "from pathlib import Path; from rdflib import Graph; "
        "from service.core.kg_shapes import kg_shapes, repository_shapes; "
        "from service.core.validation import validate_kg; "
        f"dso = Graph().parse({str(DSO_PATH)!r}); "
        f"print(validate_kg(Graph().parse({str(KG_PATH)!r}), dso, kg_shapes(dso, repository_shapes)).conforms)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", other],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, CACHE_DIR_ENV: str(tmp_path)},
        check=False,
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "True", ran.stderr
    [kept] = tmp_path.glob("kg-validation/*.pickle")
    written = kept.stat().st_mtime_ns

    dso, kg = Graph().parse(DSO_PATH), Graph().parse(KG_PATH)
    shapes = kg_shapes(dso, repository_shapes)
    assert validate_kg(kg, dso, shapes).conforms
    assert kept.stat().st_mtime_ns == written  # read, not validated and written again

    # Another KG content is validated afresh: a stored "conforms" never answers for a broken graph.
    kg.add((URIRef("https://w3id.org/ob-caie/kg/kenya/persona-x"), RDF.type, URIRef(VE + "NoSuchClass")))
    broken = validate_kg(kg, dso, shapes)
    assert not broken.conforms and any("NoSuchClass" in v.message for v in broken.violations)
    assert len(list(tmp_path.glob("kg-validation/*.pickle"))) == 2

    # So is the same KG against another DSO content: here one whose functional age group clashes.
    kg.remove((None, None, URIRef(VE + "NoSuchClass")))
    changed = Graph().parse(DSO_PATH)
    changed.add((URIRef(VE + "unrelated"), URIRef("http://www.w3.org/2000/01/rdf-schema#label"), Literal("x")))
    assert validate_kg(kg, changed, shapes).conforms
    assert len(list(tmp_path.glob("kg-validation/*.pickle"))) == 3

    kept.write_bytes(b"not a pickle")  # unreadable: validated again and rewritten
    assert validate_kg(Graph().parse(KG_PATH), dso, shapes).conforms and kept.read_bytes() != b"not a pickle"
