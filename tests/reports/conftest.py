"""The reported record the report tests start from."""

from __future__ import annotations

import pytest

from ..conftest import Service, restored
from .test_reports_api import attest


@pytest.fixture
def attested(judged: Service, snapshots: dict) -> Service:
    """The bed-nets run 1, rule-judged, then determined by an annotator and attested by the domain expert
    (:func:`.test_reports_api.attest`)."""
    return restored(judged, snapshots, "bed-nets run 1 determined and attested for reports", attest)
