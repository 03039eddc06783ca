"""Pages as a person sees them: a real Chromium loads them from the running service (tests/pages_browser.py).

On the embedded backend only: a page is rendered from what the store answers, and the store interface is
checked on both backends elsewhere (tests/store, the HTTP API tests). A console error fails a test, which covers
Content-Security-Policy violations: a page whose script or style the policy blocked logs one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

import pytest
from playwright.sync_api import Page, ViewportSize, expect
from pyoxigraph import Quad

from ..conftest import Service
from ..pages_browser import PHONE, assert_accessible, assert_fits_width, assert_labelled, keep_screenshot
from ..test_envelope import load_spec

pytestmark = pytest.mark.parametrize("store", ["embedded"], indirect=True)


class _Headings(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_h1 = tag == "h1"

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.headings.append(data)
            self._in_h1 = False


def headings(html: str) -> list[str]:
    parser = _Headings()
    parser.feed(html)
    return parser.headings


def hrefs(page: Page) -> list[str]:
    return page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")


def test_term_page_links_to_its_neighbours(service: Service, spec_quads: list[Quad], browser_page: Page) -> None:
    load_spec(service.store, spec_quads)
    browser_page.goto(f"{service.url}/epo/AcceptanceCriterion")
    expect(browser_page.locator("h1")).to_have_text(["acceptance criterion"])
    superclass = next(
        link for link in hrefs(browser_page) if link.startswith("/epo/") and link != "/epo/AcceptanceCriterion"
    )
    browser_page.locator(f'main a[href="{superclass}"]').first.click()
    expect(browser_page).to_have_url(service.url + superclass)
    expect(browser_page.locator("h1")).not_to_have_text("")


def test_catalog_page_lists_every_graph(service: Service, spec_quads: list[Quad], browser_page: Page) -> None:
    load_spec(service.store, spec_quads)
    browser_page.goto(f"{service.url}/graphs")
    expect(browser_page.locator("h1")).to_have_text(["Graphs"])
    for graph in ("/graphs/ontologies/epo", "/graphs/dso/vaccine-education", "/graphs/kg/kenya"):
        expect(browser_page.locator(f'a[href="{graph}"]').first).to_be_visible()
    assert_accessible(browser_page)


PAGES = {
    "/epo/AcceptanceCriterion": "acceptance criterion",
    "/doc/ontologies/epo": "OB-CAIE Evaluation Process Ontology (EPO)",
    "/doc/kg/kenya": "OB-CAIE context knowledge graph: Kenya",
    "/query": "Query",
}


def test_term_index_and_query_pages_render_styled_and_fit_a_laptop_and_a_phone(
    service: Service, spec_quads: list[Quad], new_page: Callable[[ViewportSize], Page]
) -> None:
    load_spec(service.store, spec_quads)
    laptop, phone = new_page(), new_page(PHONE)
    for path, heading in PAGES.items():
        laptop.goto(service.url + path)
        expect(laptop.locator("h1")).to_have_text([heading])
        # The stylesheet applied (a blocked one would leave the body as wide as the window).
        assert laptop.evaluate("getComputedStyle(document.body).maxWidth") != "none"
        expect(laptop.locator("nav a.home")).to_be_in_viewport()
        assert_fits_width(laptop)
        keep_screenshot(laptop, "page" + path.replace("/", "-"))
        phone.goto(service.url + path)
        expect(phone.locator("h1")).to_be_in_viewport()
        assert_fits_width(phone)
    laptop.goto(service.url + "/doc/ontologies/epo")
    assert laptop.locator(".diagram svg a").count() > 40, "the hierarchy is drawn"
    # A term page's "Turtle" link shows the term as Turtle (fetched with that Accept by alternates.js).
    laptop.goto(service.url + "/epo/AcceptanceCriterion")
    laptop.locator('a[data-accept="text/turtle"]').click()
    view = laptop.locator("#alternate-view")
    expect(view).to_contain_text("owl:Class")
    expect(view).to_be_visible()
    assert "@prefix" in view.text_content() and "acceptance criterion" in view.text_content()


def test_query_page_runs_an_example_and_shows_a_results_table(
    service: Service, spec_quads: list[Quad], browser_page: Page
) -> None:
    load_spec(service.store, spec_quads)
    graphs = len(service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"])
    page = browser_page
    page.goto(service.url + "/query")
    assert page.locator("button[data-example]").count() > 20
    page.locator("#catalogued-graphs summary").click()  # the example opens, as a person opens it
    page.locator('button[data-example="catalogued-graphs"]').click()
    expect(page.locator("#query-text")).to_have_value(re.compile("cat:kind"))
    page.locator("#query-form button[type=submit]").click()
    expect(page.locator("#results-table tbody tr")).to_have_count(graphs)
    expect(page.locator("#results-table th")).to_have_text(["?graph", "?kind", "?title", "?triples"])
    expect(page.locator("#query-status")).to_have_text(f"{graphs} rows")
    expect(page.locator("#results-table")).to_be_visible()
    assert_labelled(page)
    assert_accessible(page)
    keep_screenshot(page, "page-query-results")


def test_errors_are_pages_for_browsers_and_problems_for_programs(service: Service) -> None:
    for_browser = service.http.get("/epo/NoSuchTerm", headers={"Accept": "text/html,*/*;q=0.8"})
    assert for_browser.status_code == 404 and for_browser.headers["content-type"].startswith("text/html")
    assert headings(for_browser.text) == ["404 NotFound"] and "NoSuchTerm" in for_browser.text
    for_program = service.http.get("/epo/NoSuchTerm", headers={"Accept": "*/*"})
    assert for_program.status_code == 404 and for_program.headers["content-type"] == "application/problem+json"
    bad_page = service.http.get("/doc/ontologies/epo", params={"page": "x"}, headers={"Accept": "text/html"})
    assert bad_page.status_code == 400 and "page must be a whole number" in bad_page.text
