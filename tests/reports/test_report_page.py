"""The report page in a real Chromium, and comparisons of reports over real HTTP (issue 11 §3, §4).

On the bed-nets run that tests/reports/test_reports_api.py attests (requirements R1: hanging 3, washing 2; R2:
where 1; washing failed, where passed, hanging untested). Worked by hand: coverage 3 of 6 = 50%; by requirement
R1 2 of 5 (40%), R2 1 of 1; the distribution 1 passed and 1 failed (50% each), by weight 1 and 2.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from service.cli import main
from service.core.config import Credential
from service.core.store import EmbeddedStore
from service.runs.model import ExecutionSettings
from service.runs.records import start_run
from service.runs.runner import continue_run
from service.runs.targets import OpenAICompatible

from ..conftest import ALSO_REMOTE, BASE_URL, EMBEDDED_ONLY, Service, dump, graphs_over, restore
from ..judgments.test_judgments_api import probes
from ..pages_browser import keep_screenshot
from .test_reports_api import BODY, ID

pytestmark = EMBEDDED_ONLY
REPORTS = f"/evaluations/{ID}/reports"
EVALUATION = f"{BASE_URL}evaluations/{ID}"


def _report(service: Service) -> dict:
    made = service.http.post(REPORTS, json=BODY, headers=service.auth("theo"))
    assert made.status_code == 201, made.text
    return made.json()


def test_the_report_page_shows_a_sponsor_coverage_apart_failures_gaps_and_charts(
    attested: Service, browser_page: Page
) -> None:
    _report(attested)
    page = browser_page  # a console error (a CSP violation, a failed load, a script error) fails the test
    page.goto(f"{attested.url}{REPORTS}/1/page")
    text = page.evaluate
    expect(page.locator("h1")).to_have_text(["Evaluation report 1: bed-net advice chatbot"])
    expect(page.locator("#coverage-value")).to_have_text("50%")
    expect(page.locator("#coverage-value")).to_be_in_viewport()  # the headline figure, without scrolling
    coverage = page.locator("#coverage").inner_text()
    assert "Covered weight 3 of 6" in coverage and "2 of 3 applicable criteria" in coverage
    assert "passed" not in coverage and "failed" not in coverage  # performance is not in the coverage box
    performance = page.locator("#performance").inner_text()
    assert "passed\t1\t50%\t1\t33.33%" in performance and "failed\t1\t50%\t2\t66.67%" in performance
    failures = page.locator("table.failures")
    expect(failures).to_be_visible()
    expect(failures).to_contain_text("R1: Advice on using a bed net must be correct and safe.")
    expect(failures).to_contain_text("washing")
    expect(failures).to_contain_text("annie")  # the domain expert who attested the failure
    untested = text("[...document.querySelectorAll('h2#untested + p + table tr')].map(r => r.innerText).join('\\n')")
    assert "hanging" in untested and "where" not in untested and "washing" not in untested
    assert (
        text("[...document.querySelectorAll('img.chart')].map(i => [i.src.slice(0, 26), i.naturalWidth])")
        == [["data:image/svg+xml;base64,", 720]] * 3
    )
    for chart in page.locator("img.chart").all():  # each drawn whole on the screen, with a text alternative
        chart.scroll_into_view_if_needed()
        expect(chart).to_be_in_viewport(ratio=0.99)  # whole, but for a sub-pixel edge the layout may round off
        expect(chart).to_have_attribute("alt", re.compile(r"\w"))
    # No request leaves the service: every loaded resource is on it (or a data: chart).
    loaded = text("performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(name.startswith(attested.url) for name in loaded), loaded
    sources = text(
        "[...document.querySelectorAll('[src],link[href]')].map(e => e.getAttribute('src') || e.getAttribute('href'))"
    )
    assert all(s.startswith(("/", "data:")) for s in sources), sources
    # The drill-down reaches each case's conversation in the record.
    cases = text(
        "[...document.querySelectorAll('#drill-down ~ details ul.cases .case a')].map(a => a.getAttribute('href'))"
    )
    assert cases and all(case.startswith(f"/evaluations/{ID}/runs/1/cases/") for case in cases)
    # The blocked share per consistency rule, as the plan's derivation counted it (GET …/plans/1/blocking).
    blocked = text("[...document.querySelectorAll('h2#blocking + p + table tr')].map(r => r.innerText).join('\\n')")
    rules = attested.http.get(f"/evaluations/{ID}/plans/1/blocking").json()["rules"]
    assert rules and all(f"{r['blocked']:,}\t{100 * r['shareOfBlocked']:.1f}" in blocked for r in rules), (
        blocked,
        rules,
    )
    keep_screenshot(page, "report")
    # Printable: the print stylesheet hides the navigation and keeps the figures.
    page.emulate_media(media="print")
    expect(page.locator("nav")).to_be_hidden()
    expect(page.locator("#coverage")).to_be_visible()


def test_the_runs_page_links_to_its_report(attested: Service) -> None:
    _report(attested)
    page = attested.http.get(f"/evaluations/{ID}/runs/1", headers={"Accept": "text/html"})
    assert page.status_code == 200
    assert f'href="{REPORTS}/1"' in page.text
    # following that link, a browser gets the report's page; an RDF client still gets the report's graph
    report = attested.http.get(f"{REPORTS}/1", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert report.status_code == 200 and "Coverage" in report.text and "<svg" not in report.text
    assert 'src="data:image/svg+xml' in report.text
    turtle = attested.http.get(f"{REPORTS}/1", headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and "epo:Report" in turtle.text


def _attest_hanging(service: Service) -> None:
    late = service.http.post(
        f"/evaluations/{ID}/runs/1/attestations",
        headers=service.auth("annie"),
        json={
            "criterion": "hanging",
            "outcome": "passed",
            "rationale": "checked later",
            "sufficiency": "sufficient",
            "appropriateness": "appropriate",
        },
    )
    assert late.status_code == 201, late.text


def test_a_baseline_comparison_states_changes_and_deltas_and_a_version_comparison_needs_another_version(
    attested: Service, browser_page: Page
) -> None:
    _report(attested)
    _attest_hanging(attested)
    _report(attested)
    url = f"{REPORTS}/2/comparisons/baseline/{ID}/1"
    compared = attested.http.get(url, headers={"Accept": "application/json"})
    assert compared.status_code == 200, compared.text
    body = compared.json()
    assert [(c["identifier"], c["referenceOutcome"], c["outcome"], c["change"]) for c in body["criteria"]] == [
        ("washing", "failed", "failed", "still failing"),
        ("hanging", "untested", "passed", "newly covered"),
        ("where", "passed", "passed", "unchanged"),
    ]  # in the order of CHANGES
    deltas = {d["figure"]: d for d in body["deltas"]}
    assert deltas["coverage"] == {"figure": "coverage", "reference": "0.5", "current": "1", "difference": "+0.5"}
    # passed: 1 of 2 covered criteria before, 2 of 3 now; by weight 1 of 3 before, 4 of 6 now
    assert deltas["passed count"]["difference"] == "+1"
    assert deltas["passed weighted fraction"]["current"] == "0.666666666667"
    assert deltas["failed fraction"]["difference"] == "-0.166666666667"  # 1/3 - 1/2

    turtle = attested.http.get(url, headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and "BaselineComparison" in turtle.text and "newly covered" in turtle.text
    jsonld = attested.http.get(url, headers={"Accept": "application/ld+json"})
    assert jsonld.status_code == 200 and "json" in jsonld.headers["content-type"]
    assert f"{EVALUATION}/reports/2/comparisons/baseline/{ID}/1" in jsonld.text  # compacted with the published context
    browser_page.goto(f"{attested.url}{url}")
    expect(browser_page.locator("h1")).to_have_text(["Baseline comparison: report 2 against report 1"])
    rows = browser_page.evaluate("[...document.querySelectorAll('table.changes tr')].slice(1).map(r => r.className)")
    assert rows == ["change-still-failing", "change-newly-covered", "change-unchanged"]

    same_version = attested.http.get(f"{REPORTS}/2/comparisons/version/{ID}/1", headers={"Accept": "application/json"})
    assert same_version.status_code == 409
    assert [e.split(": ")[0] for e in same_version.json()["errors"]] == ["target version"]


@ALSO_REMOTE
def test_reports_with_another_envelope_digest_and_judge_version_are_refused_naming_each(attested: Service) -> None:
    """Report 2's envelope digest and one judge's version are changed in its graph (as a report on another envelope,
    judged by another version, would state them): the comparison is a 409 naming both, and nothing else."""
    first = _report(attested)
    _report(attested)
    judge = next(j["judge"] for j in first["judges"] if j["version"] is not None)
    attested.store.run_update(f"""
        PREFIX epo: <https://w3id.org/ob-caie/epo/>
        WITH <{EVALUATION}/reports/2>
        DELETE {{ ?report epo:envelopeDigest ?digest . <{judge}> epo:version ?version }}
        INSERT {{ ?report epo:envelopeDigest "sha256:another" . <{judge}> epo:version "9.9" }}
        WHERE {{ ?report epo:envelopeDigest ?digest . <{judge}> epo:version ?version }}""")
    refused = attested.http.get(f"{REPORTS}/2/comparisons/baseline/{ID}/1", headers={"Accept": "application/json"})
    assert refused.status_code == 409, refused.text
    errors = refused.json()["errors"]
    assert [e.split(": ")[0] for e in errors] == ["envelope digest", f"judge version of {judge}"]
    assert errors[0].startswith("envelope digest: sha256:another in the current report,")
    assert "9.9 in the current report" in errors[1]
    assert "not compatible" in refused.json()["detail"]


def test_caie_compare_prints_the_comparison_or_the_reasons(
    attested: Service, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _report(attested)
    _attest_hanging(attested)
    _report(attested)
    copy = EmbeddedStore(tmp_path / "store")
    restore(copy, dump(attested.store))
    copy.close()
    where = ["--data-dir", str(tmp_path / "store"), "--base-url", BASE_URL]
    assert main(["compare", ID, "2", ID, "1", "--kind", "baseline", *where]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["comparison"] == f"{EVALUATION}/reports/2/comparisons/baseline/{ID}/1"
    assert printed["counts"]["newly covered"] == 1 and printed["counts"]["still failing"] == 1
    assert main(["compare", ID, "2", ID, "1", "--kind", "version", *where]) == 1
    assert [e.split(": ")[0] for e in json.loads(capsys.readouterr().out)["errors"]] == ["target version"]


def test_a_version_comparison_of_two_target_versions_run_alike(attested: Service, chat_server: str) -> None:
    """Run 2 of the same plan, with the same settings, on another version of the target (the demonstration chatbot
    behind its OpenAI-compatible API, another model release), determined and attested like run 1 but with washing
    passing now: compatible, washing is fixed, coverage unchanged (hanging is untested in both)."""
    _report(attested)
    settings = attested.http.get(f"/evaluations/{ID}/runs/1", headers={"Accept": "application/json"}).json()["settings"]
    execution = ExecutionSettings(**settings)
    target = OpenAICompatible(f"{chat_server}/demo/v1", "bednets-chatbot 0.2.0")
    theo = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))
    graphs = graphs_over(attested.store)
    run = start_run(
        graphs,
        ID,
        1,
        target.version,
        execution,
        theo,
        outside_boundary="the next release, compared with run 1 before the scope moves to it",
    )
    assert continue_run(graphs, ID, run.number, target, execution, theo).run.traces == 6
    judged = attested.http.post(f"/evaluations/{ID}/runs/2/rule-judgments", headers=attested.auth("theo"))
    assert judged.status_code == 201, judged.text
    made = attested.http.post(
        f"/evaluations/{ID}/runs/2/determinations",
        headers=attested.auth("nora"),
        json={
            "determinations": [
                {"probe": p["probe"], "criterion": c, "outcome": "passed", "rationale": "passed on reading"}
                for c in ("washing", "where")
                for p in probes(attested, c)
            ]
        },
    )
    assert made.status_code == 201, made.text
    for criterion in ("washing", "where"):
        attested_now = attested.http.post(
            f"/evaluations/{ID}/runs/2/attestations",
            headers=attested.auth("annie"),
            json={
                "criterion": criterion,
                "outcome": "passed",
                "rationale": "as determined",
                "sufficiency": "sufficient",
                "appropriateness": "appropriate",
            },
        )
        assert attested_now.status_code == 201, attested_now.text
    second = attested.http.post(REPORTS, json={**BODY, "run": 2}, headers=attested.auth("theo"))
    assert second.status_code == 201, second.text

    compared = attested.http.get(f"{REPORTS}/2/comparisons/version/{ID}/1", headers={"Accept": "application/json"})
    assert compared.status_code == 200, compared.text
    body = compared.json()
    assert [(c["identifier"], c["referenceOutcome"], c["outcome"], c["change"]) for c in body["criteria"]] == [
        ("washing", "failed", "passed", "fixed"),
        ("hanging", "untested", "untested", "unchanged"),
        ("where", "passed", "passed", "unchanged"),
    ]
    deltas = {d["figure"]: d["difference"] for d in body["deltas"]}
    assert (deltas["coverage"], deltas["failed count"], deltas["passed count"]) == ("0", "-1", "+1")
    assert deltas["passed weighted fraction"] == "+0.666666666667"  # 1 of 3 before, 3 of 3 now
