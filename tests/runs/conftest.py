"""The chat server process the run tests talk to, started once per session on a free loopback port."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..servers import free_port, stop_process, wait_until_up

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def chat_server() -> Iterator[str]:
    """The base URL of a running tests/runs/chat_server.py (OpenAI-compatible API under ``/v1``)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tests.runs.chat_server:app", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning"],
        cwd=REPO, stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/health", process)
        yield url
    finally:
        stop_process(process, grace_s=5)


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL nothing listens on."""
    return f"http://127.0.0.1:{free_port()}/v1"
