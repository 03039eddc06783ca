"""A report as RDF: the graph ``{evaluation}/reports/{n}``, whose IRI is the report's, and its sign-offs, each a
graph of its own (``{report}/sign-off``, ``{report}/acceptance``). Nothing here is ever rewritten.

The report graph (``r`` the report's IRI)::

    <r> a epo:Report ; epo:inEvaluation <e> ; prov:generatedAtTime "as of" ; prov:wasAttributedTo <author> ;
        epo:reportedRun <run> ; epo:reportedPlan <plan> ; epo:planDigest "…" ;
        epo:reportedEnvelope <envelope> ; epo:envelopeDigest "…" ; epo:targetFingerprint "sha256:…" ;
        epo:reportsScope <target> , <version boundary> , <use boundary> , <method> ;   # copied, typed
        epo:judgedWith <judge> ;                                  # software judges with their epo:version
        epo:coverage 0.75 ; epo:passedFraction … ; epo:failedFraction … ; epo:cantTellFraction … ;
        dqv:hasQualityMeasurement <r/measurements/…> ;          # coverage, distribution, pass rates, errors
        epo:failedCriterion <c> ; epo:hasGap <r/gaps/k> ; epo:limitation "…" ;
        epo:criterionStanding <r/standings/k> ;                  # outcome, sufficiency, appropriateness
        epo:testedRelease "…" ; epo:outsideVersionBoundary <boundary> ; epo:outsideBoundaryReason "…" ;
        epo:recommendation <r/recommendation> ;                  # epo:fitness, one epo:statement per text
        epo:computedBy <r/computation> ; epo:computedFrom <r/snapshots/k> .
    <r/computation> a epo:MetricComputation ; prov:wasAssociatedWith <r/evaluator> ; prov:used <r/queries/name> .
    <r/queries/name> epo:queryDigest "…" .    <r/snapshots/k> epo:snapshotOf <graph> ; epo:graphDigest "…" .

Every measurement states its exact ``epo:numerator`` and ``epo:denominator`` and, when defined, ``dqv:value``;
a pass rate its ``epo:sampleSize``, ``epo:frameSize`` and interval. Criteria the report names (failed, gaps) are
copied with their identifier, weight and requirement, so the report reads on its own.
"""

from __future__ import annotations

from decimal import Decimal

from pyoxigraph import Literal, NamedNode, Triple

from ..core.namespaces import DCTERMS, DQV, EPO, PROV, RDFS, XSD
from ..core.rdf import RDF_TYPE, integer, local_name
from .model import CriterionItem, Report, SignOff, canon, ratio

SIGN_OFF_CLASSES = {"sign-off": EPO + "ReportSignOff", "acceptance": EPO + "ReportAcceptance"}


def decimal(value: Decimal) -> Literal:
    return Literal(canon(value), datatype=NamedNode(XSD + "decimal"))


class _Say:
    """Collects triples; ``None`` values are left out (an undefined fraction has no ``dqv:value``)."""

    def __init__(self) -> None:
        self.triples: list[Triple] = []

    def __call__(self, subject: str, predicate: str, value: NamedNode | Literal | None) -> None:
        if value is not None:
            self.triples.append(Triple(NamedNode(subject), NamedNode(predicate), value))


def report_triples(report: Report) -> list[Triple]:
    """The report graph's triples."""
    say, r, b = _Say(), report.iri, report.basis
    say(r, RDF_TYPE.value, NamedNode(EPO + "Report"))
    say(r, RDF_TYPE.value, NamedNode(PROV + "Entity"))
    say(r, EPO + "inEvaluation", NamedNode(b.evaluation))
    say(r, PROV + "generatedAtTime", Literal(report.as_of, datatype=NamedNode(XSD + "dateTime")))
    say(r, PROV + "wasAttributedTo", NamedNode(report.author))
    for predicate, value in (("reportedRun", b.run), ("reportedPlan", b.plan), ("reportedEnvelope", b.envelope)):
        say(r, EPO + predicate, NamedNode(value))
    for predicate, text in (
        ("planDigest", b.plan_digest),
        ("envelopeDigest", b.envelope_digest),
        ("targetFingerprint", b.target_fingerprint),
    ):
        say(r, EPO + predicate, Literal(text))
    _scope(say, r, report)
    for judge in b.judges:
        say(r, EPO + "judgedWith", NamedNode(judge.iri))
        say(judge.iri, EPO + "version", Literal(judge.version) if judge.version is not None else None)
    _figures(say, report)
    _evidence(say, report)
    for text in report.statement.limitations:
        say(r, EPO + "limitation", Literal(text))
    recommendation = f"{r}/recommendation"
    say(r, EPO + "recommendation", NamedNode(recommendation))
    say(recommendation, RDF_TYPE.value, NamedNode(EPO + "Recommendation"))
    say(recommendation, EPO + "fitness", NamedNode(report.statement.fitness))
    say(recommendation, PROV + "wasAttributedTo", NamedNode(report.author))
    for text in report.statement.recommendations:
        say(recommendation, EPO + "statement", Literal(text))
    _provenance(say, report)
    return say.triples


def _scope(say: _Say, r: str, report: Report) -> None:
    s = report.basis.scope
    for node, cls in (
        (s.target, "TestTarget"),
        (s.version_boundary, "VersionBoundary"),
        (s.use_boundary, "UseBoundary"),
        (s.method, "EvaluationMethod"),
    ):
        if node is not None:
            say(r, EPO + "reportsScope", NamedNode(node))
            say(node, RDF_TYPE.value, NamedNode(EPO + cls))
    say(s.target, RDFS + "label", Literal(s.target_name))
    say(s.target, EPO + "targetKind", Literal(s.target_kind))
    say(s.version_boundary, EPO + "targetVersion", Literal(s.model_release))
    say(s.version_boundary, EPO + "configuration", Literal(s.configuration))
    say(s.use_boundary, EPO + "statement", Literal(s.use_statement))
    b = report.basis
    say(r, EPO + "testedSystem", Literal(b.tested_system) if b.tested_system else None)
    say(r, EPO + "testedRelease", Literal(b.tested_release) if b.tested_release else None)
    if b.outside_boundary is not None:  # the run's target is not the scope's: every figure is about another target
        say(r, EPO + "outsideVersionBoundary", NamedNode(s.version_boundary))
        say(r, EPO + "outsideBoundaryReason", Literal(b.outside_boundary))
    if s.method is not None:
        say(s.method, RDFS + "label", Literal(s.method_name) if s.method_name else None)
        say(s.method, EPO + "methodVersion", Literal(s.method_version) if s.method_version else None)


def _measurement(
    say: _Say,
    r: str,
    node: str,
    metric: str,
    numerator: Decimal | int,
    denominator: Decimal | int,
    value: Decimal | None,
    weighted: bool | None = None,
) -> None:
    say(r, DQV + "hasQualityMeasurement", NamedNode(node))
    say(node, RDF_TYPE.value, NamedNode(DQV + "QualityMeasurement"))
    say(node, DQV + "isMeasurementOf", NamedNode(EPO + metric))
    say(node, EPO + "numerator", integer(numerator) if isinstance(numerator, int) else decimal(numerator))
    say(node, EPO + "denominator", integer(denominator) if isinstance(denominator, int) else decimal(denominator))
    say(node, DQV + "value", None if value is None else decimal(value))
    if weighted is not None:
        say(node, EPO + "weighted", Literal("true" if weighted else "false", datatype=NamedNode(XSD + "boolean")))


def _figures(say: _Say, report: Report) -> None:
    r, f, m = report.iri, report.figures, f"{report.iri}/measurements"
    c = f.coverage
    say(r, EPO + "coverage", None if c.value is None else decimal(c.value))
    _measurement(say, r, f"{m}/coverage", "Coverage", c.covered_weight, c.applicable_weight, c.value, True)
    _measurement(
        say, r, f"{m}/coverage-count", "Coverage", c.covered, c.applicable, ratio(c.covered, c.applicable), False
    )
    say(f"{m}/coverage", DQV + "computedOn", NamedNode(report.basis.envelope))
    for share in f.distribution:
        name = local_name(share.outcome)
        fraction = {"passed": "passedFraction", "failed": "failedFraction", "cantTell": "cantTellFraction"}.get(name)
        if fraction:
            say(r, EPO + fraction, None if share.fraction is None else decimal(share.fraction))
        for suffix, weighted, numerator, denominator, value in (
            ("count", False, share.count, share.covered, share.fraction),
            ("weight", True, share.weight, share.covered_weight, share.weighted_fraction),
        ):
            node = f"{m}/{name}-{suffix}"
            _measurement(say, r, node, "OutcomeDistribution", numerator, denominator, value, weighted)
            say(node, EPO + "outcome", NamedNode(share.outcome))
    for k, rate in enumerate(f.pass_rates, start=1):
        node = f"{m}/pass-rates/{k}"
        _measurement(say, r, node, "ProbePassRate", rate.passed, rate.judged, rate.rate)
        say(node, EPO + "forCriterion", NamedNode(rate.criterion))
        say(node, EPO + "forRun", NamedNode(report.basis.run))
        say(node, EPO + "sampleSize", integer(rate.judged))
        say(node, EPO + "frameSize", None if rate.frame is None else integer(rate.frame))
        say(node, EPO + "confidenceLevel", None if rate.level is None else decimal(rate.level))
        say(node, EPO + "confidenceLower", None if rate.lower is None else decimal(rate.lower))
        say(node, EPO + "confidenceUpper", None if rate.upper is None else decimal(rate.upper))
        say(node, EPO + "intervalMethod", None if rate.method is None else Literal(rate.method))
    for k, error in enumerate(f.errors, start=1):
        node = f"{m}/errors/{k}"
        _measurement(say, r, node, "ExecutionErrorRate", error.count, error.cases, ratio(error.count, error.cases))
        say(node, EPO + "forRun", NamedNode(error.run))
        say(node, EPO + "countsErrorKind", NamedNode(error.kind) if error.kind else None)
    for item in f.failed:
        say(r, EPO + "failedCriterion", NamedNode(item.criterion))
        _criterion(say, item)
    for k, item in enumerate(f.untested, start=1):
        gap = f"{r}/gaps/{k}"
        say(r, EPO + "hasGap", NamedNode(gap))
        say(gap, RDF_TYPE.value, NamedNode(EPO + "Gap"))
        say(gap, EPO + "gapCriterion", NamedNode(item.criterion))
        say(gap, EPO + "statement", Literal("an applicable criterion with no current attested outcome: untested"))
        _criterion(say, item)


def _evidence(say: _Say, report: Report) -> None:
    """Each criterion's standing, the share of coverage on insufficient evidence, each judge's agreement with people."""
    r, f, m = report.iri, report.figures, f"{report.iri}/measurements"
    for k, st in enumerate(f.standings, start=1):
        node = f"{r}/standings/{k}"
        say(r, EPO + "criterionStanding", NamedNode(node))
        say(node, RDF_TYPE.value, NamedNode(EPO + "CriterionStanding"))
        say(node, EPO + "standingCriterion", NamedNode(st.criterion))
        say(node, EPO + "outcome", NamedNode(st.outcome))
        say(node, EPO + "attestedSufficiency", NamedNode(st.sufficiency) if st.sufficiency else None)
        say(node, EPO + "attestedAppropriateness", NamedNode(st.appropriateness) if st.appropriateness else None)
        say(st.criterion, DCTERMS + "identifier", Literal(st.identifier))
        say(st.criterion, EPO + "weight", decimal(st.weight))
    i = f.insufficient
    _measurement(
        say,
        r,
        f"{m}/insufficient-evidence",
        "InsufficientEvidenceShare",
        i.insufficient_weight,
        i.covered_weight,
        i.value,
        True,
    )
    _measurement(
        say,
        r,
        f"{m}/insufficient-evidence-count",
        "InsufficientEvidenceShare",
        i.insufficient,
        i.covered,
        ratio(i.insufficient, i.covered),
        False,
    )
    for k, a in enumerate(f.agreements, start=1):
        node = f"{m}/judge-agreement/{k}"
        say(r, DQV + "hasQualityMeasurement", NamedNode(node))
        say(node, RDF_TYPE.value, NamedNode(DQV + "QualityMeasurement"))
        say(node, DQV + "isMeasurementOf", NamedNode(EPO + "JudgeHumanAgreement"))
        say(node, DQV + "computedOn", NamedNode(a.judge))
        say(node, EPO + "judgeVersion", Literal(a.version))
        say(node, EPO + "forCriterion", NamedNode(a.criterion))
        say(node, EPO + "agreementMeasure", NamedNode(a.measure))
        say(node, DQV + "value", None if a.value is None else decimal(a.value))
        say(node, EPO + "sampleSize", integer(a.units))
        say(
            node,
            EPO + "trustedAlone",
            Literal("true" if a.trusted_alone else "false", datatype=NamedNode(XSD + "boolean")),
        )


def _criterion(say: _Say, item: CriterionItem) -> None:
    say(item.criterion, DCTERMS + "identifier", Literal(item.identifier))
    say(item.criterion, EPO + "weight", decimal(item.weight))
    say(item.criterion, EPO + "criterionOf", NamedNode(item.requirement) if item.requirement else None)


def _provenance(say: _Say, report: Report) -> None:
    r = report.iri
    computation, evaluator = f"{r}/computation", f"{r}/evaluator"
    say(r, EPO + "computedBy", NamedNode(computation))
    say(computation, RDF_TYPE.value, NamedNode(EPO + "MetricComputation"))
    say(computation, PROV + "endedAtTime", Literal(report.as_of, datatype=NamedNode(XSD + "dateTime")))
    say(computation, PROV + "wasAssociatedWith", NamedNode(evaluator))
    say(evaluator, RDF_TYPE.value, NamedNode(PROV + "SoftwareAgent"))
    say(evaluator, RDFS + "label", Literal("OB-CAIE"))
    say(evaluator, EPO + "version", Literal(report.basis.evaluator_version))
    for query in report.queries:
        node = f"{r}/queries/{query.name}"
        say(computation, PROV + "used", NamedNode(node))
        say(node, RDFS + "label", Literal(f"{query.name}.rq"))
        say(node, EPO + "queryDigest", Literal(query.digest))
    for k, snapshot in enumerate(report.snapshots, start=1):
        node = f"{r}/snapshots/{k}"
        say(r, EPO + "computedFrom", NamedNode(node))
        say(node, RDF_TYPE.value, NamedNode(EPO + "GraphSnapshot"))
        say(node, EPO + "snapshotOf", NamedNode(snapshot.name))
        say(node, EPO + "graphDigest", Literal(snapshot.digest))


def sign_off_triples(
    report: str, evaluation: str, sign_off: SignOff, report_digest: str, signed: str | None
) -> list[Triple]:
    """A sign-off graph (its IRI the sign-off's): who signed or accepted ``report`` when, naming the digest of
    the report graph it approved; an acceptance also names the sign-off it accepts (``signed``) and makes the
    report final (``epo:isDraft false``)."""
    say, node = _Say(), sign_off.iri
    say(node, RDF_TYPE.value, NamedNode(SIGN_OFF_CLASSES[sign_off.kind]))
    say(node, RDF_TYPE.value, NamedNode(PROV + "Entity"))
    say(node, EPO + ("approvesReport" if sign_off.kind == "sign-off" else "approves"), NamedNode(report))
    say(node, EPO + "inEvaluation", NamedNode(evaluation))
    say(node, PROV + "wasAttributedTo", NamedNode(sign_off.agent))
    say(node, PROV + "generatedAtTime", Literal(sign_off.at, datatype=NamedNode(XSD + "dateTime")))
    say(node, EPO + "graphDigest", Literal(report_digest))
    say(node, EPO + "statement", Literal(sign_off.comment) if sign_off.comment else None)
    if signed is not None:
        say(node, PROV + "wasDerivedFrom", NamedNode(signed))
        say(report, EPO + "isDraft", Literal("false", datatype=NamedNode(XSD + "boolean")))
    return say.triples
