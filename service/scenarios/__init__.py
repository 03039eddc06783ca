"""Step 3 of the lifecycle: derive candidate scenarios from DSO + KGs + envelope, and block inconsistent ones.

Public API: :func:`derive` and :func:`scenario_triples` with :class:`DerivationInput`, :class:`CriterionScope`
(with its :class:`Trigger` values) and :class:`Derivation`; the two checking paths are :mod:`.reference` (the specification run as written) and
:mod:`.production` (table lookups, the one the service uses); exact counts are in :mod:`.frame`.
"""

from .derive import CriterionScope, Derivation, DerivationInput, ScenarioResult, derive, scenario_triples
from .engine import Block
from .reference import Trigger

__all__ = [
    "Block",
    "CriterionScope",
    "Derivation",
    "DerivationInput",
    "ScenarioResult",
    "Trigger",
    "derive",
    "scenario_triples",
]
