"""The browser fixtures and page checks (tests/pages_browser.py) catch what they are for.

Each page here is served by Playwright's router under the pages' own Content-Security-Policy (service/api/html.py),
so what passes here passes under the policy the service sends; no service is started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, ViewportSize

from service.api.html import CONTENT_SECURITY_POLICY

from .pages_browser import (
    ARTIFACTS_ENV,
    PHONE,
    assert_accessible,
    assert_fits_width,
    assert_labelled,
    assert_words_whole,
    axe,
    console_errors,
    keep_screenshot,
)

SITE = "http://pages.test"
HEAD = (
    '<!doctype html><html lang="en"><head><meta name="viewport" content="width=device-width,initial-scale=1">'
    '<title>test</title></head><body><main><h1>A page</h1>'
)


def serve(page: Page, body: str) -> None:
    """Open ``body`` (after a valid head) at SITE/ under the pages' Content-Security-Policy."""

    def answer(route: Route) -> None:
        if route.request.url.rstrip("/") != SITE:
            route.fulfill(status=404, body="")
        else:
            route.fulfill(
                status=200,
                content_type="text/html",
                body=HEAD + body + "</main></body></html>",
                headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
            )

    page.route(f"{SITE}/**", answer)
    page.goto(f"{SITE}/")


def test_a_policy_violation_and_an_uncaught_exception_are_recorded_with_the_address(browser_page: Page) -> None:
    serve(browser_page, "<script>console.log('inline')</script><p>text</p>")
    assert any("Content Security Policy" in e and e.startswith(f"{SITE}/:") for e in console_errors(browser_page))
    browser_page.evaluate("setTimeout(() => { throw new Error('boom') })")
    browser_page.wait_for_timeout(100)
    assert any("uncaught Error: boom" in e for e in console_errors(browser_page)), console_errors(browser_page)
    console_errors(browser_page).clear()  # provoked on purpose: the fixture would fail the test for them


def test_axe_runs_under_the_policy_and_names_each_serious_violation(browser_page: Page) -> None:
    serve(browser_page, '<form><input id="who"><button>Go</button></form>')
    found = {v["id"]: v for v in axe(browser_page)}
    assert found["label"]["impact"] == "critical" and found["label"]["nodes"][0]["target"] == ["#who"]
    with pytest.raises(AssertionError, match=r"label \(critical\): .* at #who"):
        assert_accessible(browser_page)
    assert console_errors(browser_page) == []  # injecting axe broke no policy


def test_a_page_axe_passes_is_accessible(browser_page: Page) -> None:
    serve(browser_page, '<form><label for="who">Name</label> <input id="who"><button>Go</button></form>')
    assert_accessible(browser_page)


def test_every_control_needs_a_label(browser_page: Page) -> None:
    serve(
        browser_page,
        '<label>Name <input name="a"></label><input aria-label="Age" name="b">'
        '<span id="c-label">Town</span><select aria-labelledby="c-label"><option>x</select>'
        '<input type="hidden" name="csrf"><input type="submit" value="Send">',
    )
    assert_labelled(browser_page)
    browser_page.evaluate(
        "document.querySelector('main').insertAdjacentHTML('beforeend', "
        "'<textarea name=notes></textarea><input aria-labelledby=nowhere name=d>')"
    )
    with pytest.raises(AssertionError, match="(?s)textarea name=\"notes\".*name=\"d\""):
        assert_labelled(browser_page)


def test_a_page_wider_than_the_screen_names_what_sticks_out(new_page: Callable[[ViewportSize], Page]) -> None:
    phone = new_page(PHONE)
    serve(phone, "<p>Short text that wraps.</p>")
    assert phone.evaluate("innerWidth") == 390  # the viewport meta holds: no zoomed-out 980 px layout
    assert_fits_width(phone)
    phone.evaluate(
        "document.querySelector('main').insertAdjacentHTML('beforeend', "
        "'<table class=\"wide\"><tr><td>' + 'x'.repeat(120) + '</td></tr></table>')"
    )
    with pytest.raises(AssertionError, match=r"on a 390 px screen: table\.wide \(right edge"):
        assert_fits_width(phone)


def test_a_word_split_across_lines_in_a_table_is_named_and_an_iri_may_break(browser_page: Page) -> None:
    serve(
        browser_page,
        '<table><tr><th>Proposed</th><td><span class="iri">https://w3id.org/ob-caie/epo/x</span></td></tr></table>',
    )
    assert_words_whole(browser_page)
    # the column squeezed as overflow-wrap: anywhere let it be (set through the CSSOM, which the policy allows)
    browser_page.evaluate(
        "for (const e of document.querySelectorAll('th, td span')) e.style.overflowWrap = 'anywhere';"
        "document.querySelector('table').style.width = '1rem'"
    )
    with pytest.raises(AssertionError, match=r"split across lines in tables on .*: Proposed\n"):
        assert_words_whole(browser_page)


def test_a_screenshot_is_kept_where_the_variable_says(
    browser_page: Page, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ARTIFACTS_ENV, str(tmp_path / "shots"))
    serve(browser_page, "<p>" + "tall<br>" * 200 + "</p>")
    kept = keep_screenshot(browser_page, "tall")
    assert kept == tmp_path / "shots" / "tall.png" and kept.read_bytes().startswith(b"\x89PNG")
    height = int.from_bytes(
        kept.read_bytes()[20:24], "big"
    )  # the PNG header's height: the whole page, not the viewport
    assert height == browser_page.evaluate("document.scrollingElement.scrollHeight") > 800


def test_asyncio_runs_in_a_test_after_a_browser_test() -> None:
    """The session's browser does not leave its loop marked running (the tests above ran in this worker)."""

    async def answer() -> int:
        return 42

    assert asyncio.run(answer()) == 42
