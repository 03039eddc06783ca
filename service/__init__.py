"""OB-CAIE: Ontology-Based Contextual AI Evaluations as a linked-data service."""

__version__ = "0.1.0"
