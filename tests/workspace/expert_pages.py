"""The people the domain expert's workspace page tests share (test_expert_envelope_page.py,
test_expert_scenarios_page.py, test_expert_plan_page.py, test_expert_criteria_pages.py and, in a browser,
test_expert_pages_browser.py): who signs in with which roles, the bed-nets criteria, the service serving them, and a
signed-in visitor who reads pages and posts forms as a browser does."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape

import httpx

from service.api import create_app

from ..api.workspace import Visitor, quick_hashes, shown_error, visitor
from ..conftest import Service, settings_for
from ..plan.test_second_domain_plan import ID, domain_json

PEOPLE = [
    {"agent": "annie", "username": "annie", "password": "annie's long password", "roles": ["domain_expert"]},
    {"agent": "erin", "username": "erin", "password": "erin's long password", "roles": ["domain_expert"]},
    {
        "agent": "lena",
        "username": "lena",
        "password": "lena's long password",
        "roles": ["domain_expert", "lead_expert"],
    },
    {"agent": "dana", "username": "dana", "password": "dana's long password", "roles": ["organizational_expert"]},
    {"agent": "theo", "username": "theo", "password": "theo's long password", "roles": ["evaluation_operator"]},
    {"agent": "vera", "username": "vera", "password": "vera's long password", "roles": ["viewer"]},
]
SUPERSEDE_ROLE = "lead_expert"
WORKSPACE = f"/evaluations/{ID}/workspace"
CRITERIA = [c["id"] for c in domain_json("envelope.json")["criteria"]]


@contextmanager
def people_site(service: Service, app_slot: tuple) -> Iterator[str]:
    """The service over ``service``'s store with :data:`PEOPLE` who sign in and the deployment's supersede role;
    ``service.http`` (bearer tokens) reaches the same app."""
    slot, url = app_slot
    settings = settings_for(service.tokens, people=json.dumps(quick_hashes(PEOPLE)), supersede_role=SUPERSEDE_ROLE)
    with slot.serving(create_app(settings, service.store)):
        yield url


@contextmanager
def signed_in(url: str, agent: str) -> Iterator[Visitor]:
    with visitor(url) as browser:
        answer = browser.sign_in(agent, next(p["password"] for p in PEOPLE if p["agent"] == agent))
        assert answer.status_code == 303, answer.text
        yield browser


def page(browser: Visitor, path: str) -> str:
    answer = browser.get(path)
    assert answer.status_code == 200, answer.text
    return answer.text


def forms(html: str) -> list[str]:
    """Where each form on the page posts (the sign-out form every page carries left out)."""
    return [a for a in re.findall(r'<form[^>]*method="post" action="([^"]+)"', html) if a != "/sign-out"]


def posted(browser: Visitor, path: str, data: dict[str, str]) -> httpx.Response:
    """A form sent as a browser sends it, with the session's token read from the page it is on."""
    return browser.post(path, data={"csrf_token": browser.csrf(), **data})


def refusal(answer: httpx.Response) -> str:
    """The message a refused form came back with, as the person reads it."""
    return unescape(shown_error(answer.text))


def approvals(service: Service) -> list[dict]:
    return service.http.get(f"/evaluations/{ID}/approvals").json()["approvals"]


def attestations(service: Service) -> list[dict]:
    return service.http.get(f"/evaluations/{ID}/attestations").json()["attestations"]
