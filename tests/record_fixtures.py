"""Fixtures: the evaluation records that HTTP tests in several folders start from, each built over HTTP by the
first test on a backend and then copied into later tests' stores (:func:`.harness.restored`).

A plugin of tests/conftest.py (its ``pytest_plugins``) rather than part of it: the steps that build these records
are the test modules' own (:func:`.api.test_evaluations.sign_off`, :func:`.plan.test_second_domain_plan.build`, ...),
and those modules import conftest.py, which so cannot import them; a plugin is loaded after conftest.py.
"""

from __future__ import annotations

import pytest
from pyoxigraph import Quad

from .api.test_evaluations import create, sign_off
from .conftest import Service, restored
from .judgments.test_judgments_api import run_and_judge
from .plan.test_plans_api import SMALL_PLAN, make_plan
from .plan.test_second_domain_plan import build
from .runs.test_run_record import approve
from .test_envelope import load_spec

# ---------------------------------------------------------------------------------------------- measles


@pytest.fixture
def loaded(service: Service, spec_quads: list[Quad]) -> Service:
    """The service with the DSO and the four country knowledge graphs loaded."""
    load_spec(service.store, spec_quads)
    return service


@pytest.fixture
def signed(service: Service, spec_quads: list[Quad], snapshots: dict) -> Service:
    """The measles example with its envelope signed off (as :func:`loaded`, then :func:`create` and
    :func:`sign_off`)."""

    def build_signed(fresh: Service) -> None:
        load_spec(fresh.store, spec_quads)
        create(fresh)
        sign_off(fresh)

    return restored(service, snapshots, "signed-off measles example", build_signed)


@pytest.fixture
def small_planned(signed: Service, snapshots: dict) -> Service:
    """The signed-off measles example with a 40-probe ``Equal`` plan (plan 1, made with :data:`SMALL_PLAN`)."""
    return restored(
        signed, snapshots, "measles example with a 40-probe Equal plan", lambda fresh: make_plan(fresh, SMALL_PLAN)
    )


# ---------------------------------------------------------------------------------------------- bed nets


@pytest.fixture
def planned(service: Service, snapshots: dict) -> Service:
    """The bed-nets evaluation, signed off, with plan 1 (:data:`.plan.test_second_domain_plan.PLAN`, 6 probes).

    tests/plan's measles plan is :func:`.plan.conftest.measles_planned`."""
    return restored(service, snapshots, "bed-nets evaluation with a 6-probe plan", build)


@pytest.fixture
def approved(planned: Service, snapshots: dict) -> Service:
    """The bed-nets evaluation with its 6-probe plan approved by the domain expert."""
    return restored(planned, snapshots, "bed-nets evaluation with its plan approved", approve)


@pytest.fixture
def judged(approved: Service, snapshots: dict) -> Service:
    """Run 1 of the approved bed-nets plan on the demo chatbot, judged by the domain's judging rule."""
    return restored(approved, snapshots, "bed-nets run 1 on the demo, rule-judged", run_and_judge)
