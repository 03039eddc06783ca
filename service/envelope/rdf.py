"""The operational envelope as RDF in the evaluation's graph ``{base}evaluations/{id}``, and back (the scope
is :mod:`.scope_rdf`; an envelope version read back into :mod:`.model` values is :mod:`.rdf_read`).

Every IRI is minted under the evaluation's IRI (see :class:`Iris`). An envelope version owns every
triple whose subject is ``{evaluation}/envelope/v{n}`` or lies under it, so a version can be read,
replaced or copied by its IRI prefix. The envelope digest (:func:`envelope_digest`) is taken over the
envelope's content with its IRIs made relative, so equal content gives an equal digest across
versions and evaluations.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import TypeVar

from pyoxigraph import Literal, NamedNode, Triple

from ..core.digest import canonical_literals, graph_digest
from ..core.iris import graph_iri, minted_number
from ..core.namespaces import DCTERMS, EPO, PROV, RDF, SKOS, XSD
from ..core.store.base import Node, Term
from ..scenarios.reference import Trigger, trigger_iri
from .model import EnvelopeContent

TYPE = NamedNode(RDF + "type")
RELATIVE = "urn:x-caie:envelope"
"""What an envelope's own IRI becomes in its digest (its sub-IRIs keep their path after it)."""

_VERSION_PATH = re.compile(r"/envelope/v([1-9][0-9]*)$")

_Term = TypeVar("_Term", bound=Term)


def epo(name: str) -> NamedNode:
    return NamedNode(EPO + name)


def _text(value: str) -> Literal:
    return Literal(value)


def decimal_literal(value: Decimal) -> Literal:
    """The canonical xsd:decimal form (``5``, ``0.25``), so equal weights give equal digests."""
    text = format(value.normalize(), "f")
    return Literal(text, datatype=NamedNode(XSD + "decimal"))


@dataclass(frozen=True)
class Iris:
    """The IRIs of one evaluation's record under a deployment ``base``."""

    base: str
    evaluation_id: str

    @property
    def evaluation(self) -> str:
        return f"{self.base}evaluations/{self.evaluation_id}"

    def under(self, path: str) -> str:
        return f"{self.evaluation}/{path}"

    def envelope(self, version: int) -> str:
        return self.under(f"envelope/v{version}")

    def requirement(self, version: int, requirement_id: str) -> str:
        return f"{self.envelope(version)}/requirements/{requirement_id}"

    def criterion(self, version: int, criterion_id: str) -> str:
        return f"{self.envelope(version)}/criteria/{criterion_id}"

    def dimension(self, version: int, dimension: str) -> str:
        return f"{self.envelope(version)}/dimensions/{dimension}"

    def category(self, version: int, dimension: str, category: str) -> str:
        return f"{self.dimension(version, dimension)}/{category}"

    def dso(self, identifier: str) -> str:
        return graph_iri(self.base, "dso", identifier)

    def kg(self, identifier: str) -> str:
        return graph_iri(self.base, "kg", identifier)

    def agent(self, agent: str) -> str:
        return f"{self.base}agents/{agent}"


class Builder:
    def __init__(self) -> None:
        self.triples: list[Triple] = []

    def add(self, subject: str, predicate: NamedNode | str, value: NamedNode | Literal | str | None) -> None:
        if value is None:
            return
        obj = NamedNode(value) if isinstance(value, str) else value
        pred = NamedNode(predicate) if isinstance(predicate, str) else predicate
        self.triples.append(Triple(NamedNode(subject), pred, obj))

    def text(self, subject: str, predicate: NamedNode, value: str | None) -> None:
        if value is not None:
            self.add(subject, predicate, _text(value))


# ------------------------------------------------------------------------------------------- writing


def add_triggers(b: Builder, owner: str, link: str, triggers: Iterable[Trigger]) -> None:
    """Scenario facts (``epo:ScenarioTrigger``: a facet and its values) linked from ``owner`` by ``epo:{link}``, as
    ``{owner}/triggers/{n}`` in order; read back by :func:`read_triggers`."""
    for number, trigger in enumerate(triggers, 1):
        b.add(owner, epo(link), (at := trigger_iri(owner, number)))
        b.add(at, TYPE, epo("ScenarioTrigger"))
        b.add(at, epo("onFacet"), trigger.facet)
        for value in trigger.values:
            b.add(
                at,
                epo("triggerValue"),
                Literal(value, datatype=NamedNode(XSD + "boolean")) if value in ("true", "false") else value,
            )


def read_triggers(index: Index, owner: str, link: str) -> tuple[Trigger, ...]:
    """The scenario facts :func:`add_triggers` wrote, in order."""
    return tuple(
        Trigger(index.one(t, EPO + "onFacet") or "", tuple(index.all(t, EPO + "triggerValue")))
        for t in sorted(index.all(owner, EPO + link), key=lambda iri: minted_number(iri))
    )


def envelope_triples(
    iris: Iris, version: int, content: EnvelopeContent, revision_of: str | None = None
) -> list[Triple]:
    """The triples of envelope version ``version`` (without its digest, which :func:`digest_triple` adds)."""
    b, e, env = Builder(), iris.evaluation, iris.envelope(version)
    b.add(env, TYPE, epo("OperationalEnvelope"))
    b.add(env, epo("inEvaluation"), e)
    b.text(env, epo("version"), str(version))
    b.add(env, epo("envelopeTarget"), iris.under("target"))
    b.add(env, epo("inEnvironment"), iris.under("operating-environment"))
    b.add(env, NamedNode(PROV + "wasRevisionOf"), revision_of)
    b.text(env, epo("statement"), content.statement)
    if (agreement := content.judge_agreement) is not None:
        # under the envelope's IRI, so its digest covers the threshold like every other envelope field
        node = f"{env}/judge-agreement"
        b.add(env, epo("judgeAgreement"), node)
        b.add(node, TYPE, epo("JudgeAgreementThreshold"))
        b.add(node, epo("minimumAgreement"), decimal_literal(agreement.minimum))
        b.add(node, epo("agreementMeasure"), epo(agreement.measure.local_name))
        b.add(node, epo("minimumUnits"), Literal(str(agreement.minimum_units), datatype=NamedNode(XSD + "integer")))
    for r in content.requirements:
        node = iris.requirement(version, r.id)
        b.add(node, TYPE, epo("Requirement"))
        b.add(node, epo("inEvaluation"), e)
        b.add(node, epo("partOfEnvelope"), env)
        b.text(node, NamedNode(DCTERMS + "identifier"), r.id)
        b.text(node, epo("statement"), r.statement)
        if r.parent is not None:
            b.add(node, epo("refines"), iris.requirement(version, r.parent))
        for concept in r.concepts:
            b.add(node, epo("bearsOnConcept"), concept)
    dimensions: set[str] = set()
    for c in content.criteria:
        node, requirement = iris.criterion(version, c.id), iris.requirement(version, c.requirement)
        b.add(node, TYPE, epo("AcceptanceCriterion"))
        b.add(node, epo("inEvaluation"), e)
        b.text(node, NamedNode(DCTERMS + "identifier"), c.id)
        b.add(node, epo("criterionOf"), requirement)
        b.add(node, NamedNode(PROV + "wasDerivedFrom"), requirement)
        b.text(node, epo("statement"), c.statement)
        b.text(node, epo("expectedResult"), c.expected_result)
        if c.weight is not None:
            b.add(node, epo("weight"), decimal_literal(c.weight))
        b.text(node, epo("weightRationale"), c.weight_rationale)
        b.add(node, epo("inScope"), Literal(c.in_scope))
        if c.judged_by is not None:
            b.add(node, epo("judgedBy"), epo(c.judged_by.local_name))
        dimension, category = iris.dimension(version, c.dimension), iris.category(version, c.dimension, c.category)
        b.add(node, epo("dimension"), dimension)
        b.add(node, epo("category"), category)
        for concept in c.concepts:
            b.add(node, epo("bearsOnConcept"), concept)
        add_triggers(b, node, "bearsWhen", c.triggers)
        if c.dimension not in dimensions:
            dimensions.add(c.dimension)
            b.add(dimension, TYPE, NamedNode(SKOS + "Concept"))
            b.text(dimension, NamedNode(SKOS + "prefLabel"), c.dimension)
        b.add(category, TYPE, NamedNode(SKOS + "Concept"))
        b.text(category, NamedNode(SKOS + "prefLabel"), c.category)
        b.add(category, NamedNode(SKOS + "broader"), dimension)
    return list(dict.fromkeys(b.triples))


WRITTEN = PROV + "generatedAtTime"
"""When a criterion's present content was written: the date of a record, not content (not in the digest)."""


def undated(triples: Iterable[Triple]) -> list[Triple]:
    return [t for t in triples if t.predicate.value != WRITTEN]


def _criteria(
    envelope_iri: str, triples: list[Triple]
) -> tuple[dict[str, set[tuple[str, object]]], dict[str, Literal]]:
    """Each criterion's content (by id, IRIs relative to the envelope, literals canonical) and its date."""
    prefix = envelope_iri + "/criteria/"
    content: dict[str, set[tuple[str, object]]] = defaultdict(set)
    dates: dict[str, Literal] = {}
    for raw, t in zip(triples, canonical_literals(triples)):
        if not (isinstance(t.subject, NamedNode) and t.subject.value.startswith(prefix)):
            continue
        # a criterion's triggers ({criterion}/triggers/{n}) are part of its content, each statement by its node
        key, _, under = t.subject.value[len(prefix) :].partition("/")
        predicate = f"{under} {t.predicate.value}" if under else t.predicate.value
        if t.predicate.value == WRITTEN and isinstance(raw.object, Literal):
            dates[key] = raw.object
        elif isinstance(t.object, NamedNode) and t.object.value.startswith(envelope_iri + "/"):
            content[key].add((predicate, NamedNode(RELATIVE + t.object.value[len(envelope_iri) :])))
        else:
            content[key].add((predicate, t.object))
    return content, dates


def dated(
    envelope_iri: str, triples: list[Triple], earlier_iri: str | None, earlier: list[Triple], time: datetime
) -> list[Triple]:
    """``triples`` (envelope ``envelope_iri``) with each criterion's ``prov:generatedAtTime``: its date in the
    ``earlier`` version's triples when its content is the same there, else ``time``; so a criterion's date says
    when its present text, weight and concepts were written, across rewrites and versions."""
    content, _ = _criteria(envelope_iri, triples)
    before, dates = _criteria(earlier_iri, earlier) if earlier_iri else ({}, {})
    written = Literal(time.isoformat(), datatype=NamedNode(XSD + "dateTime"))
    return undated(triples) + [
        Triple(
            NamedNode(f"{envelope_iri}/criteria/{key}"),
            NamedNode(WRITTEN),
            dates[key] if key in dates and before.get(key) == facts else written,
        )
        for key, facts in sorted(content.items())
    ]


def digest_triple(envelope_iri: str, digest: str) -> Triple:
    return Triple(NamedNode(envelope_iri), epo("envelopeDigest"), _text(digest))


_NOT_CONTENT = {
    EPO + "version",
    PROV + "wasRevisionOf",
    EPO + "envelopeDigest",
    EPO + "inEvaluation",
    EPO + "envelopeTarget",
    EPO + "inEnvironment",
    WRITTEN,
}


def envelope_digest(envelope_iri: str, triples: Iterable[Triple]) -> str:
    """SHA-256 (service.digest) of the envelope's content: its IRIs made relative, bookkeeping left out."""

    def relative(term: _Term) -> _Term | NamedNode:
        if isinstance(term, NamedNode) and (term.value == envelope_iri or term.value.startswith(envelope_iri + "/")):
            return NamedNode(RELATIVE + term.value[len(envelope_iri) :])
        return term

    content = [
        Triple(relative(t.subject), t.predicate, relative(t.object))
        for t in triples
        if t.predicate.value not in _NOT_CONTENT and owned_by(envelope_iri, t)
    ]
    return graph_digest(content)


# ------------------------------------------------------------------------------------------- reading


def owned_by(prefix: str, triple: Triple) -> bool:
    """Whether ``triple``'s subject is ``prefix`` or an IRI under it."""
    subject = triple.subject
    return isinstance(subject, NamedNode) and (subject.value == prefix or subject.value.startswith(prefix + "/"))


class Index:
    """The graph's triples by subject and predicate; a statement about or of a quoted triple (RDF 1.2) is in
    :attr:`triples` but not indexed, as the service writes none."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        self.triples = list(triples)
        self._by: dict[str, dict[str, list[Node]]] = defaultdict(lambda: defaultdict(list))
        for t in self.triples:
            if not isinstance(t.subject, Triple) and not isinstance(t.object, Triple):
                self._by[t.subject.value][t.predicate.value].append(t.object)

    def all(self, subject: str, predicate: str) -> list[str]:
        return sorted(o.value for o in self._by.get(subject, {}).get(predicate, []))

    def one(self, subject: str, predicate: str) -> str | None:
        values = self.all(subject, predicate)
        return values[0] if values else None

    def term(self, subject: str, predicate: str) -> Node | None:
        values = self._by.get(subject, {}).get(predicate, [])
        return values[0] if values else None

    def has_type(self, subject: str, cls: str) -> bool:
        return any(o.value == cls for o in self._by.get(subject, {}).get(RDF + "type", []))

    def subjects(self, predicate: str, obj: str) -> list[str]:
        return sorted(
            subject
            for subject, by_predicate in self._by.items()
            for o in by_predicate.get(predicate, [])
            if o.value == obj
        )


def identifier_of(index: Index, node: str) -> str:
    """A requirement's or criterion's ``dcterms:identifier``, as :func:`envelope_triples` wrote it."""
    return index.one(node, DCTERMS + "identifier") or ""


def tail(iri: str, prefix: str) -> str:
    return iri[len(prefix) :] if iri.startswith(prefix) else iri.rsplit("/", 1)[-1]


def version_of(envelope_iri: str) -> int:
    match = _VERSION_PATH.search(envelope_iri)
    if match is None:
        raise ValueError(f"not an envelope version IRI: {envelope_iri}")
    return int(match.group(1))


def envelope_versions(iris: Iris, index: Index) -> list[str]:
    """Every envelope version IRI of the evaluation, oldest first."""
    found = [
        s for s in index.subjects(RDF + "type", EPO + "OperationalEnvelope") if s.startswith(iris.under("envelope/v"))
    ]
    return sorted(found, key=version_of)


def parse_decimal(value: str | None) -> Decimal | None:
    try:
        return Decimal(value) if value is not None else None
    except InvalidOperation:
        return None
