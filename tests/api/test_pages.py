"""Pages as a person sees them: a real Chromium loads them from the running service.

On the embedded backend only: a page is rendered from what the store answers, and the store interface is
checked on both backends elsewhere (tests/store, the HTTP API tests); a browser adds seconds per page.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from pyoxigraph import Quad

from ..browser import rendered_dom
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
