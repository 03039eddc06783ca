"""The sponsor's and organizational expert's pages (issue 24 §6), over real HTTP on the worked example: a report made
on the reports page, signed off and accepted on its page, is each person's in the REST record and at /sparql; each
form is offered only to the role that may use it, and posting it without the role, or without the CSRF token, is
403 with nothing recorded; a refused form says why (a fitness the record contradicts, no such run, a report that no
longer verifies) with the domain's status. Then in Chromium: the reports page and the report page pass axe, labels,
console and width checks on a laptop and a phone, and the domain expert signs off with the keyboard alone.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
from playwright.sync_api import Page, ViewportSize
from pyoxigraph import Literal

from service.core.store.base import bind

from ..api.workspace import hidden
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..pages_browser import LAPTOP, PHONE, assert_accessible, assert_fits_width, assert_labelled, keep_screenshot
from .example_pages import EVALUATION, PASSWORDS, by_id, signed_in, waiting_links

pytestmark = EMBEDDED_ONLY  # the forms call the reports domain, whose store transport tests/reports covers
REPORTS = f"{EVALUATION}/workspace/reports"
PAGE = f"{EVALUATION}/reports/2/page"
SIGN_OFF, ACCEPTANCE = f"{REPORTS}/2/sign-off", f"{REPORTS}/2/acceptance"
SIGNING = "signing screen-only"
"""The class of the sign-off and acceptance forms."""
ATTRIBUTED = bind(
    """
    PREFIX prov: <http://www.w3.org/ns/prov#>
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    SELECT ?kind ?agent ?statement WHERE {
      VALUES ?kind { epo:ReportSignOff epo:ReportAcceptance }
      GRAPH ?g { ?signed a ?kind ; prov:wasAttributedTo ?agent ; epo:statement ?statement }
      FILTER(STRSTARTS(STR(?signed), ?reportTwo))
    } ORDER BY ?kind""",
    {"reportTwo": Literal(f"{BASE_URL}evaluations/measles/reports/2/")},
)


def report(service: Service, number: int) -> dict:
    answer = service.http.get(f"{EVALUATION}/reports/{number}", headers={"Accept": "application/json"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def reports(service: Service) -> list[dict]:
    return service.http.get(f"{EVALUATION}/reports", headers={"Accept": "application/json"}).json()["reports"]


def made_over_rest(service: Service) -> None:
    made = service.http.post(
        f"{EVALUATION}/reports", json={"run": 1, "fitness": "NotFit"}, headers=service.auth("theo")
    )
    assert made.status_code == 201, made.text


def test_a_report_made_signed_off_and_accepted_on_the_pages_is_each_persons(example: Service) -> None:
    with signed_in(example.url, "theo") as theo:
        page = theo.get(REPORTS)
        assert page.status_code == 200 and 'class="make-report"' in page.text
        made = theo.post(
            REPORTS,
            data={
                "csrf_token": hidden(page.text, "csrf_token", "make-report"),
                "run": "1",
                "fitness": "NotFit",
                "limitations": "the demonstration chatbot only\n\n",
                "recommendations": "test c03 again after the fix",
            },
        )
        assert (made.status_code, made.headers["location"]) == (303, f"{REPORTS}?made=2#report-2")
        assert by_id(theo.get(made.headers["location"]).text, "made-notice").startswith("Report 2 is made, a draft")
    made_report = report(example, 2)
    assert (
        made_report["author"],
        made_report["status"],
        made_report["limitations"],
        made_report["recommendations"],
    ) == (f"{BASE_URL}agents/theo", "draft", ["the demonstration chatbot only"], ["test c03 again after the fix"])
    assert made_report["fitness"].endswith("NotFit")

    # each person is offered the form of their role only, and only when the report is at that step
    with signed_in(example.url, "dana") as dana:
        page = dana.get(PAGE).text
        assert f'action="{ACCEPTANCE}"' not in page and "signs the report off before you can accept" in page
    with signed_in(example.url, "vera") as vera:
        assert 'class="signing' not in vera.get(PAGE).text
    with signed_in(example.url, "annie") as annie:
        page = annie.get(PAGE).text
        assert f'action="{SIGN_OFF}"' in page and f'action="{ACCEPTANCE}"' not in page
        signed = annie.post(
            SIGN_OFF, data={"csrf_token": hidden(page, "csrf_token", SIGNING), "comment": "the figures hold"}
        )
        assert (signed.status_code, signed.headers["location"]) == (303, f"{PAGE}?done=sign-off#sign-offs")
        shown = annie.get(signed.headers["location"]).text
        assert by_id(shown, "signing-notice") == "Your sign-off is recorded: the report is signed off."
        assert by_id(shown, "sign-off").startswith("annie, ") and by_id(shown, "sign-off").endswith(
            ": the figures hold"
        )
        assert f'action="{SIGN_OFF}"' not in shown  # signed once
    assert report(example, 2)["signOff"]["agent"] == f"{BASE_URL}agents/annie"

    with signed_in(example.url, "dana") as dana:
        assert waiting_links(dana.get("/").text) == [("acceptance of report 2", PAGE)]
        page = dana.get(PAGE).text
        accepted = dana.post(
            ACCEPTANCE, data={"csrf_token": hidden(page, "csrf_token", SIGNING), "comment": "accepted for the pilot"}
        )
        assert (accepted.status_code, accepted.headers["location"]) == (303, f"{PAGE}?done=acceptance#sign-offs")
        shown = dana.get(accepted.headers["location"]).text
        assert by_id(shown, "signing-notice") == "Your acceptance is recorded: the report is final."
        assert by_id(shown, "acceptance").startswith("dana, ") and 'class="signing' not in shown
        assert waiting_links(dana.get("/").text) == []
    final = report(example, 2)
    assert (final["status"], final["acceptance"]["agent"], final["acceptance"]["comment"]) == (
        "final",
        f"{BASE_URL}agents/dana",
        "accepted for the pilot",
    )
    rows = httpx.get(
        f"{example.url}/sparql", params={"query": ATTRIBUTED}, headers={"Accept": "application/sparql-results+json"}
    ).json()["results"]["bindings"]
    assert [(r["kind"]["value"].rsplit("/", 1)[-1], r["agent"]["value"], r["statement"]["value"]) for r in rows] == [
        ("ReportAcceptance", f"{BASE_URL}agents/dana", "accepted for the pilot"),
        ("ReportSignOff", f"{BASE_URL}agents/annie", "the figures hold"),
    ]


def test_without_the_role_or_the_token_nothing_is_recorded_and_a_refused_form_says_why(example: Service) -> None:
    made_over_rest(example)
    for agent, refused in (
        ("vera", (SIGN_OFF, ACCEPTANCE, REPORTS)),
        ("dana", (SIGN_OFF, REPORTS)),
        ("theo", (SIGN_OFF, ACCEPTANCE)),
        ("nora", (SIGN_OFF, REPORTS)),
    ):
        with signed_in(example.url, agent) as browser:
            assert 'class="make-report"' not in browser.get(REPORTS).text or REPORTS not in refused
            token = browser.csrf()
            for path in refused:
                posted = browser.post(path, data={"csrf_token": token, "run": "1", "fitness": "NotFit"})
                assert posted.status_code == 403 and "lacks the role" in posted.text, (agent, path, posted.text)
    with signed_in(example.url, "annie") as annie:
        for token in (None, "not-the-token"):
            posted = annie.post(SIGN_OFF, data={"comment": "x"} | ({"csrf_token": token} if token else {}))
            assert posted.status_code == 403 and "CSRF token" in posted.text
    assert [(r["number"], r["status"]) for r in reports(example)] == [(1, "final"), (2, "draft")]
    assert report(example, 2)["signOff"] is None

    with signed_in(example.url, "theo") as theo:
        token = theo.csrf()
        for sent, status, said in (
            ({"run": "1", "fitness": "FitToDeploy", "limitations": "kept in the form"}, 422, "caie-spec S8"),
            ({"run": "one", "fitness": "NotFit"}, 422, "Run: Input should be a valid integer"),
            ({"run": "9", "fitness": "NotFit"}, 404, "has no run 9"),
            ({"run": "1", "fitness": ""}, 422, "Fitness for deployment: Input should be"),
        ):
            posted = theo.post(REPORTS, data={"csrf_token": token, **sent})
            assert posted.status_code == status and said in by_id(posted.text, "make-error"), posted.text
        assert (
            ">kept in the form</textarea>"
            in theo.post(
                REPORTS,
                data={"csrf_token": token, "run": "1", "fitness": "FitToDeploy", "limitations": "kept in the form"},
            ).text
        )
    with signed_in(example.url, "annie") as annie:
        posted = annie.post(SIGN_OFF, data={"csrf_token": annie.csrf(), "comment": "x" * 10_001})
        assert posted.status_code == 422 and by_id(posted.text, "sign-off-error").startswith("Statement: ")
    assert len(reports(example)) == 2 and report(example, 2)["signOff"] is None


def test_a_report_that_no_longer_verifies_is_refused_with_the_domains_reason(example: Service) -> None:
    made_over_rest(example)
    # a new envelope version changes the head graph both reports were computed from
    assert example.http.post(f"{EVALUATION}/envelope/versions", headers=example.auth("theo")).status_code == 201
    with signed_in(example.url, "annie") as annie:
        page = annie.get(PAGE).text
        refused = annie.post(
            SIGN_OFF, data={"csrf_token": hidden(page, "csrf_token", SIGNING), "comment": "looks right"}
        )
        assert refused.status_code == 409
        reason = by_id(refused.text, "sign-off-error")
        assert reason.startswith("report 2 no longer verifies against the record, so it cannot be signed: ")
        assert f"graph {BASE_URL}evaluations/measles: stored" in reason and ">looks right</textarea>" in refused.text
        listed = annie.get(REPORTS).text
        for number in (1, 2):
            assert "does not verify: 1 of the graphs it was computed from changed since" in by_id(
                listed, f"report-{number}"
            )
        checked = by_id(annie.get(f"{REPORTS}?verify=2").text, "verification")
    assert report(example, 2)["signOff"] is None
    verification = example.http.get(f"{EVALUATION}/reports/2/verify").json()
    assert verification["holds"] is False and f"does not verify: {len(verification['differences'])} of its" in checked
    assert all(difference in checked for difference in verification["differences"][:20])


def test_the_reports_and_report_pages_in_a_browser(example: Service, new_page: Callable[[ViewportSize], Page]) -> None:
    """axe (no serious or critical violation), every control labelled, no console error, no sideways scrolling, on a
    laptop and a phone; the domain expert signs report 2 off with the keyboard alone."""
    made_over_rest(example)
    for screen in (LAPTOP, PHONE):
        page = new_page(screen)
        size = screen["width"]
        page.goto(f"{example.url}/sign-in?next={REPORTS}")
        page.get_by_label("Username").fill("annie")
        page.get_by_label("Password").fill(PASSWORDS["annie"])
        page.get_by_label("Password").press("Enter")
        page.wait_for_url(f"{example.url}{REPORTS}")
        for name, path in (("reports", REPORTS), ("report-page", PAGE)):
            if path != REPORTS:
                page.goto(f"{example.url}{path}")
            keep_screenshot(page, f"workspace-{name}-{size}")
            for check in (assert_fits_width, assert_accessible, assert_labelled):
                check(page)
    # with the keyboard: to the statement, type it, Tab to the button, Enter
    page.get_by_label("Statement").focus()
    page.keyboard.type("the figures hold")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Sign off report 2"
    page.keyboard.press("Enter")
    page.wait_for_url(f"{example.url}{PAGE}?done=sign-off#sign-offs")
    assert page.locator("#signing-notice").inner_text() == "Your sign-off is recorded: the report is signed off."
    keep_screenshot(page, "workspace-report-signed-off-390")
    assert report(example, 2)["signOff"]["comment"] == "the figures hold"
