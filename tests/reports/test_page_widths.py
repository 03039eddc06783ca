"""The worked example's report page, its failure-point map and the evaluation's own page in a real Chromium
(tests/pages_browser.py), on a 1280-pixel laptop screen and a 390-pixel phone (issue 24): none needs scrolling
sideways (a wide table scrolls in its own box), no word in a table is split across lines, axe-core finds no serious
or critical violation (links in text are told apart by more than colour), and no page logs an error. Each page's
screenshot is kept as a test artifact."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, ViewportSize
from pyoxigraph import Quad

from ..conftest import EMBEDDED_ONLY, Service, restore
from ..pages_browser import LAPTOP, PHONE, assert_accessible, assert_fits_width, assert_words_whole, keep_screenshot

pytestmark = EMBEDDED_ONLY
PAGES = {
    "report": "/evaluations/measles/reports/1/page",
    "failure-map": "/evaluations/measles/reports/1/failure-map",
    "evaluation": "/evaluations/measles",
}


@pytest.mark.parametrize("screen", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_report_its_map_and_the_evaluation_fit_the_screen_and_pass_axe(
    service: Service, worked_example_quads: list[Quad], new_page: Callable[[ViewportSize], Page], screen: ViewportSize
) -> None:
    restore(service.store, worked_example_quads)
    page = new_page(screen)
    for name, path in PAGES.items():
        answer = page.goto(f"{service.url}{path}")
        assert answer is not None and answer.status == 200, path
        keep_screenshot(page, f"{name}-{screen['width']}")
        assert_fits_width(page)
        assert_words_whole(page)
        assert_accessible(page)
    # the map is reached from the report page by its link
    page.goto(f"{service.url}{PAGES['report']}")
    page.get_by_role("link", name="failure-point map").first.click()
    assert page.url.endswith(PAGES["failure-map"])
    assert page.get_by_role("heading", level=1).inner_text() == "Failure-point map: report 1"
