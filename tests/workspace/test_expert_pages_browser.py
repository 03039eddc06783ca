"""The domain expert's workspace pages in Chromium (tests/pages_browser.py), one test per page on the bed-nets record
expert_pages.py builds: axe-core finds no serious or critical violation, every control is labelled, the page
fits a 1280-pixel laptop and a 390-pixel phone with no word in a table split across lines, nothing logs an error; the
page's action is taken as a person takes it (the attestation with the keyboard alone) and the record shows it.
Screenshots are kept as artifacts.
"""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, ViewportSize

from ..conftest import EMBEDDED_ONLY, Service
from ..pages_browser import (
    LAPTOP,
    PHONE,
    assert_accessible,
    assert_fits_width,
    assert_labelled,
    assert_words_whole,
    keep_screenshot,
)
from ..plan.test_second_domain_plan import ID
from .expert_pages import CRITERIA, PEOPLE, WORKSPACE, approvals, attestations, people_site

pytestmark = EMBEDDED_ONLY


def open_signed_in(new_page: Callable[[ViewportSize], Page], url: str, agent: str, path: str) -> Page:
    """A laptop page signed in through the sign-in form, on ``path``."""
    browser = new_page(LAPTOP)
    browser.goto(f"{url}/sign-in?next={path}")
    browser.fill("#username", agent)
    browser.fill("#password", next(p["password"] for p in PEOPLE if p["agent"] == agent))
    with browser.expect_navigation():
        browser.keyboard.press("Enter")
    assert browser.url == f"{url}{path}"
    return browser


def checked(browser: Page, name: str) -> None:
    """axe-core, labels, the width and whole words in tables on a laptop and a phone; the screenshots kept."""
    assert_accessible(browser)
    assert_labelled(browser)
    assert_fits_width(browser)
    assert_words_whole(browser)
    keep_screenshot(browser, name)
    browser.set_viewport_size(PHONE)
    assert_fits_width(browser)
    assert_words_whole(browser)
    keep_screenshot(browser, f"{name}-phone")
    browser.set_viewport_size(LAPTOP)


def test_the_envelope_page_in_a_browser(
    drafted: Service, app_slot: tuple, new_page: Callable[[ViewportSize], Page]
) -> None:
    with people_site(drafted, app_slot) as url:
        browser = open_signed_in(new_page, url, "annie", f"{WORKSPACE}/envelope")
        checked(browser, "expert-envelope")
        form = browser.locator(f"#relevance-{CRITERIA[0]} form")
        form.get_by_label("relevant", exact=True).check()
        form.get_by_label(f"Note on {CRITERIA[0]}").fill("hanging is what protects")
        with browser.expect_navigation():
            form.get_by_role("button").click()
        assert browser.locator(".notice").inner_text() == f"Recorded: the relevance of {CRITERIA[0]}."
        assert approvals(drafted)[0]["comment"] == "hanging is what protects"


def test_the_scenarios_page_in_a_browser(
    planned: Service, app_slot: tuple, new_page: Callable[[ViewportSize], Page]
) -> None:
    with people_site(planned, app_slot) as url:
        browser = open_signed_in(new_page, url, "annie", f"{WORKSPACE}/scenarios")
        checked(browser, "expert-scenarios")
        browser.get_by_label("Status").select_option("blocked")
        with browser.expect_navigation():
            browser.get_by_role("button", name="Show").click()
        assert browser.locator(".blocked").count() > 0 and browser.locator("form.act").count() == 0


def test_the_plan_pages_in_a_browser(
    planned: Service, app_slot: tuple, new_page: Callable[[ViewportSize], Page]
) -> None:
    with people_site(planned, app_slot) as url:
        browser = open_signed_in(new_page, url, "annie", f"{WORKSPACE}/plans")
        checked(browser, "expert-plans")
        with browser.expect_navigation():
            browser.get_by_role("link", name="Plan 1", exact=True).click()
        checked(browser, "expert-plan")
        with browser.expect_navigation():
            browser.get_by_role("button", name="Approve plan 1 as shown here").click()
        assert browser.locator(".notice").inner_text() == "Recorded: the plan's approval."
        assert planned.http.get(f"/evaluations/{ID}/plans/1", headers={"Accept": "application/json"}).json()["approved"]


def test_the_criteria_pages_in_a_browser_attesting_with_the_keyboard(
    judged: Service, app_slot: tuple, new_page: Callable[[ViewportSize], Page]
) -> None:
    with people_site(judged, app_slot) as url:
        browser = open_signed_in(new_page, url, "annie", f"{WORKSPACE}/criteria")
        checked(browser, "expert-criteria")
        with browser.expect_navigation():
            browser.get_by_role("link", name="hanging", exact=True).click()
        checked(browser, "expert-criterion")
        form = browser.locator("#attest")
        form.get_by_label("cannot tell").focus()
        browser.keyboard.press("Space")  # the outcome
        browser.keyboard.press("Tab")
        browser.keyboard.press("Space")  # the evidence: sufficient, then the next one down
        browser.keyboard.press("ArrowDown")
        browser.keyboard.press("Tab")
        browser.keyboard.press("Space")  # the test: appropriate
        browser.keyboard.press("Tab")
        browser.keyboard.type("Two replies only: too few to tell.")
        browser.keyboard.press("Tab")
        with browser.expect_navigation():
            browser.keyboard.press("Enter")
        assert browser.locator(".notice").inner_text() == "Recorded: the attestation."
        (made,) = attestations(judged)
        assert (made["outcome"], made["sufficiency"], made["appropriateness"], made["rationale"]) == (
            "cantTell",
            "Insufficient",
            "Appropriate",
            "Two replies only: too few to tell.",
        )
        checked(browser, "expert-criterion-attested")
