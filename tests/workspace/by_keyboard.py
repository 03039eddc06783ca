"""What the workspace's browser tests share (test_annotator_pages.py, test_end_to_end.py): signing in through the real
``/sign-in`` form, and an annotator determining cases with static/annotate.js's shortcuts alone."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from playwright.sync_api import Page

OUTCOMES = {"p": "passed", "f": "failed", "c": "cantTell", "n": "inapplicable"}
"""annotate.js's outcome shortcuts and the EARL outcome each chooses."""


@dataclass(frozen=True)
class Determined:
    """One determination made with the keyboard, as the test made it."""

    case: str
    """The case page's address (no query or fragment)."""
    criterion: str
    """The IRI of the criterion whose form was highlighted."""
    outcome: str
    """EARL's name of the outcome chosen: passed, failed, cantTell or inapplicable."""
    rationale: str


def sign_in(page: Page, url: str, agent: str, password: str, next_path: str) -> None:
    """Sign ``agent`` in on ``page`` through the sign-in form (Enter sends it) and land on ``next_path``."""
    page.goto(f"{url}/sign-in?next={quote(next_path)}")
    page.fill("#username", agent)
    page.fill("#password", password)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == f"{url}{next_path}"


def progress_value(page: Page) -> int:
    """The annotator's progress as the page's ``<progress>`` states it."""
    return int(page.get_attribute("#annotation-progress", "value") or -1)


def _address(page: Page) -> str:
    return re.split(r"[?#]", page.url)[0]


def determine_cases(
    page: Page, cases: int, key: Callable[[str], str], rationale: Callable[[int], str], most: int = 20
) -> list[Determined]:
    """On a case page, determine the highlighted criterion with the keyboard alone until ``cases`` cases are done
    (the page then goes on to another case): its outcome's shortcut ``key(identifier)``, ``r``, the rationale
    ``rationale(n)`` typed (n counts the determinations), ``Esc`` back to the outcome, ``Enter``. Each time the
    rationale must stay in its field (no shortcut acts while typing), the progress advance by one and the page
    confirm it. At most ``most`` determinations; the ones made, in order."""
    made: list[Determined] = []
    done: set[str] = set()
    while len(done) < cases:
        assert len(made) < most, f"{cases} cases not done after {most} determinations"
        here, before = _address(page), progress_value(page)
        criterion = page.get_attribute("section.criterion.current input[name=criterion]", "value") or ""
        letter, text = key(criterion.rsplit("/", 1)[-1]), rationale(len(made))
        page.keyboard.press(letter)
        page.keyboard.press("r")
        page.keyboard.type(text)
        assert page.evaluate("document.activeElement.value") == text and _address(page) == here
        page.keyboard.press("Escape")
        assert page.evaluate("document.activeElement.value") == OUTCOMES[letter]  # back on the outcome it chose
        with page.expect_navigation() as navigation:
            page.keyboard.press("Enter")
        answer = navigation.value
        assert answer is not None and answer.ok, f"{answer and answer.status} from {page.url} after Enter"
        assert progress_value(page) == before + 1
        assert "Recorded: your determination" in (page.text_content(".confirmation") or "")
        made.append(Determined(here, criterion, OUTCOMES[letter], text))
        if _address(page) != here:
            done.add(here)
    return made
