"""The evaluation operator's runs page starting a run (issue 24 §5), over real HTTP as a signed-in person's browser
sends it: a run started from the page is the person's in the REST record; an unapproved plan is not offered and is
refused by the domain when posted anyway; a target or setting the deployment does not allow is refused in the form,
shown again with the reason; a person without the role, and a form without its CSRF token, get 403. The run's
execution errors: test_operator_run_errors_pages.py; the pages in Chromium: test_operator_pages_browser.py.
"""

from __future__ import annotations

import re

import httpx
import pytest
from caie_vaccine.demo import DEMO_VERSION

from ..api.workspace import hidden, shown_error
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from ..runs.test_run_record import PROBES
from ..servers import AppSlot
from .operator_pages import RUNS, job_ended, offered_plans, pages, signed_in, start_form

pytestmark = EMBEDDED_ONLY  # the pages call the runs domain, whose store transport tests/runs covers


def test_an_operator_starts_a_run_from_the_page_and_it_is_theirs_in_the_record(
    approved: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str]
) -> None:
    with pages(approved, app_slot, tokens) as url, signed_in(url, "theo") as theo:
        page = theo.get(RUNS)
        assert page.status_code == 200 and "No run yet." in page.text and offered_plans(page.text) == ["1"]
        assert 'type="password"' not in page.text  # a key is never asked for
        started = theo.post(RUNS, data=start_form(page.text, concurrency="2"))
        assert started.status_code == 303 and started.headers["location"] == f"{RUNS}/1?done=started"
        assert "The run started" in theo.get(started.headers["location"]).text

        run = job_ended(url, 1)
        assert run["job"]["state"] == "finished" and run["startedBy"] == f"{BASE_URL}agents/theo"
        assert (run["cases"], run["probes"], run["done"], run["settings"]["concurrency"]) == (PROBES, PROBES, True, 2)
        assert run["targetFingerprint"] == DEMO_VERSION.fingerprint
        shown = theo.get(f"{RUNS}/1").text
        assert re.search(r'id="run-cases">6</span> of <span id="run-probes">6</span>', shown)
        assert 'id="run-state" class="state state-finished">finished<' in shown and "Execution errors (0)" in shown
        assert "Every probe has its case" in shown and 'http-equiv="refresh"' not in shown
        listed = theo.get(RUNS).text
        assert f'href="{RUNS}/1">Run 1</a>' in listed and ">theo</a>" in listed and "6 of 6 probes" in listed


def test_an_unapproved_plan_is_not_offered_and_posting_it_gets_the_domains_refusal(
    planned: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str]
) -> None:
    with pages(planned, app_slot, tokens) as url, signed_in(url, "theo") as theo:
        page = theo.get(RUNS).text
        assert offered_plans(page) == [] and "No plan is approved now" in page
        assert "Plans not offered (1): no domain expert approved them" in page
        token = hidden(page, "csrf_token")
        refused = theo.post(RUNS, data={"csrf_token": token, "plan": "1", "kind": "demo"})
        assert refused.status_code == 409
        assert shown_error(refused.text).startswith("nothing can run on plan 1")
        assert "no domain expert has approved the plan" in shown_error(refused.text)
        assert httpx.get(f"{url}/evaluations/{ID}/runs").json()["runs"] == []


@pytest.mark.parametrize(
    ("fields", "status", "phrase"),
    [
        (
            {"kind": "openai-compatible", "base_url": "http://169.254.169.254/v1", "model": "m"},
            422,
            "target &#39;http://169.254.169.254/v1&#39; is not among the targets this deployment may call",
        ),
        (
            {"kind": "openai-compatible", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "HOME"},
            422,
            "api_key_env &#39;HOME&#39; is not among the variables",
        ),
        (
            {"kind": "openai-compatible", "base_url": "ftp://127.0.0.1/v1", "model": "m"},
            422,
            "Endpoint URL: String should match",
        ),
        ({"concurrency": "0"}, 422, "Conversations at once: Input should be greater than or equal to 1"),
        ({"plan": "7"}, 404, "has no plan 7"),
    ],
)
def test_a_refused_target_or_setting_shows_the_form_again_with_the_reason(
    approved: Service,
    app_slot: tuple[AppSlot, str],
    tokens: dict[str, str],
    fields: dict[str, str],
    status: int,
    phrase: str,
) -> None:
    with (
        pages(approved, app_slot, tokens, run_target_allowlist=["http://127.0.0.1:9/v1"]) as url,
        signed_in(url, "theo") as theo,
    ):
        refused = theo.post(RUNS, data=start_form(theo.get(RUNS).text, **fields))
        assert refused.status_code == status and phrase in shown_error(refused.text), shown_error(refused.text)
        if "base_url" in fields:  # filled in again as sent
            assert f'name="base_url" type="url" value="{fields["base_url"]}"' in refused.text
        assert offered_plans(refused.text) == ["1"]
        assert httpx.get(f"{url}/evaluations/{ID}/runs").json()["runs"] == []


def test_a_person_without_the_role_sees_no_form_and_is_refused_and_a_form_needs_its_csrf_token(
    approved: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str]
) -> None:
    with pages(approved, app_slot, tokens) as url:
        started = httpx.post(
            f"{url}/evaluations/{ID}/runs", json={"plan": 1, "target": {"kind": "demo"}}, headers=approved.auth("theo")
        )
        assert started.status_code == 202 and job_ended(url, 1)["done"]
        with signed_in(url, "annie") as annie:
            page = annie.get(RUNS).text
            assert "Start a run" not in page and 'action="/evaluations/bednets/workspace/runs"' not in page
            assert "Retry" not in annie.get(f"{RUNS}/1").text
            token = hidden(page, "csrf_token")
            assert annie.post(RUNS, data={"csrf_token": token, "plan": "1", "kind": "demo"}).status_code == 403
            assert annie.post(f"{RUNS}/1/continuation", data={"csrf_token": token}).status_code == 403
        with signed_in(url, "theo") as theo:
            assert theo.post(RUNS, data={"plan": "1", "kind": "demo"}).status_code == 403
            assert theo.post(RUNS, data={"csrf_token": "not-the-token", "plan": "1", "kind": "demo"}).status_code == 403
            assert theo.post(f"{RUNS}/1/continuation", data={"retries": "1"}).status_code == 403
        assert [r["number"] for r in httpx.get(f"{url}/evaluations/{ID}/runs").json()["runs"]] == [1]
