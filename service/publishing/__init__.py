"""Publishing: every IRI the service mints or owns dereferences to a description of the resource."""

from .dereference import Description, Publisher

__all__ = ["Description", "Publisher"]
