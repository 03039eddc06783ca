"""Pages in a real browser: Playwright for Python driving Debian's headless Chromium (``make test`` installs both).

A pytest plugin (``pytest_plugins`` in tests/conftest.py), so a test just names the fixtures it uses. Chromium is
launched from ``/usr/bin/chromium`` through ``executable_path``: Playwright never downloads a browser, and the tests
run offline. axe-core comes from npm (tests/js/package.json, installed by ``make test`` with ``npm ci``).

Fixtures:

- ``browser``: one Chromium per pytest worker (session scope).
- ``new_page``: a factory, ``new_page(LAPTOP)`` or ``new_page(PHONE)``, of pages each in a fresh context (its own
  cookies), for tests with several people signed in at once. Every page it made is watched: each console error
  (``console.error``, a Content-Security-Policy violation, a resource that failed to load) and each uncaught
  exception is recorded (:func:`console_errors`), and any of them fails the test at teardown.
- ``browser_page``: ``new_page(LAPTOP)``, 1280x800, for most tests. ``phone_page``: ``new_page(PHONE)``, 390x844,
  emulated as a phone (``is_mobile``: the page's viewport meta decides its layout width, as on a real one).

Helpers, each given a page:

- :func:`assert_fits_width`: no horizontal scrolling (``document.scrollingElement.scrollWidth`` within the
  viewport's width); a failure names the outermost elements that stick out.
- :func:`axe`: axe-core's violations; :func:`assert_accessible` fails on a serious or critical one, naming each
  rule and the elements it found.
- :func:`assert_words_whole`: no word in a table heading or cell is split across lines (IRIs and code aside).
- :func:`assert_labelled`: every form control (input, select, textarea; not hidden or a button) has a label,
  ``aria-label`` or ``aria-labelledby``.
- :func:`keep_screenshot`: a full-page PNG under ``test-artifacts/`` (``CAIE_TEST_ARTIFACTS`` moves it), kept
  after the run.

While a test holds a page, the main thread's asyncio loop is Playwright's (see :func:`_driving`): code the test
runs itself in that thread must not call ``asyncio.run`` then (the service, in its own threads, may).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, sync_playwright

REPO = Path(__file__).resolve().parents[1]
AXE = REPO / "tests" / "js" / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS_ENV = "CAIE_TEST_ARTIFACTS"
LAPTOP = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)
# Beyond Playwright's own switches: this machine has no GPU and no network past the package registries.
FLAGS = ["--disable-gpu", "--disable-quic"]

_errors: WeakKeyDictionary[Page, list[str]] = WeakKeyDictionary()


def chromium() -> str:
    found = shutil.which("chromium")
    if not found:
        raise RuntimeError("chromium is missing: `make test` installs it (`make browser`: apt-get install chromium)")
    return found


@contextmanager
def _driving(browser: Browser) -> Iterator[None]:
    """Playwright's loop as the thread's running loop, for the block only.

    The sync API leaves its loop marked as running in the main thread between calls, so a later test in the same
    worker that calls ``asyncio.run`` (tests/runs, a report test that runs a target) would be refused ("cannot be
    called from a running event loop"). The browser lives for the session, so the mark is taken off between the
    tests that use it and put back while one does."""
    asyncio._set_running_loop(browser._loop)  # type: ignore[attr-defined]  # private asyncio and Playwright names: see the docstring
    try:
        yield
    finally:
        asyncio._set_running_loop(None)  # type: ignore[attr-defined]  # private asyncio name: see the docstring


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium under Playwright, one per pytest worker."""
    playwright = sync_playwright().start()
    chrome = playwright.chromium.launch(executable_path=chromium(), args=FLAGS)
    asyncio._set_running_loop(None)  # type: ignore[attr-defined]  # idle between tests: _driving
    yield chrome
    with _driving(chrome):
        chrome.close()
        playwright.stop()


def console_errors(page: Page) -> list[str]:
    """What ``page`` logged as errors so far, each with the page's address; a test that provokes one on purpose
    clears this list after checking it."""
    return _errors[page]


def _watch(page: Page) -> None:
    found = _errors.setdefault(page, [])
    page.on(
        "console",
        lambda message: (
            found.append(f"{page.url}: console {message.type}: {message.text}")
            if message.type in ("error", "assert")
            else None
        ),
    )
    page.on("pageerror", lambda error: found.append(f"{page.url}: uncaught {error.name}: {error.message}"))


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[ViewportSize], Page]]:
    """``new_page(viewport)``: a page in a fresh context; the test fails at teardown if any logged an error."""
    pages: list[Page] = []

    def open_page(viewport: ViewportSize = LAPTOP) -> Page:
        phone = viewport["width"] < 600
        context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, device_scale_factor=1)
        page = context.new_page()
        _watch(page)
        pages.append(page)
        return page

    with _driving(browser):
        yield open_page
        errors = [error for page in pages for error in console_errors(page)]
        for page in pages:
            page.context.close()
    if errors:
        pytest.fail("the page logged errors:\n" + "\n".join(errors), pytrace=False)


@pytest.fixture
def browser_page(new_page: Callable[[ViewportSize], Page]) -> Page:
    """A 1280x800 page in a fresh context, its console errors failing the test."""
    return new_page(LAPTOP)


@pytest.fixture
def phone_page(new_page: Callable[[ViewportSize], Page]) -> Page:
    """A 390x844 phone page in a fresh context, its console errors failing the test."""
    return new_page(PHONE)


_OVERFLOW = """width => {
  const sticksOut = e => e.getBoundingClientRect().right > width + 0.5;
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + [...e.classList].map(c => '.' + c).join('');
  const outermost = [...document.body.querySelectorAll('*')].filter(e => sticksOut(e) && !sticksOut(e.parentElement));
  return {scrollWidth: document.scrollingElement.scrollWidth,
          wide: outermost.slice(0, 5).map(e => `${name(e)} (right edge at ${Math.round(e.getBoundingClientRect().right)} px)`)};
}"""


def assert_fits_width(page: Page) -> None:
    """The page needs no horizontal scrolling on its screen: ``document.scrollingElement.scrollWidth`` within the
    viewport's width. That width, not ``innerWidth``: on a phone, content too wide widens ``innerWidth`` with it
    (the browser zooms out), and a page without a viewport meta is laid out 980 px wide."""
    width = (page.viewport_size or LAPTOP)["width"]
    found = page.evaluate(_OVERFLOW, width)
    assert found["scrollWidth"] <= width, (
        f"{page.url} is {found['scrollWidth']} px wide on a {width} px screen: {', '.join(found['wide'])}"
    )


_BROKEN_WORDS = """skip => {
  const broken = [];
  for (const cell of document.querySelectorAll('th, td')) {
    const text = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = text.nextNode(); node; node = text.nextNode()) {
      if (node.parentElement.closest(skip)) continue;
      for (const word of node.data.matchAll(/[\\p{L}\\p{N}]{2,}/gu)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        if ([...range.getClientRects()].filter(r => r.width > 0).length > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""
UNBROKEN_EXCEPT = ".iri, code, a.iri-text"
"""What may break anywhere: an IRI, a path or a digest, which has no place to break at (style.css)."""


def assert_words_whole(page: Page) -> None:
    """No word in a table's headings or cells is split across lines (an IRI or code aside): each word (letters and
    digits) renders on one line. A column squeezed to a letter's width (``overflow-wrap: anywhere`` on cells) splits
    "Proposed" into "Pr/op/os/ed" while the page has room to spare."""
    broken = page.evaluate(_BROKEN_WORDS, UNBROKEN_EXCEPT)
    assert not broken, f"words split across lines in tables on {page.url}: {', '.join(broken[:10])}"


def axe(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (each with ``id``, ``impact``, ``help`` and ``nodes``)."""
    if not page.evaluate("typeof window.axe === 'object'"):
        if not AXE.exists():
            raise RuntimeError(f"{AXE} is missing: `make test` installs it (npm ci in tests/js)")
        # Evaluated over the DevTools protocol, which the page's Content-Security-Policy does not govern, rather
        # than as a <script> the policy would refuse or in a context that bypasses it: the page keeps its real
        # policy (a violation still fails the test) and axe sees it as it is now, after any clicks, without a reload.
        page.evaluate(AXE.read_text(encoding="utf-8"))
    return page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")


def assert_accessible(page: Page) -> None:
    """axe-core finds no serious or critical violation on the page."""
    found = [
        f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(' '.join(n['target']) for n in v['nodes'])}"
        for v in axe(page)
        if v["impact"] in ("serious", "critical")
    ]
    assert not found, f"axe-core on {page.url}:\n" + "\n".join(found)


_UNLABELLED = """() => {
  const said = e => !!e && e.textContent.trim() !== '';
  const labelled = e => (e.getAttribute('aria-label') || '').trim() !== ''
    || (e.getAttribute('aria-labelledby') || '').split(/\\s+/).some(id => said(document.getElementById(id)))
    || [...(e.labels || [])].some(said);
  return [...document.querySelectorAll('input, select, textarea')]
    .filter(e => !['hidden', 'submit', 'button', 'reset', 'image'].includes(e.type) && !labelled(e))
    .map(e => e.outerHTML.slice(0, 160));
}"""


def assert_labelled(page: Page) -> None:
    """Every form control a person fills in has a label, ``aria-label`` or ``aria-labelledby`` with text."""
    unlabelled = page.evaluate(_UNLABELLED)
    assert not unlabelled, f"controls without a label on {page.url}:\n" + "\n".join(unlabelled)


def keep_screenshot(page: Page, name: str, *, always: bool = False) -> Path | None:
    """A full-page PNG of ``page`` kept as a test artifact under ``$CAIE_TEST_ARTIFACTS`` when it is set
    (``CAIE_TEST_ARTIFACTS=test-artifacts make test``), or under ``test-artifacts/`` when ``always`` (the end-to-end
    walk's pages); its path, or ``None`` when not asked for. A screenshot proves nothing by itself (what a page must show is asserted on the page), and
    each costs Chromium one to four seconds, so ``make test`` keeps only the end-to-end walk's."""
    asked = os.environ.get(ARTIFACTS_ENV)
    if not asked and not always:
        return None
    folder = Path(asked or REPO / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    # The viewport made as tall as the page, for one ordinary screenshot. Playwright 1.65's ``full_page=True`` (and
    # DevTools' captureBeyondViewport) on Chromium 156 hang on the query page's 11,000 px after a Playwright
    # ``expect`` has run in it: 30 s timeouts, or 70 to 120 s, where this takes about 2 s.
    size = page.viewport_size or LAPTOP
    height = page.evaluate("document.scrollingElement.scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": max(height, size["height"])})
    try:
        page.screenshot(path=path)
    finally:
        page.set_viewport_size(size)
    return path
