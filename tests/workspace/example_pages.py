"""The worked example served with one person per role who signs in, for the home and report page tests
(test_home_pages.py, test_report_signoff_pages.py): the people and a signed-in browser; the fixture serving them is
tests/workspace/conftest.py's ``example``."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser

from ..api.workspace import Visitor, visitor
from ..conftest import ROLES

PASSWORDS = {agent: f"{agent}'s long password" for agent in ROLES}
PEOPLE = [
    {"agent": agent, "username": agent, "password": PASSWORDS[agent], "roles": roles, "name": agent.capitalize()}
    for agent, roles in ROLES.items()
]
"""The tests' agents (tests/conftest.py ROLES) as people; none declares languages, so the annotator is offered
every case (docs/workspace.md)."""
EVALUATION = "/evaluations/measles"


@contextmanager
def signed_in(url: str, agent: str) -> Iterator[Visitor]:
    """A browser (cookies, ``Accept: text/html``) with ``agent`` signed in."""
    with visitor(url) as browser:
        assert browser.sign_in(agent, PASSWORDS[agent]).status_code == 303
        yield browser


class _Text(HTMLParser):
    """The text inside the element with one id, nested elements included."""

    VOID = frozenset({"br", "img", "input", "link", "meta", "hr", "wbr"})

    def __init__(self, element: str) -> None:
        super().__init__()
        self.element, self.depth, self.parts, self.found = element, 0, [], False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth:
            self.depth += tag not in self.VOID
        elif ("id", self.element) in attrs:
            self.depth, self.found = 1, True

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag not in self.VOID:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.parts.append(data)


def by_id(page: str, element: str) -> str:
    """The text of the element with id ``element`` (tags dropped, spaces collapsed)."""
    parser = _Text(element)
    parser.feed(page)
    assert parser.found, f"no element #{element} in the page"
    return " ".join("".join(parser.parts).split())


def waiting_links(page: str) -> list[tuple[str, str]]:
    """The page's waiting items: (label, link)."""
    return [
        (html.unescape(label), path)
        for path, label in re.findall(r'<li class="waiting-[^"]*"><a href="([^"]*)">([^<]*)</a>', page)
    ]
