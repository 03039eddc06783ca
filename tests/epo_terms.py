"""The published EPO and caie-spec's, for the EPO tests (tests/test_epo.py, tests/test_epo_alignment.py): their
files, their namespaces, and which terms are ours."""

from __future__ import annotations

from pathlib import Path

from rdflib import Namespace, URIRef

from service.core.namespaces import CAIE_EPO, EPO
from service.core.namespaces import XSD as XSD_NS

REPO = Path(__file__).resolve().parents[1]
EPO_FILE = REPO / "ontologies" / "epo.ttl"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CAIE_EPO_FILE = SHARED / "interop" / "caie-spec" / "explorer" / "data" / "epo.ttl"

E = Namespace(EPO)
C = Namespace(CAIE_EPO)
XSD = Namespace(XSD_NS)


def in_epo(term: object) -> bool:
    return isinstance(term, URIRef) and str(term).startswith(EPO) and str(term) != EPO
