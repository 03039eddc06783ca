"""A test plan as RDF (EPO terms, PROV for who and when), and the few facts read back from the record."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from pyoxigraph import Literal, NamedNode, Triple
from rdflib import Graph, URIRef
from rdflib.namespace import RDF as RDFNS
from rdflib.namespace import RDFS, SKOS

from ..core.digest import graph_digest
from ..core.iris import minted_number
from ..core.namespaces import DCTERMS, EARL, EPO, PROV, RDF, XSD
from ..core.rdf import RDF_TYPE, from_rdflib, integer
from ..core.store import Term
from ..envelope.inputs import Pin, pin_triples
from ..scenarios.derive import scenario_iri, scenario_node
from ..scenarios.engine import Context
from ..scenarios.frame import FrameCounts
from .allocation import Allocation

if TYPE_CHECKING:
    from .model import PlannedProbe, PlanRequest
    from .openings import Opening


def probe_iri(plan: str, number: int) -> str:
    """The IRI of probe ``number`` of the plan ``plan``: ``{plan}/probes/{number}``."""
    return f"{plan}/probes/{number}"


@dataclass(frozen=True)
class Provenance:
    """Where a plan's probes come from, beyond the derivation activity: the DSO release they were derived
    under, the consistency rules each probe's scenario was checked against (and passed), and the envelope's
    languages that had no opening-turn templates (so no probes)."""

    dso: str
    rules: Sequence[str]
    without_templates: Sequence[str]


def plan_triples(
    plan: str,
    request: PlanRequest,
    envelope: str,
    envelope_digest: str,
    counts: FrameCounts,
    frames: Mapping[str, int],
    allocation: Allocation,
    probes: Sequence[PlannedProbe],
    evaluation: str,
    agent: str,
    when: datetime,
    inputs: Sequence[Pin],
    derivation: str,
    provenance: Provenance,
    identifiers: Mapping[str, str],
) -> list[Triple]:
    """The plan node, one ``epo:Allocation`` per criterion (named by its identifier, ``identifiers`` mapping each
    criterion's IRI to it), one ``epo:Probe`` per probe, and the inputs it
    rests on (:mod:`service.envelope.inputs`), digested with the plan, so the same seed on the same inputs
    gives the same plan digest and a plan on other inputs another. ``derivation`` is the activity that
    derived its scenarios (described in the evaluation's scenarios graph).

    Each probe carries its derivation provenance (caie-spec S3): ``epo:derivedFromDso``,
    ``prov:wasGeneratedBy`` the derivation, and an automatic ``epo:ConsistencyCheck`` that passed, naming
    each rule checked (``earl:test``), dated with the plan. Its opening turn is tagged with the language it
    is written in and names its template set (``epo:openingTemplates``); its scripted follow-up turns follow it
    (:func:`_follow_ups`), digested with the plan, so the expert's approval covers every turn sent."""
    p = NamedNode(plan)
    out = [
        Triple(p, RDF_TYPE, NamedNode(EPO + "TestPlan")),
        Triple(
            p,
            NamedNode(RDFS.label),
            Literal(
                f"test plan {minted_number(plan)}: {request.budget} probes, "
                f"{request.strategy.value}, seed {request.seed}",
                language="en",
            ),
        ),
        Triple(p, NamedNode(EPO + "inEvaluation"), NamedNode(evaluation)),
        Triple(p, NamedNode(PROV + "wasDerivedFrom"), NamedNode(envelope)),
        Triple(p, NamedNode(EPO + "envelopeDigest"), Literal(envelope_digest)),
        Triple(p, NamedNode(EPO + "allocationStrategy"), NamedNode(EPO + request.strategy.value)),
        Triple(p, NamedNode(EPO + "probeBudget"), integer(request.budget)),
        Triple(p, NamedNode(EPO + "seed"), integer(request.seed)),
        Triple(p, NamedNode(EPO + "frameSize"), integer(counts.total)),
        Triple(p, NamedNode(EPO + "eligibleFrameSize"), integer(counts.eligible)),
        Triple(p, NamedNode(PROV + "wasAttributedTo"), NamedNode(agent)),
        Triple(p, NamedNode(PROV + "generatedAtTime"), Literal(when.isoformat(), datatype=NamedNode(XSD + "dateTime"))),
        Triple(p, NamedNode(PROV + "wasGeneratedBy"), NamedNode(derivation)),
        *pin_triples(plan, inputs),
        *(
            Triple(p, NamedNode(EPO + "languageWithoutTemplates"), NamedNode(language))
            for language in provenance.without_templates
        ),
    ]
    for criterion, count in allocation.probes.items():
        node = NamedNode(f"{plan}/allocations/{identifiers[criterion]}")
        out += [
            Triple(p, NamedNode(EPO + "objective"), NamedNode(criterion)),
            Triple(p, NamedNode(EPO + "allocation"), node),
            Triple(node, RDF_TYPE, NamedNode(EPO + "Allocation")),
            Triple(node, NamedNode(EPO + "allocatedTo"), NamedNode(criterion)),
            Triple(node, NamedNode(EPO + "probeCount"), integer(count)),
            Triple(node, NamedNode(EPO + "frameSize"), integer(frames[criterion])),
        ]
    for probe in probes:
        node = NamedNode(probe_iri(plan, probe.number))
        out += [
            Triple(p, NamedNode(EPO + "includesProbe"), node),
            Triple(node, RDF_TYPE, NamedNode(EPO + "Probe")),
            Triple(node, NamedNode(RDFS.label), Literal(f"probe {probe.number}", language="en")),
            Triple(node, NamedNode(EPO + "fromScenario"), NamedNode(probe.scenario_iri)),
            Triple(node, NamedNode(EPO + "allocatedTo"), NamedNode(probe.criterion)),
            Triple(node, NamedNode(EPO + "openingPrompt"), Literal(probe.opening.text, language=probe.opening.tag)),
            *_provenance(node, derivation, provenance, when),
        ]
        if probe.opening.templates:
            out.append(Triple(node, NamedNode(EPO + "openingTemplates"), NamedNode(probe.opening.templates)))
        if (
            probe.opening.review_status
        ):  # the set's status on the probe, so a listing shows text awaiting a native speaker
            out.append(Triple(node, NamedNode(EPO + "textReviewStatus"), NamedNode(probe.opening.review_status)))
        out += _follow_ups(node, probe.opening)
        out += [Triple(node, NamedNode(EPO + "exercises"), NamedNode(c)) for c in probe.exercises]
        if probe.language:
            out.append(Triple(node, NamedNode(EPO + "language"), NamedNode(probe.language)))
        if probe.assigned_to:
            out.append(Triple(node, NamedNode(EPO + "assignedTo"), NamedNode(probe.assigned_to)))
        if probe.stratum:
            out.append(Triple(node, NamedNode(EPO + "inStratum"), NamedNode(probe.stratum)))
    return out


def _follow_ups(probe: NamedNode, opening: Opening) -> list[Triple]:
    """The probe's scripted follow-up turns, ``{probe}/follow-ups/{n}`` with ``n`` the user turn's number in the
    conversation (the opening turn is 1), tagged like the opening; and each concept it says that another template
    set has follow-ups for and its own has none (``epo:lacksFollowUpsFor``: none sent, never another language's)."""
    out = []
    for number, text in enumerate(opening.follow_ups, start=2):
        turn = NamedNode(f"{probe.value}/follow-ups/{number}")
        out += [
            Triple(probe, NamedNode(EPO + "followUp"), turn),
            Triple(turn, RDF_TYPE, NamedNode(EPO + "FollowUpTurn")),
            Triple(turn, NamedNode(EPO + "followUpPosition"), integer(number)),
            Triple(turn, NamedNode(EPO + "followUpPrompt"), Literal(text, language=opening.tag)),
        ]
    return out + [Triple(probe, NamedNode(EPO + "lacksFollowUpsFor"), NamedNode(c)) for c in opening.lacking_follow_ups]


def _provenance(probe: NamedNode, derivation: str, provenance: Provenance, when: datetime) -> list[Triple]:
    """A probe's DSO, generating activity and passed consistency check (``{probe}/check``, its result below it)."""
    check, result = NamedNode(f"{probe.value}/check"), NamedNode(f"{probe.value}/check/result")
    return [
        Triple(probe, NamedNode(EPO + "derivedFromDso"), NamedNode(provenance.dso)),
        Triple(probe, NamedNode(PROV + "wasGeneratedBy"), NamedNode(derivation)),
        Triple(check, RDF_TYPE, NamedNode(EPO + "ConsistencyCheck")),
        Triple(check, NamedNode(EARL + "subject"), probe),
        Triple(check, NamedNode(EARL + "mode"), NamedNode(EARL + "automatic")),
        Triple(check, NamedNode(EARL + "assertedBy"), NamedNode(derivation)),
        Triple(check, NamedNode(EARL + "result"), result),
        Triple(
            check, NamedNode(PROV + "generatedAtTime"), Literal(when.isoformat(), datatype=NamedNode(XSD + "dateTime"))
        ),
        *(Triple(check, NamedNode(EARL + "test"), NamedNode(rule)) for rule in provenance.rules),
        Triple(result, RDF_TYPE, NamedNode(EARL + "TestResult")),
        Triple(result, NamedNode(EARL + "outcome"), NamedNode(EARL + "passed")),
        Triple(
            result,
            NamedNode(EARL + "info"),
            Literal(
                f"the scenario violates none of the {len(provenance.rules)} consistency rules checked", language="en"
            ),
        ),
    ]


def digest_triple(plan: str, digest: str) -> Triple:
    """The plan's digest, which identifies its content, so the same seed on the same inputs gives the same digest.

    SHA-256 (RDFC-1.0) of the plan's triples (:func:`plan_digest`) with the plan's own IRI made relative
    (its number depends on how many plans the record had) and without the record keeping: when and by whom
    it was made (``prov:generatedAtTime``, ``prov:wasAttributedTo``, any ``xsd:dateTime`` value), the plan's
    label (it names the number) and this triple. Those stay in the record; they are just not digested.
    What is digested: strategy, budget, seed, envelope and its digest, frame sizes, allocation, probes (every
    turn they send: opening and follow-ups).
    """
    return Triple(NamedNode(plan), NamedNode(EPO + "planDigest"), Literal(digest))


_RECORD_KEEPING = {
    EPO + "planDigest",
    PROV + "generatedAtTime",
    PROV + "wasAttributedTo",
    PROV + "wasAssociatedWith",
    PROV + "startedAtTime",
    PROV + "endedAtTime",
    PROV + "atTime",
    DCTERMS + "created",
    DCTERMS + "modified",
    DCTERMS + "issued",
}
_TIMES = {XSD + "dateTime", XSD + "dateTimeStamp"}
_RELATIVE = "urn:x-caie:plan"


T = TypeVar("T", bound=Term)


def text(term: Term) -> str:
    """A term's value; the empty string for a quoted triple (RDF-star), which has none (no plan graph holds one)."""
    return "" if isinstance(term, Triple) else term.value


def _digested(triple: Triple, plan: str | None) -> bool:
    if triple.predicate.value in _RECORD_KEEPING:
        return False
    if isinstance(triple.object, Literal) and triple.object.datatype.value in _TIMES:
        return False
    return not (text(triple.subject) == plan and triple.predicate.value == str(RDFS.label))


def plan_digest(triples: Iterable[Triple]) -> str:
    """The digest of a plan graph's content, as :func:`digest_triple` describes.

    Recomputed from the stored triples whenever an approval is checked, so a plan changed behind the
    service no longer matches what was approved.
    """
    triples = list(triples)
    plans = {
        text(t.subject) for t in triples if t.predicate.value == RDF + "type" and text(t.object) == EPO + "TestPlan"
    }
    plan = next(iter(plans)) if len(plans) == 1 else None

    def relative(term: T) -> T | NamedNode:
        if plan and isinstance(term, NamedNode) and (term.value == plan or term.value.startswith(plan + "/")):
            return NamedNode(_RELATIVE + term.value[len(plan) :])
        return term

    return graph_digest(
        [Triple(relative(t.subject), t.predicate, relative(t.object)) for t in triples if _digested(t, plan)]
    )


def plan_numbers(triples: Iterable[Triple], evaluation: str) -> list[int]:
    pattern = re.compile(re.escape(evaluation) + r"/plans/(\d+)$")
    return [
        int(match.group(1))
        for t in triples
        if t.predicate.value == RDF + "type"
        and text(t.object) == EPO + "TestPlan"
        and (match := pattern.match(text(t.subject)))
    ]


def labels(dso: Graph, kgs: Sequence[Graph]) -> dict[str, str]:
    """English labels of every DSO and KG term, for templating opening turns."""
    found: dict[str, str] = {}
    for graph in (dso, *kgs):
        for predicate in (SKOS.prefLabel, RDFS.label):
            for subject, label in graph.subject_objects(predicate):
                if getattr(label, "language", None) in (None, "en"):
                    found.setdefault(str(subject), str(label))
    return found


def probe_scenarios(indices: Iterable[int], context: Context, evaluation: str) -> list[Triple]:
    """Descriptions of probe scenarios that the review sample did not include (all eligible), by content IRI."""
    graph = Graph()
    for index in sorted(set(indices)):
        values = context.space.values(index)
        iri = scenario_iri(evaluation, values)
        for triple in scenario_node(iri, context.facets, values, index):
            graph.add(triple)
        graph.add((URIRef(iri), RDFNS.type, URIRef(EPO + "EligibleScenario")))
    return from_rdflib(graph)
