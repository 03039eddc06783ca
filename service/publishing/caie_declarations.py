"""What caie-spec's shapes require of a record in its layout and our record does not hold, added by the export
(:mod:`.caie_export`; docs/interop.md): the parties and their roles, the contracting items (need, proposal, service
agreement, declarations, statement of work, access to the test item), the population the domain expert speaks for,
the DSO release's approval, plan deviations, the draft report and its computation.

These are DECLARATIONS THE EXPORT ADDS: each is minted under the export's URL (hash IRIs, so they dereference to
it), carries ``skos:editorialNote`` saying so, and is dated around the chain's own dates, just before the step that
needs it. They describe no agreement or party that the service recorded; a reader must not take them for facts.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from ..core.namespaces import EARL, PROV, RDF, RDFS, SKOS, XSD
from ..core.rdf import date_time
from ..core.store.base import Node

CAIE = "https://w3id.org/og-caie/epo#"
NOTE = NamedNode(SKOS + "editorialNote")
DECLARED = "declared by the OB-CAIE export to meet caie-spec's shapes: not part of the OB-CAIE record"
RDF_TYPE = NamedNode(RDF + "type")
_AT = NamedNode(PROV + "generatedAtTime")
_BY = NamedNode(PROV + "wasAttributedTo")
_STEP = timedelta(minutes=1)
_REPO = Path(__file__).resolve().parents[2]
DIGESTED = {
    "shapesDigest": _REPO / "shapes" / "record.ttl",
    "ontologyDigest": _REPO / "ontologies" / "epo.ttl",
    "queryDigest": _REPO / "queries" / "transforms" / "caie-export.rq",
}
"""What the declared coverage computation names by digest: our record shapes, our EPO, this export's query."""


def caie(name: str) -> NamedNode:
    return NamedNode(CAIE + name)


def prov(name: str) -> NamedNode:
    return NamedNode(PROV + name)


def text(value: str) -> Literal:
    return Literal(value)


def _times(triples: list[Triple], predicate: str, kind: str | None = None) -> list[datetime]:
    typed = {t.subject for t in triples if kind is not None and t.predicate == RDF_TYPE and t.object == caie(kind)}
    return sorted(
        datetime.fromisoformat(t.object.value)
        for t in triples
        if t.predicate.value == predicate and isinstance(t.object, Literal) and (kind is None or t.subject in typed)
    )


def _of(triples: list[Triple], kind: str) -> list[NamedNode]:
    # the mapped record's nodes are IRIs: the service skolemizes blank nodes when it writes
    return sorted(
        {
            t.subject
            for t in triples
            if t.predicate == RDF_TYPE and t.object == caie(kind) and isinstance(t.subject, NamedNode)
        },
        key=lambda n: n.value,
    )


def _value(triples: list[Triple], subject: NamedNode, predicate: NamedNode) -> Node | None:
    return next(
        (
            t.object
            for t in triples
            if t.subject == subject and t.predicate == predicate and not isinstance(t.object, Triple)
        ),
        None,
    )


class Declarations:
    """What caie-spec's shapes require beside the chain (module docstring), dated around the chain's own dates."""

    def __init__(self, base: str, mapped: list[Triple], figures: tuple[Fraction, dict[str, Fraction]]) -> None:
        self.base = base
        self.mapped = mapped
        self.figures = figures
        self.out: list[Triple] = []
        self.start = _times(mapped, PROV + "generatedAtTime", "AcceptanceCriterion")[0]
        self.sessions = _times(mapped, PROV + "startedAtTime", "Session")
        self.last = max(_times(mapped, PROV + "generatedAtTime"))
        [self.set] = _of(mapped, "RequirementSet")
        target = _value(mapped, self.set, caie("systemUnderTest"))
        assert isinstance(target, NamedNode)
        self.target = target
        self.plan = _of(mapped, "TestPlan")[0]

    def iri(self, name: str) -> NamedNode:
        return NamedNode(f"{self.base}#{name}")

    def add(self, subject: NamedNode | BlankNode, predicate: NamedNode, obj: NamedNode | Literal | BlankNode) -> None:
        self.out.append(Triple(subject, predicate, obj))

    def item(
        self, name: str, kind: str, label: str, at: datetime | None = None, by: NamedNode | None = None, **links: Node
    ) -> NamedNode:
        node = self.iri(name)
        self.add(node, RDF_TYPE, caie(kind))
        self.add(node, NamedNode(RDFS + "label"), text(label))
        self.add(node, NOTE, text(DECLARED))
        if at is not None:
            self.add(node, _AT, date_time(at))
        if by is not None:
            self.add(node, _BY, by)
        for name_, value in links.items():
            self.add(node, caie(name_), value)
        return node

    def triples(self) -> list[Triple]:
        self._parties()
        self._contract()
        self._scope()
        self._deviations()
        self._report()
        return self.out

    def _deviations(self) -> None:
        """caie-spec wants a plan deviation for every plan objective left without an attestation (S3)."""
        attested = {_value(self.mapped, a, NamedNode(EARL + "test")) for a in _of(self.mapped, "Attestation")}
        objectives = sorted(
            {
                t.object
                for t in self.mapped
                if t.subject == self.plan and t.predicate == caie("objective") and not isinstance(t.object, Triple)
            }
            - attested,
            key=lambda n: n.value,
        )
        for n, criterion in enumerate(objectives, 1):
            deviation = self.item(
                f"deviation-{n}",
                "PlanDeviation",
                "a plan objective left without an attestation",
                self.last,
                self.people["operator"],
                deviatesFrom=self.plan,
                concerns=criterion,
            )
            self.add(deviation, caie("reason"), text("no attestation of this criterion in the record: it is untested"))

    def agent(self, node: NamedNode, kind: str, label: str, role: str | None, on_behalf: NamedNode | None) -> None:
        self.add(node, RDF_TYPE, prov("Agent"))
        self.add(node, RDF_TYPE, prov(kind))
        self.add(node, NamedNode(RDFS + "label"), text(label))
        if role is not None:
            self.add(node, caie("role"), caie(role))
        if on_behalf is not None:
            self.add(node, prov("actedOnBehalfOf"), on_behalf)

    def _people(self) -> dict[str, NamedNode]:
        """The record's own people, by the part each plays in it: who signed the envelope off (the sponsor's
        signatory), who approved the plan (the domain expert), who ran the sessions (the operator)."""

        def who(kind: str, predicate: NamedNode) -> NamedNode:
            items = set(_of(self.mapped, kind))
            return next(
                t.object
                for t in self.mapped
                if t.subject in items
                and t.predicate == predicate
                and t.object != self.target
                and isinstance(t.object, NamedNode)
            )

        return {
            "signatory": who("RequirementSetApproval", _BY),
            "expert": who("PlanApproval", _BY),
            "operator": who("Session", prov("wasAssociatedWith")),
        }

    def _parties(self) -> None:
        self.people = self._people()
        self.sponsor, self.vendor, self.tester = (
            self.iri("sponsor"),
            self.iri("vendor"),
            self.iri("testing-organization"),
        )
        self.representative = self.iri("authorized-representative")
        self.agent(self.sponsor, "Organization", "the sponsor (declared)", "sponsorRole", None)
        self.add(self.sponsor, caie("role"), caie("testItemCustomerRole"))
        self.add(self.sponsor, caie("providesTestItem"), Literal("false", datatype=NamedNode(XSD + "boolean")))
        self.agent(
            self.vendor, "Organization", "the test target's provider (declared)", "accountableOrganizationRole", None
        )
        self.add(self.vendor, caie("providesTestItem"), Literal("true", datatype=NamedNode(XSD + "boolean")))
        self.agent(
            self.tester,
            "Organization",
            "the testing organization running this service (declared)",
            "testingOrganizationRole",
            None,
        )
        self.agent(
            self.people["signatory"],
            "Person",
            "the organizational expert, as the sponsor's signatory",
            "sponsorSignatoryRole",
            self.sponsor,
        )
        self.agent(
            self.representative,
            "Person",
            "the testing organization's authorized representative (declared)",
            "authorizedRepresentativeRole",
            self.tester,
        )
        self.agent(self.people["expert"], "Person", "the domain expert", "domainExpertRole", self.tester)
        self.agent(self.people["operator"], "Person", "the evaluation operator", "evaluationOperatorRole", self.tester)
        for node in (self.sponsor, self.vendor, self.tester, self.representative):
            self.add(node, NOTE, text(DECLARED))
        self.agent(self.target, "SoftwareAgent", "the test target", None, self.vendor)
        self.add(self.target, RDF_TYPE, NamedNode(EARL + "TestSubject"))
        self.add(self.target, caie("version"), text("as run (see the run's target fingerprint)"))
        software = {
            t.object
            for t in self.mapped
            if t.predicate.value == EARL + "assertedBy" and isinstance(t.object, NamedNode)
        } - set(self.people.values())
        for judge in sorted(software, key=lambda n: n.value):  # rule judges and the scenario checker
            self.agent(
                judge, "SoftwareAgent", "an automated judge or checker of the OB-CAIE service", None, self.tester
            )
            self.add(judge, caie("version"), text("as recorded"))
        self.population = self.iri("population")
        self.add(self.population, RDF_TYPE, prov("Agent"))
        self.add(self.population, RDF_TYPE, caie("Population"))
        self.add(self.population, NamedNode(RDFS + "label"), text("the users the envelope serves (declared)"))
        self.add(self.population, NOTE, text(DECLARED))
        self.add(self.population, caie("affectedAs"), caie("asCustomer"))
        self.add(self.population, caie("representedBy"), self.people["expert"])

    def _contract(self) -> None:
        t = self.start - 60 * _STEP
        mission = self.item(
            "mission", "Mission", "the sponsor's mission (declared)", t, self.sponsor, regards=self.population
        )
        need = self.item(
            "need",
            "Need",
            "the sponsor needs to know whether the test target is fit for its use (declared)",
            t + _STEP,
            self.sponsor,
            underMission=mission,
        )
        proposal = self.item(
            "proposal",
            "Proposal",
            "the testing organization proposes this evaluation (declared)",
            t + 2 * _STEP,
            self.representative,
            respondsTo=need,
        )
        self.agreement = self.item(
            "service-agreement",
            "ServiceAgreement",
            "the service agreement (declared)",
            t + 3 * _STEP,
            None,
            accepts=proposal,
        )
        for signer in (self.people["signatory"], self.representative):
            self.add(self.agreement, caie("signedBy"), signer)
        self.item(
            "independence-declaration",
            "IndependenceDeclaration",
            "the testing organization is independent of the test target's provider (declared)",
            t + 4 * _STEP,
            self.representative,
            independentOf=self.vendor,
        )
        interest = self.item(
            "user-interest-declaration",
            "UserInterestDeclaration",
            "the sponsor has a user interest in the test target (declared)",
            t + 5 * _STEP,
            self.people["signatory"],
        )
        self.add(interest, caie("hasUserInterest"), Literal("true", datatype=NamedNode(XSD + "boolean")))
        engagement = self.item(
            "engagement",
            "EngagementDecision",
            "the users: represented by the domain expert (declared)",
            None,
            None,
            population=self.population,
            engagement=caie("representation"),
        )
        self.item(
            "statement-of-work",
            "StatementOfWork",
            "the scope of work (declared)",
            t + 3 * _STEP,
            self.people["signatory"],
            underAgreement=self.agreement,
            decides=engagement,
        )
        first, last = self.sessions[0], max(self.last, self.sessions[-1])
        access = self.item(
            "test-item-access",
            "TestItemAccess",
            "access to the test target for the run (declared)",
            t + 6 * _STEP,
            self.vendor,
            grantsAccessTo=self.target,
            underAgreement=self.agreement,
        )
        for name, value in (
            ("versionIdentity", "the target version the run pinned"),
            ("underInstrument", "the deployment's run allow-list (declared)"),
            ("environment", "the endpoint the run called"),
        ):
            self.add(access, caie(name), text(value))
        self.add(access, caie("accessFrom"), date_time(min(first, t + 6 * _STEP)))
        self.add(access, caie("accessUntil"), date_time(last + 60 * _STEP))
        self.add(self.set, caie("underAgreement"), self.agreement)

    def _scope(self) -> None:
        t = self.start - 30 * _STEP
        self.item(
            "representation",
            "StakeholderRepresentation",
            "the users, spoken for by the domain expert (declared)",
            t,
            self.people["expert"],
            represents=self.population,
        )
        dso = next(
            t_.object
            for t_ in self.mapped
            if t_.predicate == caie("derivedFromDso") and isinstance(t_.object, NamedNode)
        )
        self.add(dso, RDF_TYPE, caie("DsoRelease"))
        self.add(dso, NamedNode(RDFS + "label"), text("the DSO the probes were derived under"))
        self.add(dso, caie("version"), text("as pinned by the plan"))
        self.add(dso, caie("approvedBy"), self.people["expert"])
        self.add(dso, caie("approvedAt"), date_time(t + 2 * _STEP))
        self.add(dso, _BY, self.people["expert"])
        self.add(dso, _AT, date_time(t + _STEP))
        self.add(
            dso,
            NOTE,
            text(
                "its approval date is declared by the export: the record holds the domain expert's "
                "DSO appropriateness assessment, made after the envelope"
            ),
        )

    def _report(self) -> None:
        coverage, shares = self.figures
        at = self.last + _STEP
        computation = self.item(
            "coverage-computation", "CoverageComputation", "the figures of the draft report (declared)", None, None
        )
        self.add(computation, prov("used"), self.set)
        for attestation in _of(self.mapped, "Attestation"):
            self.add(computation, prov("used"), attestation)
        assembler = self.iri("report-assembler")
        self.agent(assembler, "SoftwareAgent", "the OB-CAIE export's report figures (declared)", None, self.tester)
        self.add(assembler, caie("version"), text("caie-export 1"))
        self.add(assembler, NOTE, text(DECLARED))
        self.add(computation, prov("wasAssociatedWith"), assembler)
        self.add(computation, NamedNode(EARL + "mode"), NamedNode(EARL + "automatic"))
        for name, path in DIGESTED.items():
            self.add(computation, caie(name), text(hashlib.sha256(path.read_bytes()).hexdigest()))
        self.add(computation, prov("endedAtTime"), date_time(at))
        report = self.item("report-draft", "Report", "draft report (declared by the export)", at, None)
        self.add(report, prov("wasGeneratedBy"), computation)
        self.add(report, caie("draft"), Literal("true", datatype=NamedNode(XSD + "boolean")))
        self.add(report, caie("gaps"), text("not every criterion is attested; the export makes no final report"))
        self.add(report, caie("coverage"), _decimal(coverage))
        for name, outcome in (("passRate", "passed"), ("failRate", "failed"), ("cantTellRate", "cantTell")):
            self.add(report, caie(name), _decimal(shares[outcome]))


def _decimal(value: Fraction) -> Literal:
    return Literal(
        str(round(Decimal(value.numerator) / Decimal(value.denominator), 6)), datatype=NamedNode(XSD + "decimal")
    )
