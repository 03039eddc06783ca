"""A loopback URL nothing listens on, for the run tests' unreachable targets (the chat server they talk to is
tests/conftest.py's ``chat_server``, shared with the judgment, report and workspace tests)."""

from __future__ import annotations

import pytest

from ..servers import free_port


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL nothing listens on."""
    return f"http://127.0.0.1:{free_port()}/v1"
