"""A real headless Chromium for page tests (Debian's ``chromium``; ``make test`` installs it)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
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
