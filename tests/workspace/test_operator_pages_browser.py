"""The evaluation operator's pages in Chromium (tests/pages_browser.py, issue 24 §5): a run started from the runs
page, whose run page follows it to its end without a reload; then a run with execution errors, some retried, on a
phone. Both pages pass axe, labels, console and width checks on a laptop and a phone; screenshots are kept as
artifacts. The same pages over HTTP: test_operator_run_start_pages.py, test_operator_run_errors_pages.py.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from caie_vaccine.demo import DEMO_VERSION, DemoChatbot
from playwright.sync_api import Page, ViewportSize, expect

from service.core.config import Credential
from service.runs.cases import record_cases
from service.runs.model import ExecutionError, ExecutionSettings
from service.runs.records import plan_probes, start_run
from service.runs.retries import retry_errors

from ..conftest import EMBEDDED_ONLY, Service, graphs_over
from ..pages_browser import LAPTOP, PHONE, assert_accessible, assert_fits_width, assert_labelled, keep_screenshot
from ..plan.test_second_domain_plan import ID
from ..runs.test_run_record import PROBES
from ..servers import AppSlot
from .operator_pages import PASSWORDS, RUNS, pages

pytestmark = EMBEDDED_ONLY  # the pages call the runs domain, whose store transport tests/runs covers


THEO = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))


def sign_in_page(page: Page, url: str, agent: str, next_path: str) -> None:
    page.goto(f"{url}/sign-in?next={next_path}")
    page.fill("#username", agent)
    page.fill("#password", PASSWORDS[agent])
    page.click("form.sign-in button[type=submit]")
    page.wait_for_url(f"{url}{next_path}")


def checked(page: Page, name: str) -> None:
    assert_accessible(page)
    assert_labelled(page)
    assert_fits_width(page)
    keep_screenshot(page, name)


def test_the_run_page_follows_the_run_to_its_end_in_the_browser_on_a_laptop_and_a_phone(
    approved: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str], new_page: Callable[[ViewportSize], Page]
) -> None:
    graphs = graphs_over(approved.store)
    with pages(approved, app_slot, tokens) as url:
        laptop = new_page(LAPTOP)
        sign_in_page(laptop, url, "theo", RUNS)
        checked(laptop, "operator-runs-form")
        laptop.select_option("#plan", "1")
        laptop.check("input[name=kind][value=demo]")
        laptop.fill("#concurrency", "1")
        laptop.fill("#rate_per_second", "2")  # six probes over about three seconds: the page sees them come
        laptop.click("form.run-form button[type=submit]")
        laptop.wait_for_url(f"{url}{RUNS}/1?done=started")
        assert laptop.text_content("#run-state") == "running"
        laptop.evaluate("window.notReloaded = true")
        expect(laptop.locator("#run-state")).to_have_text("finished", timeout=60_000)
        assert laptop.evaluate("window.notReloaded === true")  # followed by the script, not by a reload
        assert laptop.text_content("#run-cases") == str(PROBES) and laptop.get_attribute(
            "#run-progress", "value"
        ) == str(PROBES)
        checked(laptop, "operator-run-finished")

        # a run with execution errors, recorded as a runner records them, for the widest tables on a phone: four
        # retried (answered), then two more (the run's latest errors, with the retry form)
        run = start_run(graphs, ID, 1, DEMO_VERSION, ExecutionSettings(), THEO)
        errors = [
            ExecutionError(
                probe=p.iri,
                target=DEMO_VERSION.fingerprint,
                kind="http_status",
                status=503,
                turn=1,
                attempts=3,
                message=f"POST https://chat.example.org/v1/chat/completions answered 503: {'upstream overloaded ' * 6}",
            )
            for p in plan_probes(graphs, ID, run.plan)
        ]
        record_cases(graphs, ID, run.number, errors[:4], THEO)
        with ThreadPoolExecutor(1) as thread:  # off Playwright's event loop: a retry runs its own
            thread.submit(retry_errors, graphs, ID, run.number, DemoChatbot(), ExecutionSettings(), THEO).result()
        record_cases(graphs, ID, run.number, errors[4:], THEO)
        phone = new_page(PHONE)
        sign_in_page(phone, url, "theo", f"{RUNS}/{run.number}")
        assert phone.locator("table.errors:not(.retried) tbody tr").count() == 2
        assert phone.locator("table.retried tbody tr").count() == 4 and phone.text_content("#run-state") == "finished"
        checked(phone, "operator-run-errors-phone")
        phone.goto(f"{url}{RUNS}")
        checked(phone, "operator-runs-phone")
