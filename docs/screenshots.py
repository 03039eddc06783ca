"""Screenshots of the workspace pages for docs/workspace.md: ``make screenshots``
(``.venv/bin/python docs/screenshots.py``).

Serves the worked example as ``make run`` does (``caie serve --examples``, in a fresh temporary data directory on a
free port), signs each role's demo person in through the real ``/sign-in`` form (their passwords are in the
``people.json`` that ``serve --examples`` writes), opens every workspace page in Debian's Chromium under Playwright
(no browser download, as tests/pages_browser.py launches it) at 1280x800 and some at 390x844, and writes the top of
each page, at most ``MAX_HEIGHT`` pixels of it, to ``docs/images/workspace/<page>.png``.

It fails (exit status 1, each problem named) when a page answers other than 200, lands somewhere else (a sign-in
asked for), logs a console error or an uncaught exception, or makes a PNG larger than ``MAX_BYTES``. About three
minutes on two busy cores, most of it loading the worked example. ``--data-dir DIR --port N`` keep the store for the
next run, which then starts in about 20 s (with the same port: the record's IRIs name it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

import httpx
from PIL import Image  # matplotlib's own dependency, so always installed
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, sync_playwright

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "images" / "workspace"
E = "/evaluations/measles"
LAPTOP = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)
MAX_HEIGHT = 1400
"""Pixels of each page kept from its top: what a reader needs to recognise the page, not all of it."""
MAX_BYTES = 250_000
STARTUP_S = 600.0
"""How long ``caie serve --examples`` may take to load the worked example (about two minutes on two busy cores)."""
FLAGS = ["--disable-gpu", "--disable-quic"]  # as tests/pages_browser.py: no GPU, no network
TOP = "s => Math.max(0, document.querySelector(s).getBoundingClientRect().top + window.scrollY - 16)"
"""Where the element a selector names starts on the page, less a margin."""


@dataclass(frozen=True)
class Shot:
    """One screenshot: ``name``.png of ``path`` as ``agent`` sees it (``None``: nobody signed in). With ``follow``,
    the page is the one the first link matching that CSS selector on ``path`` leads to (a case from the queue);
    with ``at``, the picture starts at the element that selector matches instead of the page's top."""

    name: str
    path: str
    agent: str | None
    follow: str | None = None
    at: str | None = None


# Each page as the person who acts there sees it (the demo people: service/cli.py DEMO_ROLES).
LAPTOP_SHOTS = [
    Shot("sign-in", "/sign-in", None),
    Shot("home", "/", "ada"),
    Shot("overview", E, "annie"),
    Shot("envelope", f"{E}/workspace/envelope", "annie"),
    Shot("scenarios", f"{E}/workspace/scenarios", "annie"),
    Shot("plans", f"{E}/workspace/plans", "annie"),
    Shot("plan", f"{E}/workspace/plans/1", "annie"),
    Shot("runs", f"{E}/workspace/runs", "theo"),
    Shot("run", f"{E}/workspace/runs/1", "theo"),
    Shot("annotate-queue", f"{E}/workspace/annotate", "ada"),
    Shot("annotate-case", f"{E}/workspace/annotate", "ada", follow="#next-case"),
    Shot("criteria", f"{E}/workspace/criteria?run=1", "annie"),
    Shot("criterion", f"{E}/workspace/criteria/c04?run=1", "annie"),
    Shot("reports", f"{E}/workspace/reports", "dana"),
    Shot("report", f"{E}/reports/1/page", "dana"),
    Shot("report-sign-offs", f"{E}/reports/1/page", "dana", at="#sign-offs"),
    Shot("failure-map", f"{E}/reports/1/failure-map", None),
]
PHONE_SHOTS = [
    Shot("sign-in-phone", "/sign-in", None),
    Shot("home-phone", "/", "ada"),
    Shot("annotate-case-phone", f"{E}/workspace/annotate", "ada", follow="#next-case"),
    Shot("run-phone", f"{E}/workspace/runs/1", "theo"),
    Shot("report-phone", f"{E}/reports/1/page", "dana"),
]


def free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return int(listener.getsockname()[1])


@contextmanager
def serving(data_dir: Path, port: int) -> Iterator[str]:
    """``caie serve --examples`` on ``data_dir`` and ``port``, as ``make run`` starts it; its base URL."""
    log = (data_dir / "serve.log").open("w")
    command = [
        str(REPO / ".venv" / "bin" / "caie"),
        "serve",
        "--data-dir",
        str(data_dir),
        "--port",
        str(port),
        "--examples",
    ]
    service = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://localhost:{port}"  # the host of the base URL serve sets, so the record's links are this server's
    try:
        deadline = time.monotonic() + STARTUP_S
        while not _healthy(url):
            if service.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"caie serve did not start; its output:\n{(data_dir / 'serve.log').read_text()[-3000:]}"
                )
            time.sleep(1)
        yield url
    finally:
        service.terminate()
        try:
            service.wait(timeout=15)
        except subprocess.TimeoutExpired:
            service.kill()
        log.close()


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


class Camera:
    """One Chromium; a context per (person, screen), signed in through the form once; every problem collected."""

    def __init__(self, browser: Browser, url: str, passwords: dict[str, str]) -> None:
        self.browser, self.url, self.passwords = browser, url, passwords
        self.pages: dict[tuple[str | None, int], Page] = {}
        self.problems: list[str] = []
        self.errors: list[str] = []

    def page_for(self, agent: str | None, viewport: ViewportSize) -> Page:
        key = (agent, viewport["width"])
        if key not in self.pages:
            phone = viewport["width"] < 600
            context: BrowserContext = self.browser.new_context(
                viewport=viewport, is_mobile=phone, has_touch=phone, device_scale_factor=1
            )
            page = context.new_page()
            page.on(
                "console",
                lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "assert") else None,
            )
            page.on("pageerror", lambda error: self.errors.append(f"uncaught {error.name}: {error.message}"))
            if agent:
                self.sign_in(page, agent)
            self.pages[key] = page
        return self.pages[key]

    def sign_in(self, page: Page, agent: str) -> None:
        """The person signs in through the page's form, as anyone would."""
        page.goto(f"{self.url}/sign-in")
        page.fill("#username", agent)
        page.fill("#password", self.passwords[agent])
        with page.expect_navigation():
            page.click("form.sign-in button[type=submit]")
        if "/sign-in" in page.url:
            raise SystemExit(f"{agent} could not sign in: {page.inner_text('main')[:300]}")

    def take(self, shot: Shot, viewport: ViewportSize) -> None:
        self.errors.clear()  # before signing in: an error on the sign-in page counts too
        page = self.page_for(shot.agent, viewport)
        path = shot.path
        if shot.follow:
            self.visit(page, path, shot)
            path = page.get_attribute(shot.follow, "href") or ""
        self.visit(page, path, shot)
        self.problems += [f"{shot.name} ({path}): {error}" for error in self.errors]
        self.save(page, shot, viewport)

    def visit(self, page: Page, path: str, shot: Shot) -> None:
        response = page.goto(f"{self.url}{path}")
        status = response.status if response else None
        if status != 200:
            self.problems.append(f"{shot.name}: {path} answered {status}")
        elif page.url.removeprefix(self.url) != path:
            self.problems.append(f"{shot.name}: {path} led to {page.url} as {shot.agent or 'nobody'}")

    def save(self, page: Page, shot: Shot, viewport: ViewportSize) -> None:
        """The page from its top (or ``shot.at``): the viewport made as tall as the rest of the page up to MAX_HEIGHT
        (as keep_screenshot does it: Playwright's full_page can hang on Chromium), stored as a 256-colour PNG (a page
        is mostly flat colour: a third of the bytes)."""
        top = page.evaluate(TOP, shot.at) if shot.at else 0
        rest = page.evaluate("document.scrollingElement.scrollHeight") - top
        height = min(MAX_HEIGHT, max(viewport["height"], rest))
        page.set_viewport_size({"width": viewport["width"], "height": height})
        try:
            page.evaluate("y => window.scrollTo(0, y)", top)
            png = page.screenshot()
        finally:
            page.set_viewport_size(viewport)
        image = Image.open(BytesIO(png)).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
        target = OUT / f"{shot.name}.png"
        image.save(target, optimize=True)
        size = target.stat().st_size
        if size > MAX_BYTES:
            self.problems.append(f"{shot.name}: {size:,} bytes, over {MAX_BYTES:,}")
        print(f"  {target.name}  {viewport['width']}x{height}  {size // 1000} kB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, help="the store's directory, kept (default: a fresh temporary one)")
    parser.add_argument("--port", type=int, help="the port to serve on (default: a free one)")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if not chromium:
        raise SystemExit("chromium is missing: `make browser` installs it")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="caie-screenshots-") as scratch:
        data_dir = args.data_dir or Path(scratch)
        print(f"serving the worked example from {data_dir} (caie serve --examples); PNGs to {OUT.relative_to(REPO)}/")
        with serving(data_dir, args.port or free_port()) as url, sync_playwright() as playwright:
            print(f"  ready after {time.monotonic() - started:.0f} s at {url}")
            people = json.loads((data_dir / "people.json").read_text(encoding="utf-8"))
            browser = playwright.chromium.launch(executable_path=chromium, args=FLAGS)
            camera = Camera(browser, url, {p["username"]: p["password"] for p in people})
            OUT.mkdir(parents=True, exist_ok=True)
            for shots, viewport in ((LAPTOP_SHOTS, LAPTOP), (PHONE_SHOTS, PHONE)):
                for shot in shots:
                    camera.take(shot, viewport)
            browser.close()
    print(f"{len(LAPTOP_SHOTS) + len(PHONE_SHOTS)} screenshots in {time.monotonic() - started:.0f} s")
    if camera.problems:
        print("PROBLEMS:\n" + "\n".join(f"  {p}" for p in camera.problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
