"""The workspace's home and an evaluation's overview (issue 24 §2), over real HTTP on the worked example: anyone sees
each evaluation with its stage and the linked-data entry points; each signed-in person sees what waits for them,
item for item what the REST record says waits for their role (a viewer nothing); the overview the evaluation's IRI
gives a browser states what the IRI's Turtle and JSON-LD state, and the plans, runs, reports and approvals as their
REST routes list them. Then in Chromium: both pages pass axe, labels, console and width checks on a laptop and a
phone, with screenshots kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape

from playwright.sync_api import Page, ViewportSize
from pyld import jsonld
from pyoxigraph import Literal, NamedNode, RdfFormat, Triple, parse

from ..api.test_dereference import context_loader
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..pages_browser import LAPTOP, PHONE, assert_accessible, assert_fits_width, assert_labelled, keep_screenshot
from .example_pages import EVALUATION, PASSWORDS, by_id, signed_in, waiting_links

pytestmark = (
    EMBEDDED_ONLY  # the pages read through the workspace's domain reads, whose transport tests/workspace covers
)
HTML = {"Accept": "text/html"}
JSON = {"Accept": "application/json"}
EPO = "https://w3id.org/ob-caie/epo/"
IRI = f"{BASE_URL}evaluations/measles"
LINKED_DATA = ("/graphs", "/query", "/sparql", "/dcat", "/.well-known/void", "/docs")


def rest(service: Service, path: str) -> dict:
    answer = service.http.get(path, headers=JSON)
    assert answer.status_code == 200, answer.text
    return answer.json()


def home_of(service: Service, agent: str) -> str:
    with signed_in(service.url, agent) as browser:
        page = browser.get("/")
        assert page.status_code == 200, page.text
        return page.text


def test_anyone_sees_each_evaluation_with_its_stage_and_the_linked_data(example: Service) -> None:
    page = example.http.get("/", headers=HTML)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    listed = rest(example, "/evaluations")["evaluations"]
    for evaluation in listed:
        assert f'<a href="/evaluations/{evaluation["id"]}">{evaluation["title"]}</a>' in page.text
    # the worked example's latest report (on its latest run) is accepted: the last stage of step 6
    (report,) = rest(example, f"{EVALUATION}/reports")["reports"]
    assert (report["status"], report["run"]) == ("final", rest(example, f"{EVALUATION}/runs")["runs"][-1]["run"])
    card = by_id(page.text, "evaluation-measles")
    assert "accepted step 6 of 6: report" in card and f"envelope v{listed[0]['envelope']['version']}" in card
    assert re.search(r'<li class="current" aria-current="step">report</li>', page.text)
    assert '<a href="/sign-in?next=/">Sign in</a>' in page.text and "Waiting for you" not in page.text
    for path in LINKED_DATA:
        assert f'href="{path}"' in page.text, path


def test_each_role_sees_what_the_record_says_waits_for_it_and_a_viewer_nothing(example: Service) -> None:
    made = example.http.post(
        f"{EVALUATION}/reports", json={"run": 1, "fitness": "NotFit"}, headers=example.auth("theo")
    )
    assert made.status_code == 201, made.text
    reports = rest(example, f"{EVALUATION}/reports")["reports"]
    to_sign = [
        (f"sign-off of report {r['number']}", f"{EVALUATION}/reports/{r['number']}/page")
        for r in reports
        if r["signOff"] is None
    ]
    assert [n for _, n in to_sign] == [f"{EVALUATION}/reports/2/page"]
    # the envelope is signed off and plan 1 approved and run: nothing else waits for the experts or the operator
    assert rest(example, f"{EVALUATION}/envelope")["status"]["signedOff"] is True
    assert [p["approved"] for p in rest(example, f"{EVALUATION}/plans")["plans"]] == [True]
    runs = rest(example, f"{EVALUATION}/runs")["runs"]
    assert [(r["cases"], r["executionErrors"]) for r in runs] == [(r["probes"], 0) for r in runs]
    # the cases that need a person, by the REST route: an annotator who declared no languages is offered all of them
    annotation = []
    for run in runs:
        needing = rest(example, f"{EVALUATION}/runs/{run['number']}/cases-needing-people")["cases"]
        annotation.append(
            (
                f"run {run['number']}: {len({c['probe'] for c in needing})} case(s) to determine",
                f"{EVALUATION}/workspace/annotate?run={run['number']}",
            )
        )
    expected = {"annie": to_sign, "dana": [], "theo": [], "nora": annotation, "vera": []}
    homes = {agent: home_of(example, agent) for agent in (*expected, "admin")}
    assert {agent: waiting_links(homes[agent]) for agent in expected} == expected
    assert waiting_links(homes["admin"]) == to_sign + annotation  # every role's, domain expert's first
    assert (
        by_id(homes["vera"], "nothing-waiting")
        == "Nothing waits for you now: your roles read the records and act on none."
    )
    assert by_id(homes["dana"], "nothing-waiting") == "Nothing waits for you now."
    assert "1 item waiting for you" in by_id(homes["annie"], "evaluation-measles")

    # the overview shows a person what waits for them there
    with signed_in(example.url, "annie") as browser:
        assert waiting_links(browser.get(EVALUATION).text) == to_sign

    # signed off (over REST), the report waits for the organizational expert's acceptance, no longer for the domain expert
    signed = example.http.post(f"{EVALUATION}/reports/2/sign-off", json={}, headers=example.auth("annie"))
    assert signed.status_code == 201, signed.text
    assert waiting_links(home_of(example, "dana")) == [("acceptance of report 2", f"{EVALUATION}/reports/2/page")]
    assert waiting_links(home_of(example, "annie")) == []


def _graph(text: str, media: RdfFormat) -> set[Triple]:
    return {q if isinstance(q, Triple) else q.triple for q in parse(text.encode(), format=media, base_iri=BASE_URL)}


def _one(graph: set[Triple], subject: str, predicate: str) -> str:
    (value,) = {t.object.value for t in graph if t.subject.value == subject and t.predicate.value == predicate}
    return value


def _all(graph: set[Triple], subject: str, predicate: str) -> list[str]:
    return sorted(t.object.value for t in graph if t.subject.value == subject and t.predicate.value == predicate)


def test_the_overview_states_what_the_evaluations_iri_states(example: Service) -> None:
    page = example.http.get(EVALUATION, headers=HTML)
    assert page.status_code == 200 and "Accept" in page.headers["vary"], page.text
    text = page.text
    turtle = example.http.get(EVALUATION, headers={"Accept": "text/turtle"})
    compacted = example.http.get(EVALUATION, headers={"Accept": "application/ld+json"})
    assert turtle.headers["content-type"].startswith("text/turtle")
    nquads = jsonld.to_rdf(
        compacted.json(), {"format": "application/n-quads", "documentLoader": context_loader(example)}
    )
    graphs = {"Turtle": _graph(turtle.text, RdfFormat.TURTLE), "JSON-LD": _graph(nquads, RdfFormat.N_QUADS)}
    assert rest(example, EVALUATION)["id"] == "measles"  # JSON still negotiates as before

    for name, g in graphs.items():
        assert by_id(text, "title") == _one(g, IRI, "http://purl.org/dc/terms/title"), name
        assert by_id(text, "identifier") == _one(g, IRI, "http://purl.org/dc/terms/identifier")
        assert by_id(text, "risk-question") == _one(g, IRI, EPO + "riskQuestion")
        target = _one(g, IRI, EPO + "testTarget")
        assert by_id(text, "target-name") == _one(g, target, "http://www.w3.org/2000/01/rdf-schema#label")
        assert by_id(text, "target-release") == _one(g, _one(g, IRI, EPO + "versionBoundary"), EPO + "targetVersion")
        assert by_id(text, "dso") == _one(g, IRI, EPO + "usesDso").rsplit("/", 1)[-1]
        assert by_id(text, "knowledge-graphs") == ", ".join(
            kg.rsplit("/", 1)[-1] for kg in _all(g, IRI, EPO + "usesKnowledgeGraph")
        )
        languages = _all(g, _one(g, IRI, EPO + "useBoundary"), EPO + "language")
        assert by_id(text, "languages") == ", ".join(language.rsplit("/", 1)[-1] for language in languages)
        envelope = _one(g, IRI, EPO + "operationalEnvelope")
        assert by_id(text, "envelope-version") == f"version {_one(g, envelope, EPO + 'version')}"
        assert by_id(text, "envelope-digest") == _one(g, envelope, EPO + "envelopeDigest")
        requirements = {
            t.subject.value for t in g if t.predicate.value == EPO + "partOfEnvelope" and t.object.value == envelope
        }
        criteria = {
            t.subject.value for t in g if t.predicate.value == EPO + "criterionOf" and t.object.value in requirements
        }
        in_scope = {c for c in criteria if Triple(NamedNode(c), NamedNode(EPO + "inScope"), Literal(True)) in g}
        assert (by_id(text, "requirements"), by_id(text, "criteria"), by_id(text, "in-scope")) == (
            str(len(requirements)),
            str(len(criteria)),
            str(len(in_scope)),
        )

    # the sign-off, plans, runs and reports: records of their own, as their REST routes list them
    (signed,) = [a for a in rest(example, f"{EVALUATION}/approvals")["approvals"] if a["kind"] == "envelope-sign-off"]
    assert (
        by_id(text, "envelope-sign-off") == f"signed off by {signed['agent']}, {signed['time'][:16].replace('T', ' ')}"
    )
    for plan in rest(example, f"{EVALUATION}/plans")["plans"]:
        row = re.search(rf'<tr><td><a href="{EVALUATION}/workspace/plans/{plan["number"]}">.*?</tr>', text, re.DOTALL)
        assert row and f'href="{EVALUATION}/plans/{plan["number"]}"' in row.group(0)
        assert f'<td class="number">{plan["probes"]}</td>' in row.group(0) and "<td>yes</td>" in row.group(0)
    for run in rest(example, f"{EVALUATION}/runs")["runs"]:
        assert f'<td class="number">{run["cases"]} of {run["probes"]}</td>' in text
    for report in rest(example, f"{EVALUATION}/reports")["reports"]:
        assert f'<a href="{EVALUATION}/reports/{report["number"]}/page">Report {report["number"]}</a>' in text
        assert {"final": "accepted: final"}[report["status"]] in text
    assert "accepted step 6 of 6: report" in by_id(text, "stage")

    # a new envelope version, not signed off: its assessments as the envelope's status states them
    assert example.http.post(f"{EVALUATION}/envelope/versions", headers=example.auth("theo")).status_code == 201
    status = rest(example, f"{EVALUATION}/envelope")["status"]
    text = example.http.get(EVALUATION, headers=HTML).text
    assert by_id(text, "envelope-version") == f"version {status['version']}" == "version 2"
    assert by_id(text, "envelope-digest") == status["digest"]
    given = list(status["relevance"].values())
    assert by_id(text, "relevance") == (
        f"{given.count('passed')} relevant, {given.count('failed')} not relevant, {given.count(None)} not assessed"
    )
    words = {"passed": "appropriate", "failed": "not appropriate", None: "not assessed"}
    assert (by_id(text, "dso-appropriateness"), by_id(text, "appropriateness")) == (
        words[status["dsoAppropriateness"]],
        words[status["appropriateness"]],
    )
    missing = text[text.index('id="envelope-missing"') :]
    assert [unescape(gap) for gap in re.findall(r"<li>(.*?)</li>", missing[: missing.index("</ul>")])] == (
        status["missingForSignOff"]
    )
    assert "envelope drafted step 2 of 6: envelope" in by_id(text, "stage")


def test_the_home_and_the_overview_in_a_browser(example: Service, new_page: Callable[[ViewportSize], Page]) -> None:
    """axe (no serious or critical violation), every control labelled, no console error, no sideways scrolling, on a
    laptop and a phone; the home anonymous and signed in, reached through the sign-in form with the keyboard."""
    for screen in (LAPTOP, PHONE):
        page = new_page(screen)
        size = screen["width"]
        page.goto(f"{example.url}/")
        keep_screenshot(page, f"workspace-home-anonymous-{size}")
        for check in (assert_fits_width, assert_accessible, assert_labelled):
            check(page)
        page.get_by_role("link", name="Sign in").first.click()
        page.get_by_label("Username").fill("nora")
        page.get_by_label("Password").fill(PASSWORDS["nora"])
        page.get_by_label("Password").press("Enter")
        page.wait_for_url(f"{example.url}/")
        assert page.get_by_role("heading", name="Waiting for you").is_visible()
        keep_screenshot(page, f"workspace-home-annotator-{size}")
        for check in (assert_fits_width, assert_accessible, assert_labelled):
            check(page)
        page.get_by_role("link", name=re.compile("^Measles information chatbot")).first.click()
        page.wait_for_url(f"{example.url}{EVALUATION}")
        assert page.get_by_role("heading", level=1).inner_text().startswith("Measles information chatbot")
        keep_screenshot(page, f"workspace-overview-{size}")
        for check in (assert_fits_width, assert_accessible, assert_labelled):
            check(page)
