"""What the tests of the vaccine-education DSO and the four country knowledge graphs share (test_dso_vocabulary.py,
test_dso_grading_reference.py, test_country_kgs.py, test_kg_breaks.py, test_shapes_files.py): the repository's root,
the countries, the namespaces, and a country's KG read from its file."""

from __future__ import annotations

from pathlib import Path

from caie_vaccine import VE as DSO_VACCINE
from rdflib import Graph, Namespace, URIRef

ROOT = Path(__file__).resolve().parents[1]
DSO_IRI = URIRef("https://w3id.org/ob-caie/dso/vaccine-education")
COUNTRIES = ("nigeria", "kenya", "india", "bangladesh")
VE = Namespace(DSO_VACCINE)
EPO = Namespace("https://w3id.org/ob-caie/epo/")
EARL = Namespace("http://www.w3.org/ns/earl#")
PROV = Namespace("http://www.w3.org/ns/prov#")
EX = Namespace("https://example.org/record/")
# plain Namespace objects: pytest's collector trips over rdflib's closed DefinedNamespace for these two
DCAT = Namespace("http://www.w3.org/ns/dcat#")
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")


def kg_path(country: str) -> Path:
    return ROOT / "ontologies" / "kg" / f"{country}.ttl"


def load_kg(country: str) -> Graph:
    return Graph().parse(kg_path(country))


def kg_ns(country: str) -> Namespace:
    return Namespace(f"https://w3id.org/ob-caie/kg/{country}/")
