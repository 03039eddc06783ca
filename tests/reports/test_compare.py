"""Comparison of two reports (service/reports/compare.py): the compatibility rule names every difference, each
criterion's change follows the documented rule, and the deltas are current minus reference.

Reports are built here as the record would give them, with the figures worked out by hand; the HTTP comparison of
reports made by the service is in test_report_page.py.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from service.core.errors import BadRequest, Conflict
from service.core.namespaces import EARL
from service.reports.compare import Side, change, compare, incompatibilities
from service.reports.identity import UNTESTED, CriterionState, content_digest
from service.reports.model import (
    Basis,
    Coverage,
    Digested,
    Figures,
    JudgeUsed,
    OutcomeShare,
    Report,
    ScopeFacts,
    Statement,
)

PASSED, FAILED, CANT_TELL = EARL + "passed", EARL + "failed", EARL + "cantTell"
E = "http://caie.test/evaluations/e"


def _state(identifier: str, outcome: str, weight: str = "1", statement: str = "s") -> CriterionState:
    return CriterionState(
        identifier,
        f"{E}/envelope/v1/criteria/{identifier}",
        statement,
        content_digest(statement, "x"),
        Decimal(weight),
        f"{E}/envelope/v1/requirements/R1",
        "R1",
        "a requirement",
        outcome,
    )


def _figures(covered: int, covered_weight: str, shares: dict[str, tuple[int, str]]) -> Figures:
    total = sum(count for count, _ in shares.values())
    weight = sum(Decimal(w) for _, w in shares.values())
    return Figures(
        Coverage(Decimal(covered_weight), Decimal(10), covered, 4),
        tuple(OutcomeShare(outcome, count, Decimal(w), total, weight) for outcome, (count, w) in shares.items()),
        (),
        (),
        (),
        (),
    )


def _report(
    number: int, fingerprint: str, figures: Figures, *, envelope_digest: str = "env-1", judge_version: str = "1.0"
) -> Report:
    scope = ScopeFacts(
        f"{E}/target",
        "MeaslesBot",
        "chatbot",
        f"{E}/target/version-boundary",
        "m-1",
        "{}",
        f"{E}/use-boundary",
        "public health questions",
        f"{E}/method",
        "OB-CAIE",
        "1",
    )
    basis = Basis(
        E,
        f"{E}/runs/{number}",
        f"{E}/plans/1",
        "plan-1",
        f"{E}/envelope/v1",
        envelope_digest,
        fingerprint,
        scope,
        (
            JudgeUsed("http://caie.test/graphs/judges/rules#schedule", judge_version),
            JudgeUsed("http://caie.test/agents/annie", None),
        ),
        "0.9.0",
    )
    return Report(
        f"{E}/reports/{number}",
        number,
        "2026-12-01T10:00:00Z",
        "http://caie.test/agents/theo",
        basis,
        figures,
        Statement((), (), "https://w3id.org/ob-caie/epo/NotFit"),
        (),
        (Digested("coverage", "q-1"), Digested("outcome-distribution", "q-2")),
    )


REFERENCE_CRITERIA = (
    _state("c1", FAILED, "4"),
    _state("c2", FAILED, "3"),
    _state("c3", PASSED, "2"),
    _state("c4", UNTESTED, "1"),
)
CURRENT_CRITERIA = (
    _state("c1", PASSED, "4"),
    _state("c2", FAILED, "3"),
    _state("c3", UNTESTED, "2"),
    _state("c4", FAILED, "1"),
)
# reference: covered c1 c2 c3 (weight 9 of 10), 2 failed (7) + 1 passed (2); current: c1 c2 c4 (8 of 10),
# 2 failed (c2 3 + c4 1 = 4) + 1 passed (c1 4).
REFERENCE = _report(1, "sha256:v1", _figures(3, "9", {PASSED: (1, "2"), FAILED: (2, "7"), CANT_TELL: (0, "0")}))
CURRENT = _report(2, "sha256:v2", _figures(3, "8", {PASSED: (1, "4"), FAILED: (2, "4"), CANT_TELL: (0, "0")}))
SETTINGS = '{"concurrency": 8}'


@pytest.mark.parametrize(
    ("reference", "current", "expected"),
    [
        (PASSED, FAILED, "newly failing"),
        (CANT_TELL, FAILED, "newly failing"),
        (FAILED, FAILED, "still failing"),
        (FAILED, PASSED, "fixed"),
        (FAILED, CANT_TELL, "other change"),
        (PASSED, CANT_TELL, "other change"),
        (UNTESTED, FAILED, "newly covered"),
        (UNTESTED, PASSED, "newly covered"),
        (PASSED, UNTESTED, "no longer covered"),
        (FAILED, UNTESTED, "no longer covered"),
        (UNTESTED, UNTESTED, "unchanged"),
        (PASSED, PASSED, "unchanged"),
    ],
)
def test_the_change_rule(reference: str, current: str, expected: str) -> None:
    assert change(reference, current) == expected


def test_a_version_comparison_states_each_criterion_and_the_deltas() -> None:
    result = compare(
        "version", Side(CURRENT, CURRENT_CRITERIA, SETTINGS), Side(REFERENCE, REFERENCE_CRITERIA, SETTINGS)
    )
    assert [(row.identifier, row.change) for row in result.changes] == [
        ("c1", "fixed"),
        ("c2", "still failing"),
        ("c4", "newly covered"),
        ("c3", "no longer covered"),
    ]
    deltas = {delta.name: delta for delta in result.deltas}
    assert deltas["coverage"].difference == Decimal("-0.1")  # 8/10 - 9/10
    assert deltas["failed count"].difference == 0
    assert deltas["failed fraction"].difference == 0  # 2/3 both
    # by weight: failed 4/8 now against 7/9 before; passed 4/8 against 2/9
    assert deltas["failed weighted fraction"].difference == Decimal("0.5") - Decimal(7 / 9).quantize(Decimal("1e-12"))
    assert deltas["passed weighted fraction"].current == Decimal("0.5")


def test_incompatible_reports_name_every_difference() -> None:
    other = replace(CURRENT, basis=replace(CURRENT.basis, envelope_digest="env-2"))
    other = replace(
        other, basis=replace(other.basis, judges=(JudgeUsed("http://caie.test/graphs/judges/rules#schedule", "2.0"),))
    )
    changed = (_state("c1", PASSED, "4", statement="another text"), *CURRENT_CRITERIA[1:3])
    with pytest.raises(Conflict) as refused:
        compare("baseline", Side(other, changed, '{"concurrency": 2}'), Side(REFERENCE, REFERENCE_CRITERIA, SETTINGS))
    reasons = refused.value.detail
    assert reasons[0].startswith("envelope digest: env-2 in the current report, env-1 in the reference")
    assert "criterion c1 changed" in reasons[0] and "criterion c4 only in the reference report's envelope" in reasons[0]
    assert (
        "judge version of http://caie.test/graphs/judges/rules#schedule: 2.0 in the current report, 1.0 in the "
        "reference"
    ) in reasons
    assert any(reason.startswith("execution conditions (run settings)") for reason in reasons)
    assert len(reasons) == 3  # people (annie) are not versioned judges: no difference there


def test_a_version_comparison_needs_another_version_of_the_same_target() -> None:
    same = replace(CURRENT, basis=replace(CURRENT.basis, target_fingerprint="sha256:v1"))
    reasons = incompatibilities(
        "version", Side(same, CURRENT_CRITERIA, SETTINGS), Side(REFERENCE, REFERENCE_CRITERIA, SETTINGS)
    )
    assert reasons == [
        (
            "target version: both reports are on sha256:v1; a version comparison compares another "
            "version of the same target"
        )
    ]
    assert (
        incompatibilities(
            "baseline", Side(same, CURRENT_CRITERIA, SETTINGS), Side(REFERENCE, REFERENCE_CRITERIA, SETTINGS)
        )
        == []
    )


def test_metric_definitions_are_compared_by_query_digest() -> None:
    moved = replace(CURRENT, queries=(Digested("coverage", "q-9"), Digested("outcome-distribution", "q-2")))
    assert incompatibilities(
        "baseline", Side(moved, CURRENT_CRITERIA, SETTINGS), Side(REFERENCE, REFERENCE_CRITERIA, SETTINGS)
    ) == ["metric definition coverage.rq (query digest): q-9 in the current report, q-1 in the reference"]


def test_unknown_kind_and_self_comparison_are_bad_requests() -> None:
    side = Side(CURRENT, CURRENT_CRITERIA, SETTINGS)
    with pytest.raises(BadRequest, match="unknown comparison kind"):
        compare("sideways", side, Side(REFERENCE, REFERENCE_CRITERIA, SETTINGS))
    with pytest.raises(BadRequest, match="not compared with itself"):
        compare("baseline", side, side)
