"""Step 5, determinations: rule judges declared in RDF and the determinations they make on a conversation's
replies (issue 10 §4, docs/judgments.md). Recording them builds on this."""

from .checks import GroundedCheck
from .model import (
    AUTOMATIC,
    CANT_TELL,
    FAILED,
    INAPPLICABLE,
    MANUAL,
    OUTCOMES,
    PASSED,
    SEMI_AUTO,
    Determination,
    Judge,
    JudgingRule,
    Pattern,
    Pointer,
    ProbeContext,
)
from .rules import judge, parse_rules, read_rules

__all__ = [
    "AUTOMATIC",
    "CANT_TELL",
    "FAILED",
    "INAPPLICABLE",
    "MANUAL",
    "OUTCOMES",
    "PASSED",
    "SEMI_AUTO",
    "Determination",
    "GroundedCheck",
    "Judge",
    "JudgingRule",
    "Pattern",
    "Pointer",
    "ProbeContext",
    "judge",
    "parse_rules",
    "read_rules",
]
