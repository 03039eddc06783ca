"""The people and the served service the evaluation operator's page tests share (test_operator_run_start_pages.py,
test_operator_run_errors_pages.py, test_operator_pages_browser.py): who signs in with which role, the service over a
test's store with the deployment's settings, the start form as a browser sends it, and a run followed to its job's end
over REST."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from service.api import create_app

from ..api.workspace import Visitor, hidden, quick_hashes, visitor
from ..conftest import Service, settings_for
from ..plan.test_second_domain_plan import ID
from ..servers import AppSlot

PASSWORDS = {"theo": "theo's long password", "annie": "annie's long password", "vera": "vera's long password"}
PEOPLE = [
    {
        "agent": "theo",
        "username": "theo",
        "password": PASSWORDS["theo"],
        "roles": ["evaluation_operator"],
        "name": "Theo Operator",
    },
    {"agent": "annie", "username": "annie", "password": PASSWORDS["annie"], "roles": ["domain_expert"]},
    {"agent": "vera", "username": "vera", "password": PASSWORDS["vera"], "roles": ["viewer"]},
]
RUNS = f"/evaluations/{ID}/workspace/runs"


@contextmanager
def pages(
    service: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str], **overrides: object
) -> Iterator[str]:
    """The service over ``service``'s store with :data:`PEOPLE` who sign in and the deployment's ``overrides``
    (allow-list, key variables); yields its URL and waits for the runs it started."""
    slot, url = app_slot
    app = create_app(settings_for(tokens, people=json.dumps(quick_hashes(PEOPLE)), **overrides), service.store)
    try:
        with slot.serving(app):
            yield url
    finally:
        assert app.state.services.jobs.wait(120), "a run started from the page was still running"


@contextmanager
def signed_in(url: str, agent: str) -> Iterator[Visitor]:
    with visitor(url) as browser:
        assert browser.sign_in(agent, PASSWORDS[agent]).status_code == 303
        yield browser


def run_json(url: str, number: int) -> dict:
    return httpx.get(f"{url}/evaluations/{ID}/runs/{number}", headers={"Accept": "application/json"}).json()


def job_ended(url: str, number: int) -> dict:
    """Run ``number`` once its job is no longer running (the REST JSON, polled as the page's script polls it)."""
    for _ in range(1200):
        run = run_json(url, number)
        if run["job"] is not None and run["job"]["state"] != "running":
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {number} still running: {run}")


def start_form(page: str, **fields: str) -> dict[str, str]:
    """The start form as a browser sends it: its token, the demonstration chatbot, defaults left blank."""
    return {"csrf_token": hidden(page, "csrf_token", "run-form"), "plan": "1", "kind": "demo", **fields}


def offered_plans(page: str) -> list[str]:
    return re.findall(r'<option value="(\d+)"[^>]*>Plan \d+</option>', page)
