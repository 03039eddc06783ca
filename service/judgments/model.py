"""Step 5's values: who judged, a determination on one reply against one criterion in EARL's terms, and what
a rule judge reads (its declaration, the probe's context).

A determination follows the caie-spec record's pattern (``earl:test`` the criterion, ``earl:subject`` the
probe's response, ``earl:mode``, ``earl:assertedBy`` the judge, ``earl:result`` with ``earl:outcome`` and
``earl:info``, ``prov:wasDerivedFrom`` the evidence); the outcome and mode are EARL IRIs
(https://www.w3.org/TR/EARL10-Schema/#outcome, #mode), checked when a value is made.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from rdflib import Graph
from rdflib.term import Node

from ..core.errors import Unprocessable
from ..core.namespaces import EARL

PASSED = EARL + "passed"
FAILED = EARL + "failed"
CANT_TELL = EARL + "cantTell"
INAPPLICABLE = EARL + "inapplicable"
OUTCOMES = frozenset({PASSED, FAILED, CANT_TELL, INAPPLICABLE})
"""EARL's outcome values that a determination may carry (earl:untested is never a determination)."""

AUTOMATIC = EARL + "automatic"
SEMI_AUTO = EARL + "semiAuto"
MANUAL = EARL + "manual"
MODES = frozenset({AUTOMATIC, SEMI_AUTO, MANUAL})

JudgeKind = Literal["rule", "model", "person"]


@dataclass(frozen=True)
class Judge:
    """Who or what asserted a determination: a rule or a model (software, with its version) or a person.

    ``version`` changes whenever the judge's behaviour may: for a rule judge, the package version and a
    digest of the rule's declaration; for a person, their role at the time.
    """

    iri: str
    kind: JudgeKind
    name: str
    version: str

    def __post_init__(self) -> None:
        if self.kind not in ("rule", "model", "person"):
            raise ValueError(f"judge {self.iri}: kind must be rule, model or person, not {self.kind!r}")
        if not self.iri or not self.name.strip() or not self.version.strip():
            raise ValueError(f"judge {self.iri!r} needs an IRI, a name and a version")


@dataclass(frozen=True)
class Pointer:
    """Where in the conversation a determination points: characters ``start`` to ``end`` (exclusive) of the
    reply to user turn ``turn`` (1-based)."""

    turn: int
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.turn < 1 or not 0 <= self.start <= self.end:
            raise ValueError(f"a pointer needs a turn from 1 and 0 <= start <= end, not {self}")


@dataclass(frozen=True)
class Determination:
    """One judge's ruling on the reply to user turn ``turn`` of probe ``probe`` against criterion ``criterion``.

    ``rationale`` says why in a sentence a reader can check against the reply; ``pointer`` marks the text it
    rests on, or is ``None`` when the ruling rests on something missing from the reply.
    """

    criterion: str
    probe: str
    turn: int
    outcome: str
    mode: str
    judge: Judge
    rationale: str
    pointer: Pointer | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome {self.outcome!r} is not one of EARL's: {', '.join(sorted(OUTCOMES))}")
        if self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r} is not one of EARL's: {', '.join(sorted(MODES))}")
        if self.turn < 1:
            raise ValueError(f"turn must be 1 or more, not {self.turn}")
        if self.pointer is not None and self.pointer.turn != self.turn:
            raise ValueError(f"the pointer is into turn {self.pointer.turn}, the determination on turn {self.turn}")
        if not self.rationale.strip():
            raise ValueError("a determination needs a rationale")


@dataclass(frozen=True)
class RecordedDetermination:
    """A determination as the record holds it (``queries/determinations.rq``): the run and turn its response
    belongs to, the judge's IRI and, for software, its version; ``pointer`` the characters it rests on."""

    determination: str
    criterion: str
    probe: str
    run: str
    turn: int
    outcome: str
    mode: str
    judge: str
    version: str | None
    method: str
    rationale: str
    pointer: tuple[int, int] | None
    at: str


@dataclass(frozen=True)
class PlanCriteria:
    """The criteria a plan tests (those it allocates probes to): each one's IRI to its ``dcterms:identifier``."""

    identifiers: Mapping[str, str]

    def __contains__(self, criterion: object) -> bool:
        return criterion in self.identifiers

    def by_identifier(self) -> dict[str, str]:
        """Each criterion's identifier to its IRI."""
        return {identifier: iri for iri, identifier in self.identifiers.items()}

    def named(self, given: str) -> str:
        """The criterion ``given`` names: an IRI as it is (checked where it is recorded), or an identifier among
        the plan's (422 naming the plan's identifiers)."""
        if given.startswith(("http://", "https://")):
            return given
        found = self.by_identifier().get(given)
        if found is None:
            known = ", ".join(sorted(self.identifiers.values()))
            raise Unprocessable(f"no criterion {given!r} in the run's plan: it tests {known}")
        return found


@dataclass(frozen=True)
class Pattern:
    """A regular expression of a judging rule, for the language it is written in (``None``: every language)."""

    language: str | None
    regex: re.Pattern[str]


@dataclass(frozen=True)
class JudgingRule:
    """A rule judge's declaration (``epo:JudgingRule``, docs/judgments.md), read from RDF.

    ``check`` is the IRI of its grounded check kind, ``grounded_in`` the grading fact that check compares
    with; every pattern tuple is empty when the rule declares none of that kind.
    """

    judge: Judge
    criterion_id: str
    applies_when_asked: tuple[Pattern, ...] = ()
    applies_when: tuple[Pattern, ...] = ()
    requires: tuple[Pattern, ...] = ()
    forbids: tuple[Pattern, ...] = ()
    check: str | None = None
    grounded_in: str | None = None
    expected_facts: tuple[str, ...] = ()
    """SPARQL SELECT queries (``epo:expectedFacts``) whose rows are the reference facts the check reads."""
    affirmation_cues: tuple[str, ...] = ()
    negation_cues: tuple[str, ...] = ()
    negation_reach: int | None = None
    """How many words may stand between a negation and what it negates (``epo:negationReach``); ``None``: anywhere
    in the clause."""
    stated_unit: str | None = None


@dataclass(frozen=True, eq=False)
class ProbeContext:
    """What a rule judge knows about a probe besides the conversation, supplied by the caller.

    ``language`` is the probe's BCP 47 tag (what the user wrote in); ``country`` the probe's country knowledge
    graph, ``dso`` the DSO it conforms to; ``criteria`` maps the identifier of each criterion to judge on this
    probe (those it exercises) to the criterion's IRI in the envelope version judged.

    ``facts`` are the probe's scenario facts: each facet's DSO property (``epo:facetProperty`` of the DSO's
    ``epo:ScenarioFacet`` declarations) to the values the scenario gives it on the facet's node (the asker, the
    person asked about, the scenario); ``others`` the evaluation's other knowledge graphs, so that a check can
    tell another country's service from an unknown one. Both feed the rules' ``epo:expectedFacts`` queries.
    """

    probe: str
    language: str
    country: Graph
    dso: Graph
    criteria: Mapping[str, str]
    facts: Mapping[str, frozenset[Node]] = field(default_factory=dict)
    others: tuple[Graph, ...] = ()
