"""Every namespace the service reads or writes, in one place.

Our own vocabulary lives under the persistent base ``https://w3id.org/ob-caie/`` (slash terms, so
each term dereferences to a page of its own); data minted by a deployment lives under that
deployment's base URL (see :mod:`service.core.config`).
"""

from typing import Final

VOCAB_BASE: Final = "https://w3id.org/ob-caie/"

EPO: Final = VOCAB_BASE + "epo/"
EPO_ONTOLOGY: Final = VOCAB_BASE + "epo"
CATALOG: Final = VOCAB_BASE + "catalog/"
CATALOG_ONTOLOGY: Final = VOCAB_BASE + "catalog"
SHAPES: Final = VOCAB_BASE + "shapes/"

CAIE_EPO: Final = "https://w3id.org/og-caie/epo#"

RDF: Final = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS: Final = "http://www.w3.org/2000/01/rdf-schema#"
OWL: Final = "http://www.w3.org/2002/07/owl#"
XSD: Final = "http://www.w3.org/2001/XMLSchema#"
SH: Final = "http://www.w3.org/ns/shacl#"
SKOS: Final = "http://www.w3.org/2004/02/skos/core#"
PROV: Final = "http://www.w3.org/ns/prov#"
EARL: Final = "http://www.w3.org/ns/earl#"
DQV: Final = "http://www.w3.org/ns/dqv#"
DCAT: Final = "http://www.w3.org/ns/dcat#"
DCTERMS: Final = "http://purl.org/dc/terms/"
VOID: Final = "http://rdfs.org/ns/void#"
SD: Final = "http://www.w3.org/ns/sparql-service-description#"

PREFIXES: Final[dict[str, str]] = {  # the engine's; a domain's come from its package (plugins.prefixes)
    "epo": EPO,
    "caie": CAIE_EPO,
    "cat": CATALOG,
    "rdf": RDF,
    "rdfs": RDFS,
    "owl": OWL,
    "xsd": XSD,
    "sh": SH,
    "skos": SKOS,
    "prov": PROV,
    "earl": EARL,
    "dqv": DQV,
    "dcat": DCAT,
    "dcterms": DCTERMS,
    "void": VOID,
}
