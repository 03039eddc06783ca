"""A real headless Chromium for page tests (Debian's ``chromium``; ``make test`` installs it).

:func:`rendered_dom` and :func:`screenshot` run Chromium once per page; :class:`Browser` keeps one open and
drives it over the DevTools protocol, to see console errors, click and wait for a script's results.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise RuntimeError("chromium is missing: `make test` installs it (apt-get install chromium)")
    return found


def rendered_dom(url: str) -> str:
    """The page's DOM after Chromium has loaded and rendered it."""
    with tempfile.TemporaryDirectory(prefix="caie-chromium-") as profile:
        result = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True, text=True, timeout=60, check=True,
        )
    return result.stdout


def screenshot(url: str, path: Path, size: str = "1200,900") -> Path:
    """A PNG of the page as Chromium renders it."""
    with tempfile.TemporaryDirectory(prefix="caie-chromium-") as profile:
        subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--screenshot={path}", f"--window-size={size}", url],
            capture_output=True, timeout=60, check=True,
        )
    return path


def _above_nine(fd: int) -> int:
    """A copy of ``fd`` numbered 10 or more (the original is closed)."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return copy


class PageErrors(AssertionError):
    """A page logged errors to the console (CSP violations, failed loads, script exceptions)."""


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON messages
    ended by NUL on fds 3 and 4), so no websocket client or package is needed. It records what the console shows
    as errors: ``console.error`` calls, uncaught exceptions, and the browser's own log entries of level error
    (Content-Security-Policy violations, resources that failed to load).

    ``with Browser() as browser: browser.open(url); browser.evaluate("document.title")``.
    """

    def __init__(self, size: tuple[int, int] = (1200, 900)) -> None:
        self.size = size
        self.errors: list[str] = []
        self._events: list[dict] = []
        self._next_id = 0
        self._buffer = b""

    def __enter__(self) -> Browser:
        self._profile = tempfile.TemporaryDirectory(prefix="caie-chromium-")
        to_browser, self._commands = os.pipe()
        self._answers, from_browser = os.pipe()
        # The browser's ends move above 9, so that putting them on 3 and 4 cannot close one another.
        to_browser, from_browser = (_above_nine(fd) for fd in (to_browser, from_browser))
        # The shell puts our pipe ends on the fds the protocol uses (3: commands in, 4: answers out).
        script = f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser} {to_browser}<&- {from_browser}>&-'
        self._process = subprocess.Popen(
            ["bash", "-c", script, chromium(), *FLAGS, f"--user-data-dir={self._profile.name}",
             "--remote-debugging-pipe", f"--window-size={self.size[0]},{self.size[1]}", "about:blank"],
            pass_fds=(to_browser, from_browser), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self._call(f"{domain}.enable", session=True)
        self._call("Emulation.setDeviceMetricsOverride", {"width": self.size[0], "height": self.size[1],
                                                          "deviceScaleFactor": 1, "mobile": False}, session=True)
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self._send("Browser.close", {})
            self._process.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        finally:
            os.close(self._commands)
            os.close(self._answers)
            self._profile.cleanup()

    def _send(self, method: str, params: dict, session: bool = False) -> int:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._answers], [], [], remaining)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed = json.loads(message)
        if "method" in parsed:
            self._record(parsed)
        return parsed

    def _record(self, event: dict) -> None:
        self._events.append(event)
        params = event.get("params", {})
        if event["method"] == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(f"exception: {details.get('exception', {}).get('description') or details['text']}")
        elif event["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
        elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            self.errors.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}".strip())

    def _call(self, method: str, params: dict | None = None, *, session: bool = False, timeout: float = 30) -> dict:
        sent = self._send(method, params or {}, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline)
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def open(self, url: str, timeout: float = 30) -> None:
        """Load ``url`` and wait for its load event (scripts with ``defer`` have run by then)."""
        self._events.clear()
        self._call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + timeout
        while not any(e["method"] == "Page.loadEventFired" for e in self._events):
            self._read(deadline)

    def evaluate(self, expression: str) -> object:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                            session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> object:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"still false after {timeout} s: {expression}")

    def screenshot(self, path: Path, max_height: int = 4000) -> Path:
        """A PNG of the whole page (up to ``max_height`` CSS pixels tall)."""
        metrics = self._call("Page.getLayoutMetrics", session=True)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": self.size[0], "height": min(max(metrics["height"], 1), max_height), "scale": 1}
        data = self._call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip},
                          session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def check(self) -> None:
        """Fail with every console error since the last check."""
        found, self.errors = self.errors, []
        if found:
            raise PageErrors("the page logged errors:\n" + "\n".join(found))
