"""caie-spec's counterexamples are refused on import, each naming the one shape it breaks; the measles record passes.

Every counterexample is the measles record with one change, and its header says which caie-spec shape it must fail
("Must fail on ogc:S7-Report and nothing else"). Each is validated in process, as the import does (pySHACL with
caie-spec's shapes over record + caie-spec EPO + model extract in one graph, about a second each); one
counterexample then goes through ``POST /evaluations/imports`` on both backends. The valid measles record's
import over HTTP (it conforms) is in test_caie_metrics.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
import rdflib

from service.api import create_app
from service.scope import caie

from ..api.test_import import assert_refused, catalog
from ..conftest import Service, settings_for
from ..servers import AppSlot
from .common import spec_file

COUNTEREXAMPLES = [
    "acceptance-by-organization",
    "access-without-period",
    "dso-approval-undated",
    "fit-despite-failure",
    "independence-undeclared",
    "insufficient-yet-failed",
    "one-person-team",
    "plan-approved-after-session",
    "population-unrepresented",
    "record-without-level",
    "report-coverage-misstated",
    "requirement-set-unapproved",
    "statement-of-work-after-agreement",
    "user-interest-denied",
    "verdict-without-digests",
]
"""The 15 counterexamples ../shared/interop/caie-spec holds (SOURCE.md)."""
_MUST_FAIL = re.compile(r"^# Must fail on (ogc:[A-Za-z0-9-]+) and nothing else\.$", re.MULTILINE)


@pytest.fixture(scope="module")
def spec() -> caie.CaieSpec:
    spec_file("explorer", "data", "epo.shapes.ttl")
    loaded = caie.load_spec(spec_file())
    assert loaded is not None
    return loaded


def must_fail_on(text: str) -> str:
    [shape] = _MUST_FAIL.findall(text)
    return shape


def test_every_counterexample_is_here() -> None:
    listed = sorted(path.stem for path in spec_file("counterexamples").glob("*.ttl"))
    assert listed == sorted(COUNTEREXAMPLES)


@pytest.mark.parametrize("name", COUNTEREXAMPLES)
def test_counterexample_fails_exactly_the_shape_its_header_names(spec: caie.CaieSpec, name: str) -> None:
    text = spec_file("counterexamples", f"{name}.ttl").read_text(encoding="utf-8")
    outcome = caie.validate(rdflib.Graph().parse(data=text, format="turtle"), spec)
    assert not outcome.conforms
    assert caie.failed_shapes(outcome, spec) == [must_fail_on(text)]


def test_a_counterexample_is_refused_over_http_naming_its_shape(service: Service) -> None:
    body = spec_file("counterexamples", "report-coverage-misstated.ttl").read_bytes()
    problem = assert_refused(
        service, body, 422, "does not conform to caie-spec's shapes (failed: ogc:S7-Report)", id="misstated"
    )
    assert "ogc:S7-Report" in problem["detail"]
    assert {error["source_shape"] for error in problem["errors"]} == {"ogc:S7-Report"}
    assert {error["focus_node"] for error in problem["errors"]} == {
        "<https://w3id.org/og-caie/evaluation/measles#report>"
    }
    assert catalog(service) == {}


def test_without_caie_spec_files_a_caie_spec_record_is_refused_not_imported_unchecked(
    service: Service, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CAIE_SPEC_DIR", str(tmp_path))
    body = spec_file("explorer", "data", "measles-evaluation.ttl").read_bytes()
    problem = assert_refused(service, body, 422, "this deployment cannot check it", id="unchecked")
    assert str(tmp_path) in problem["detail"] and "CAIE_SPEC_DIR" in problem["detail"]


def test_a_caie_spec_record_over_the_deployments_size_limit_is_refused_before_its_slow_checks(
    service: Service, app_slot: tuple[AppSlot, str]
) -> None:
    # caie-spec's shapes take time that grows with the square of a record's size: a deployment caps what it checks
    slot, url = app_slot
    body = spec_file("explorer", "data", "measles-evaluation.ttl").read_bytes()  # 1,228 triples
    app = create_app(settings_for(service.tokens, spec_record_max_triples=1000), service.store)
    with slot.serving(app), httpx.Client(base_url=url, timeout=60.0) as http:
        limited = Service(http, service.store, service.tokens, url)
        problem = assert_refused(limited, body, 413, "1228 triples in caie-spec's vocabulary", id="too-big")
    assert "at most 1000" in problem["detail"] and "CAIE_SPEC_RECORD_MAX_TRIPLES" in problem["detail"]
