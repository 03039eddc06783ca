"""The measles plan the plan tests start from (the bed-nets one, ``planned``, is tests/record_fixtures.py's)."""

from __future__ import annotations

import pytest

from ..conftest import Service, restored
from .test_plans_api import make_plan


@pytest.fixture
def measles_planned(signed: Service, snapshots: dict) -> Service:
    """The signed-off measles example with the worked example's 300-probe plan (plan 1, made with
    :data:`.test_plans_api.PLAN`)."""
    return restored(signed, snapshots, "measles example with its 300-probe plan", lambda fresh: make_plan(fresh))
