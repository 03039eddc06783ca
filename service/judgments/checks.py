"""What a grounded check is (``epo:groundedCheck``, docs/judgments.md "The grounded checks"), and what every check
reads a reply with: its clauses, its labels, the numbers it gives.

A check reads the reply's clauses its rule selected (``epo:appliesWhen``) and says passed, failed (with the
span of the wrong statement) or cantTell; it never guesses: alternatives or nothing stated say cantTell. The
words it reads (units, ordinals, connectors) are the DSO's labels in the reply's language (:mod:`.vocabulary`);
a reply in a language the DSO has no words for states nothing the check can read.

Checks are plugins: each is a :class:`GroundedCheck` registered under the entry-point group ``caie.checks``
(:mod:`.registry`), the engine's generic ones by its own ``pyproject.toml``, a domain's by its package.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from rdflib import Graph
from rdflib.namespace import RDFS
from rdflib.term import Node

from .model import JudgingRule, ProbeContext
from .vocabulary import Vocabulary


@dataclass(frozen=True)
class Clause:
    """A clause of a reply (``start``..``end`` in the reply) and the spans where its rule's cue matched."""

    start: int
    end: int
    text: str
    cues: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Verdict:
    """One part of a ruling: an EARL outcome, why, and the span of the reply it rests on (or ``None``)."""

    outcome: str
    rationale: str
    span: tuple[int, int] | None = None


class CheckFunction(Protocol):
    """A check's ruling on one reply: the reply's text, the clauses its rule selected, the rule, the probe's
    context and the reply's language tag."""

    def __call__(
        self, text: str, clauses: Sequence[Clause], rule: JudgingRule, context: ProbeContext, tag: str
    ) -> Verdict: ...


Need = Literal["groundedIn", "expectedFacts", "statedUnit", "affirmationCue", "negationCue"]
"""The ``epo:`` properties of a judging rule a check may require (the rule is refused without them)."""


@dataclass(frozen=True)
class GroundedCheck:
    """What a ``caie.checks`` entry point resolves to: one check kind, by the IRI rules name it with.

    ``needs`` names each ``epo:`` property a rule running this check must state, with what it is for (the 422
    refusing a rule without it says so): the engine checks them when it reads the rule, so the check itself may
    rely on them.
    """

    iri: str
    run: CheckFunction
    needs: Mapping[Need, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.iri.startswith(("http://", "https://", "urn:")):
            raise ValueError(f"a grounded check is named by an absolute IRI, not {self.iri!r}")


_CLAUSE_END = re.compile(r"[.;!?।](?=\s|$)|\n")


def split_clauses(text: str) -> list[Clause]:
    """The reply's clauses: split after a full stop, semicolon, question or exclamation mark (or a danda)
    followed by a space, and at line breaks; a decimal point or a colon does not split."""
    clauses, start = [], 0
    for end in [match.end() for match in _CLAUSE_END.finditer(text)] + [len(text)]:
        piece = text[start:end]
        stripped = piece.lstrip()
        if stripped.strip():
            offset = start + len(piece) - len(stripped)
            clauses.append(Clause(offset, end, text[offset:end]))
        start = end
    return clauses


def label(graph: Graph, node: Node) -> str | None:
    """``node``'s English ``rdfs:label``, else any of its labels, else ``None``."""
    labels = sorted(
        graph.objects(node, RDFS.label), key=lambda text: (getattr(text, "language", None) != "en", str(text))
    )
    return str(labels[0]) if labels else None


# ------------------------------------------------------------------------------------------ numbers

_PHONE = re.compile(r"(?<![\d,.])\+?\d[\d ]*\d(?![\d,.])(?!\s*%)")


def digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def phone_numbers(clauses: Sequence[Clause], words: Vocabulary) -> list[tuple[int, int, str]]:
    """The numbers of three digits or more the clauses give that are no quantity (no unit word next to them)."""
    found = []
    for clause in clauses:
        numbers = [m for m in _PHONE.finditer(clause.text) if len(digits(m[0])) >= 3]
        taken = [q.span for q in words.quantities(clause.text)] if numbers else []
        found += [
            (clause.start + m.start(), clause.start + m.end(), m[0])
            for m in numbers
            if not any(s < m.end() and m.start() < e for s, e in taken)
        ]
    return found
