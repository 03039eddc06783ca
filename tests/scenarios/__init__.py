"""Scenario tests: the vocabulary and repository files both modules use."""

from pathlib import Path

from rdflib import Namespace

ROOT = Path(__file__).resolve().parents[2]
RDF = Namespace("http://www.w3.org/1999/02/22-rdf-syntax-ns#")
VE = Namespace("https://w3id.org/ob-caie/dso/vaccine-education/")
NG = Namespace("https://w3id.org/ob-caie/kg/nigeria/")
KE = Namespace("https://w3id.org/ob-caie/kg/kenya/")
LANG = Namespace("http://lexvo.org/id/iso639-3/")
"""Languages are the DSO's shared ISO 639-3 IRIs (docs/domain.md)."""
