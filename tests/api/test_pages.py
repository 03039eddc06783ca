"""Pages as a person sees them: a real Chromium loads them from the running service.

On the embedded backend only: a page is rendered from what the store answers, and the store interface is
checked on both backends elsewhere (tests/store, the HTTP API tests); a browser adds seconds per page.
One Chromium serves the module's DevTools tests (:class:`..browser.Browser`); a console error fails them,
which covers Content-Security-Policy violations: a page whose script or style the policy blocked logs one.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pyoxigraph import Quad

from ..browser import Browser, rendered_dom
from ..conftest import Service
from ..test_envelope import load_spec, spec_quads  # noqa: F401

pytestmark = pytest.mark.parametrize("store", ["embedded"], indirect=True)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.headings: list[str] = []
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.extend(value for name, value in attrs if name == "href" and value)
        self._in_h1 = tag == "h1"

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.headings.append(data)
            self._in_h1 = False


def parsed(dom: str) -> _Links:
    links = _Links()
    links.feed(dom)
    return links


def test_term_page_links_to_its_neighbours(service: Service, spec_quads: list[Quad]) -> None:  # noqa: F811
    load_spec(service.store, spec_quads)
    page = parsed(rendered_dom(f"{service.url}/epo/AcceptanceCriterion"))
    assert page.headings == ["acceptance criterion"]
    assert "/epo/Requirement" in page.links or any(link.startswith("/epo/") for link in page.links)
    superclass = next(link for link in page.links if link.startswith("/epo/") and link != "/epo/AcceptanceCriterion")
    followed = parsed(rendered_dom(f"{service.url}{superclass}"))
    assert followed.headings and followed.headings[0]


def test_catalog_page_lists_every_graph(service: Service, spec_quads: list[Quad]) -> None:  # noqa: F811
    load_spec(service.store, spec_quads)
    page = parsed(rendered_dom(f"{service.url}/graphs"))
    assert page.headings == ["Graphs"]
    for graph in ("/graphs/ontologies/epo", "/graphs/dso/vaccine-education", "/graphs/kg/kenya"):
        assert graph in page.links


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def _shot(browser: Browser, folder: Path, name: str) -> None:
    png = browser.screenshot(folder / f"{name}.png")
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 10_000, "a page was drawn"


def test_term_index_and_query_pages_render_without_console_errors(
        service: Service, spec_quads: list[Quad], browser: Browser, screenshots: Path) -> None:  # noqa: F811
    load_spec(service.store, spec_quads)
    pages = {"/epo/AcceptanceCriterion": "acceptance criterion",
             "/doc/ontologies/epo": "OB-CAIE Evaluation Process Ontology (EPO)",
             "/doc/kg/kenya": "OB-CAIE context knowledge graph: Kenya", "/query": "Query"}
    for path, heading in pages.items():
        browser.open(service.url + path)
        assert browser.evaluate("document.querySelector('h1').textContent") == heading
        # The stylesheet applied (a blocked one would leave the browser's default body margin).
        assert browser.evaluate("getComputedStyle(document.body).maxWidth") != "none"
        browser.check()
        _shot(browser, screenshots, path.strip("/").replace("/", "-"))
    browser.open(service.url + "/doc/ontologies/epo")
    assert browser.evaluate("document.querySelectorAll('.diagram svg a').length") > 40, "the hierarchy is drawn"
    # A term page's "Turtle" link shows the term as Turtle (fetched with that Accept by alternates.js).
    browser.open(service.url + "/epo/AcceptanceCriterion")
    browser.evaluate("document.querySelector('a[data-accept=\"text/turtle\"]').click()")
    turtle = str(browser.wait_for("document.getElementById('alternate-view').textContent.includes('owl:Class') && "
                                  "document.getElementById('alternate-view').textContent"))
    assert "@prefix" in turtle and "acceptance criterion" in turtle
    browser.check()


def test_query_page_runs_an_example_and_shows_a_results_table(
        service: Service, spec_quads: list[Quad], browser: Browser, screenshots: Path) -> None:  # noqa: F811
    load_spec(service.store, spec_quads)
    graphs = len(service.http.get("/graphs", headers={"Accept": "application/json"}).json()["graphs"])
    browser.open(service.url + "/query")
    assert browser.evaluate("document.querySelectorAll('button[data-example]').length") > 20
    browser.evaluate("document.querySelector('button[data-example=\"catalogued-graphs\"]').click()")
    assert "cat:kind" in str(browser.evaluate("document.getElementById('query-text').value"))
    browser.evaluate("document.querySelector('#query-form button[type=submit]').click()")
    rows = browser.wait_for("document.querySelectorAll('#results-table tbody tr').length")
    assert rows == graphs
    assert browser.evaluate("[...document.querySelectorAll('#results-table th')].map(th => th.textContent)") == [
        "?graph", "?kind", "?title", "?triples"]
    assert browser.evaluate("document.getElementById('query-status').textContent") == f"{graphs} rows"
    browser.check()
    _shot(browser, screenshots, "query-results")


def test_errors_are_pages_for_browsers_and_problems_for_programs(service: Service) -> None:
    for_browser = service.http.get("/epo/NoSuchTerm", headers={"Accept": "text/html,*/*;q=0.8"})
    assert for_browser.status_code == 404 and for_browser.headers["content-type"].startswith("text/html")
    assert parsed(for_browser.text).headings == ["404 NotFound"] and "NoSuchTerm" in for_browser.text
    for_program = service.http.get("/epo/NoSuchTerm", headers={"Accept": "*/*"})
    assert for_program.status_code == 404 and for_program.headers["content-type"] == "application/problem+json"
    bad_page = service.http.get("/doc/ontologies/epo", params={"page": "x"}, headers={"Accept": "text/html"})
    assert bad_page.status_code == 400 and "page must be a whole number" in bad_page.text
