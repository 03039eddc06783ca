"""Step 1 of the methodology as plain values: what is evaluated, for whom, where, against which DSO and KGs.

IRIs are absolute strings; local identifiers (evaluation, assumption, out-of-scope declaration) are
path segments the service mints IRIs from (:mod:`service.envelope.rdf`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ..scenarios.reference import Trigger


@dataclass(frozen=True)
class VersionBoundary:
    """The model release and material configuration the result represents."""

    model_release: str
    configuration: str


@dataclass(frozen=True)
class TestTarget:
    name: str
    kind: str
    version_boundary: VersionBoundary


@dataclass(frozen=True)
class UseBoundary:
    """Users (personas), tasks (information needs), languages and countries, as DSO or KG IRIs."""

    statement: str
    users: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()

    def values(self) -> list[tuple[str, str]]:
        """(field, IRI) for every value, to check each is declared."""
        return [(name, iri) for name in ("users", "tasks", "languages", "countries") for iri in getattr(self, name)]


@dataclass(frozen=True)
class Assumption:
    id: str
    statement: str


@dataclass(frozen=True)
class OperatingEnvironment:
    statement: str
    settings: tuple[str, ...] = ()
    assumptions: tuple[Assumption, ...] = ()


@dataclass(frozen=True)
class OutOfScope:
    """An area the evaluation claims nothing about, optionally named by DSO concepts."""

    id: str
    statement: str
    concepts: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvaluationMethod:
    """The named method the evaluation applies (judges, metrics, interpretation rules) and its version."""

    name: str
    version: str
    statement: str | None = None


@dataclass(frozen=True)
class Stratum:
    """One group of the system's users and its share of them (the scope's declared population): who asks, said as
    scenario facts every member's scenario meets (the persona, the age group of the person asked about, a
    pregnancy), so that a plan can follow the shares (docs/allocation.md)."""

    id: str
    label: str
    share: Decimal
    facts: tuple[Trigger, ...]


@dataclass(frozen=True)
class Scope:
    """Step 1: what is evaluated, for whom, where, with which DSO and knowledge graphs."""

    id: str
    title: str
    dso: str
    knowledge_graphs: tuple[str, ...]
    test_target: TestTarget
    use_boundary: UseBoundary
    operating_environment: OperatingEnvironment
    out_of_scope: tuple[OutOfScope, ...] = ()
    risk_question: str | None = None
    method: EvaluationMethod | None = None
    population: tuple[Stratum, ...] = ()
    """Who uses the system and in what shares (adding up to 1); empty when the scope does not say."""


@dataclass(frozen=True)
class EnvelopeSummary:
    """The envelope version an evaluation's record names as current, with the digest it records."""

    iri: str
    version: int
    digest: str


@dataclass(frozen=True)
class EvaluationSummary:
    """An evaluation as the listing shows it: its IRI, identifier, title and current envelope version."""

    iri: str
    id: str
    title: str
    envelope: EnvelopeSummary | None = None
