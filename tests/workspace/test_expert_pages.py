"""The domain expert's workspace pages over real HTTP (service/api/routers/workspace_expert*.py), on the bed-nets test
domain at each stage its experts act in: a drafted envelope, a plan made, a run judged. People sign in through the
form; each action a page offers is checked against what the REST routes then return. A person whose roles do not
allow an action is not shown its form and gets 403 for posting it anyway; a form without the session's CSRF token
gets 403; a refused form comes back with the message and the values sent, under the refusal's status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from markupsafe import escape

from service.api import create_app
from service.core.catalog import GraphKind
from service.core.graphs import GraphService

from ..api.workspace import Visitor, hidden, shown_error, visitor
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, graphs_over, restored, settings_for
from ..judgments.test_judgments_api import judged  # noqa: F401
from ..plan.test_second_domain_plan import ID, domain_json, load_domain, planned, sign_off  # noqa: F401
from ..runs.test_run_record import approved  # noqa: F401

pytestmark = EMBEDDED_ONLY  # what the pages show is how a record reads, not the store's transport
PEOPLE = [
    {"agent": "annie", "username": "annie", "password": "annie's long password", "roles": ["domain_expert"]},
    {"agent": "erin", "username": "erin", "password": "erin's long password", "roles": ["domain_expert"]},
    {"agent": "lena", "username": "lena", "password": "lena's long password", "roles": ["domain_expert", "lead_expert"]},
    {"agent": "dana", "username": "dana", "password": "dana's long password", "roles": ["organizational_expert"]},
    {"agent": "theo", "username": "theo", "password": "theo's long password", "roles": ["evaluation_operator"]},
    {"agent": "vera", "username": "vera", "password": "vera's long password", "roles": ["viewer"]},
]
SUPERSEDE_ROLE = "lead_expert"
WORKSPACE = f"/evaluations/{ID}/workspace"
CRITERIA = [c["id"] for c in domain_json("envelope.json")["criteria"]]


def draft(service: Service) -> None:
    """The domain loaded, the evaluation scoped and its envelope written: nothing assessed yet."""
    load_domain(service)
    made = service.http.post("/evaluations", json=domain_json("evaluation.json"), headers=service.auth("theo"))
    assert made.status_code == 201, made.text
    enveloped = service.http.put(f"/evaluations/{ID}/envelope", json=domain_json("envelope.json"),
                                 headers=service.auth("theo"))
    assert enveloped.status_code == 201, enveloped.text


@pytest.fixture
def drafted(service: Service, snapshots: dict) -> Service:
    return restored(service, snapshots, "bed-nets envelope drafted, nothing assessed", draft)


@contextmanager
def people_site(service: Service, app_slot: tuple) -> Iterator[str]:
    """The service over ``service``'s store with :data:`PEOPLE` who sign in and the deployment's supersede role;
    ``service.http`` (bearer tokens) reaches the same app."""
    slot, url = app_slot
    settings = settings_for(service.tokens, people=json.dumps(PEOPLE), supersede_role=SUPERSEDE_ROLE)
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


def token(html: str) -> str:
    return hidden(html, "csrf_token")


def posted(browser: Visitor, path: str, data: dict[str, str]) -> object:
    """A form sent as a browser sends it, with the session's token read from the page it is on."""
    return browser.post(path, data={"csrf_token": browser.csrf(), **data})


def approvals(service: Service) -> list[dict]:
    return service.http.get(f"/evaluations/{ID}/approvals").json()["approvals"]


def test_the_envelope_page_records_each_assessment_and_the_sign_off_by_role(drafted: Service, app_slot: tuple) -> None:
    criterion = f"{BASE_URL}evaluations/{ID}/envelope/v1/criteria/{CRITERIA[0]}"
    envelope = f"{WORKSPACE}/envelope"
    with people_site(drafted, app_slot) as url:
        with signed_in(url, "vera") as vera:
            html = page(vera, envelope)
            for c in domain_json("envelope.json")["criteria"]:
                assert escape(c["statement"]) in html
            assert forms(html) == []  # a viewer reads the envelope and is offered no action
            refused = posted(vera, f"{envelope}/relevance/{CRITERIA[0]}", {"relevant": "true", "rationale": "x"})
            assert refused.status_code == 403 and "lacks the role" in refused.text  # type: ignore[attr-defined]
        assert approvals(drafted) == []

        with signed_in(url, "annie") as annie:
            html = page(annie, envelope)
            assert sorted(forms(html)) == sorted([f"{envelope}/dso-appropriateness", f"{envelope}/appropriateness",
                                                  *(f"{envelope}/relevance/{c}" for c in CRITERIA)])
            no_token = annie.post(f"{envelope}/relevance/{CRITERIA[0]}", data={"relevant": "true", "rationale": "x"})
            assert no_token.status_code == 403 and "CSRF" in no_token.text
            unexplained = posted(annie, f"{envelope}/relevance/{CRITERIA[0]}", {"relevant": "false", "rationale": " "})
            assert unexplained.status_code == 422  # type: ignore[attr-defined]
            assert "note: Field required" in shown_error(unexplained.text)  # type: ignore[attr-defined]
            assert re.search(r'value="false" checked', unexplained.text)  # type: ignore[attr-defined]  # kept
            assert approvals(drafted) == []

            done = posted(annie, f"{envelope}/relevance/{CRITERIA[0]}", {"relevant": "true", "rationale": "it matters"})
            assert done.status_code == 303  # type: ignore[attr-defined]
            back = done.headers["location"]  # type: ignore[attr-defined]
            assert back == f"{envelope}?done=relevance-{CRITERIA[0]}#relevance-{CRITERIA[0]}"
            assert f"Recorded: the relevance of {CRITERIA[0]}." in page(annie, back)
            (record,) = approvals(drafted)
            assert (record["kind"], record["subject"], record["outcome"], record["agent"], record["comment"]) == (
                "relevance", criterion, "passed", "annie", "it matters")
            status = drafted.http.get(f"/evaluations/{ID}/envelope").json()["status"]
            assert status["relevance"] == {CRITERIA[0]: "passed", **{c: None for c in CRITERIA[1:]}}

        with signed_in(url, "dana") as dana:
            html = page(dana, envelope)
            assert forms(html) == [f"{envelope}/sign-off"]
            early = posted(dana, f"{envelope}/sign-off", {"comment": "too soon"})
            assert early.status_code == 409  # type: ignore[attr-defined]
            assert "cannot be signed off yet" in shown_error(early.text)  # type: ignore[attr-defined]

        with signed_in(url, "annie") as annie:
            for path, data in [("dso-appropriateness", {"appropriate": "true", "rationale": "models nets"}),
                               *((f"relevance/{c}", {"relevant": "true", "rationale": "matters"}) for c in CRITERIA[1:]),
                               ("appropriateness", {"appropriate": "true", "rationale": "fits the public"})]:
                assert posted(annie, f"{envelope}/{path}", data).status_code == 303, path  # type: ignore[attr-defined]
        status = drafted.http.get(f"/evaluations/{ID}/envelope").json()["status"]
        assert (status["dsoAppropriateness"], status["appropriateness"], status["missingForSignOff"]) == (
            "passed", "passed", [])

        with signed_in(url, "dana") as dana:
            assert posted(dana, f"{envelope}/sign-off", {"comment": ""}).status_code == 303  # type: ignore[attr-defined]
            html = page(dana, envelope)
            assert "signed off</a></strong> by dana" in html
        assert drafted.http.get(f"/evaluations/{ID}/envelope").json()["status"]["signedOff"] is True
