"""The evaluation operator's pages (issue 24 §5), over real HTTP as a signed-in person's browser sends them: a run
started from the runs page is the person's in the REST record; an unapproved plan is not offered and is refused by
the domain when posted anyway; a target the deployment does not allow is refused in the form; a run whose job
failed shows why, its Retry continues it, and its execution errors are listed as the record holds them; a run whose
target failed some probes has them retried from its page once the target recovers, the earlier errors still listed;
a person without the role, and a form without its CSRF token, get 403. Then in Chromium: the run's page follows the
run to its end without a reload, and both pages pass axe, labels, console and width checks on a laptop and a phone.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest
from caie_vaccine.demo import DEMO_VERSION, DemoChatbot
from playwright.sync_api import Page, ViewportSize, expect

from service.api import create_app
from service.core.config import Credential
from service.runs.cases import record_cases
from service.runs.model import ExecutionError, ExecutionSettings
from service.runs.records import plan_probes, start_run
from service.runs.retries import retry_errors

from ..api.workspace import Visitor, hidden, quick_hashes, shown_error, visitor
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, graphs_over, settings_for
from ..pages_browser import LAPTOP, PHONE, assert_accessible, assert_fits_width, assert_labelled, keep_screenshot
from ..plan.test_second_domain_plan import ID
from ..runs.test_run_record import PROBES
from ..servers import AppSlot, free_port

pytestmark = EMBEDDED_ONLY  # the pages call the runs domain, whose store transport tests/runs covers
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
KEY_ENV = "CAIE_TEST_OPERATOR_TARGET_KEY"
RUNS = f"/evaluations/{ID}/workspace/runs"
THEO = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))


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


ERRORS = """PREFIX epo: <https://w3id.org/ob-caie/epo/>
SELECT ?case ?kind ?attempts ?message WHERE {
  GRAPH ?case { ?case epo:inRun <%s> . ?error a epo:ExecutionError ; epo:errorKind ?kind ; epo:requestAttempts ?attempts ;
                                                epo:errorMessage ?message } }"""
ERROR_ROW = re.compile(
    r'<tr><td><a href="([^"]+)"[^>]*>Probe (\d+)</a></td><td><a [^>]*>(\w+)</a></td><td>([^<]*)</td>\s*'
    r'<td class="number">(\d+)</td><td class="number">(\d+)</td>'
)


def test_a_failed_run_shows_why_retry_continues_it_and_its_execution_errors_are_listed(
    approved: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target whose key variable is unset stops the job before any case (the reason shown); with the key set,
    Retry continues the run, and every probe ends in an execution error: nothing listens at the target's port."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    down = f"http://127.0.0.1:{free_port()}/v1"
    with (
        pages(approved, app_slot, tokens, run_target_allowlist=[down], key_envs=[KEY_ENV]) as url,
        signed_in(url, "theo") as theo,
    ):
        page = theo.get(RUNS).text
        assert f'<option value="{KEY_ENV}">{KEY_ENV}</option>' in page
        started = theo.post(
            RUNS,
            data=start_form(
                page,
                kind="openai-compatible",
                base_url=down,
                model="bednets-bot 9",
                api_key_env=KEY_ENV,
                outside_boundary="a target that is down, on purpose",
                retries="0",
                timeout_seconds="5",
            ),
        )
        assert started.status_code == 303, shown_error(started.text)
        failed = job_ended(url, 1)
        assert failed["job"]["state"] == "failed" and KEY_ENV in failed["job"]["error"] and failed["cases"] == 0
        shown = theo.get(f"{RUNS}/1").text
        assert "state-failed" in shown and "The run stopped before its end" in shown and KEY_ENV in shown
        assert "its 6 probes with no case yet" in shown

        monkeypatch.setenv(KEY_ENV, "sk-operator-test-secret")
        retried = theo.post(
            f"{RUNS}/1/continuation",
            data={
                "csrf_token": hidden(shown, "csrf_token", "run-form"),
                "api_key_env": KEY_ENV,
                "retries": "0",
                "timeout_seconds": "5",
            },
        )
        assert retried.status_code == 303 and retried.headers["location"] == f"{RUNS}/1?done=continued"
        run = job_ended(url, 1)
        assert (run["job"]["state"], run["cases"], run["traces"], run["executionErrors"]) == (
            "finished",
            PROBES,
            0,
            PROBES,
        )

        shown = theo.get(f"{RUNS}/1").text
        rows = ERROR_ROW.findall(shown)
        recorded = httpx.get(
            f"{url}/sparql",
            params={"query": ERRORS % run["run"]},
            headers={"Accept": "application/sparql-results+json"},
        ).json()["results"]["bindings"]
        assert sorted((href, kind, attempts) for href, _, kind, _, _, attempts in rows) == sorted(
            (
                r["case"]["value"].removeprefix(BASE_URL.rstrip("/")),
                r["kind"]["value"].rsplit("/", 1)[-1],
                r["attempts"]["value"],
            )
            for r in recorded
        )
        assert [int(number) for _, number, *_ in rows] == list(range(1, PROBES + 1))
        assert {kind for _, _, kind, *_ in rows} == {"TargetUnreachable"} and all(down in m for *_, m, _, _ in rows)
        assert "Execution errors (6)" in shown and "Retry the 6 execution errors</button>" in shown
        assert "sk-operator-test-secret" not in shown + json.dumps(run)


RETRIED_ROW = re.compile(
    r'<tr><td><a href="([^"]+)"[^>]*>Probe (\d+)</a></td><td><a [^>]*>(\w+)</a></td><td>([^<]*)</td>\s*'
    r'<td class="number">(\d+)</td><td><a href="([^"]+)"[^>]*>attempt 2</a></td></tr>'
)


def test_a_target_that_failed_some_probes_has_them_retried_from_the_run_page_and_the_earlier_errors_stay(
    approved: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str], chat_server: str
) -> None:
    """A chat server down for every other conversation (503) leaves 3 execution errors; a viewer sees them and no
    form, and is refused; without its CSRF token the form is refused; once the server recovers, the operator's Retry
    gives each a new attempt, answered, and the page lists the earlier attempts with their errors, linked to the new."""
    model, chat = f"outage-{secrets.token_hex(4)}", f"{chat_server}/v1"
    with pages(approved, app_slot, tokens, run_target_allowlist=[chat]) as url, signed_in(url, "theo") as theo:
        started = theo.post(
            RUNS,
            data=start_form(
                theo.get(RUNS).text,
                kind="openai-compatible",
                base_url=chat,
                model=model,
                outside_boundary="a test server with an outage",
                retries="0",
                concurrency="2",
            ),
        )
        assert started.status_code == 303, shown_error(started.text)
        assert job_ended(url, 1)["executionErrors"] == 3
        shown = theo.get(f"{RUNS}/1").text
        assert "Execution errors (3)" in shown and "Retry the 3 execution errors</button>" in shown
        assert "Retried (" not in shown and len(ERROR_ROW.findall(shown)) == 3
        with signed_in(url, "vera") as vera:
            seen = vera.get(f"{RUNS}/1").text
            assert "Execution errors (3)" in seen and "Retry the" not in seen and "<form class=\"run-form\"" not in seen
            assert vera.post(f"{RUNS}/1/retries", data={"csrf_token": hidden(seen, "csrf_token")}).status_code == 403
        assert theo.post(f"{RUNS}/1/retries", data={"retries": "0"}).status_code == 403
        assert httpx.get(f"{url}/evaluations/{ID}/runs/1/retries").json()["retries"] == []

        assert httpx.post(f"{chat_server}/recover/{model}").status_code == 200
        retried = theo.post(
            f"{RUNS}/1/retries",
            data={"csrf_token": hidden(shown, "csrf_token", "run-form"), "retries": "0", "concurrency": "2"},
        )
        assert retried.status_code == 303 and retried.headers["location"] == f"{RUNS}/1?done=retried"
        assert "The retry started" in theo.get(retried.headers["location"]).text
        run = job_ended(url, 1)
        assert (run["job"]["state"], run["cases"], run["traces"], run["executionErrors"], run["attempts"]) == (
            "finished",
            PROBES,
            PROBES,
            0,
            PROBES + 3,
        )

        shown = theo.get(f"{RUNS}/1").text
        assert "Execution errors (0)" in shown and "Retried (3)" in shown and "nothing is left to run" in shown
        assert re.search(
            r'>Retry 1</a></td><td><a [^>]*>theo</a></td>\s*<td><time[^>]*>[^<]+</time></td>'
            r'<td class="number">3</td>\s*<td class="number">3</td><td class="number">0</td>',
            shown,
        )
        rows = RETRIED_ROW.findall(shown)
        assert [(kind, attempt) for _, _, kind, _, attempt, _ in rows] == [("TargetHttpError", "1")] * 3
        assert all("503" in message and later == f"{case}/attempts/2" for case, _, _, message, _, later in rows)

        assert '<form class="run-form"' not in shown  # nothing left to retry: posted anyway, the domain says why
        again = theo.post(f"{RUNS}/1/retries", data={"csrf_token": hidden(shown, "csrf_token"), "retries": "0"})
        assert again.status_code == 409 and "no execution error to retry" in shown_error(again.text)


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


def sign_in_page(page: Page, url: str, agent: str, next_path: str) -> None:
    page.goto(f"{url}/sign-in?next={next_path}")
    page.fill("#username", agent)
    page.fill("#password", PASSWORDS[agent])
    page.click("form.sign-in button[type=submit]")
    page.wait_for_url(f"{url}{next_path}")


def checked(page: Page, name: str) -> None:
    assert_accessible(page)
    assert_labelled(page)
    assert_fits_width(page)
    keep_screenshot(page, name)


def test_the_run_page_follows_the_run_to_its_end_in_the_browser_on_a_laptop_and_a_phone(
    approved: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str], new_page: Callable[[ViewportSize], Page]
) -> None:
    graphs = graphs_over(approved.store)
    with pages(approved, app_slot, tokens) as url:
        laptop = new_page(LAPTOP)
        sign_in_page(laptop, url, "theo", RUNS)
        checked(laptop, "operator-runs-form")
        laptop.select_option("#plan", "1")
        laptop.check("input[name=kind][value=demo]")
        laptop.fill("#concurrency", "1")
        laptop.fill("#rate_per_second", "2")  # six probes over about three seconds: the page sees them come
        laptop.click("form.run-form button[type=submit]")
        laptop.wait_for_url(f"{url}{RUNS}/1?done=started")
        assert laptop.text_content("#run-state") == "running"
        laptop.evaluate("window.notReloaded = true")
        expect(laptop.locator("#run-state")).to_have_text("finished", timeout=60_000)
        assert laptop.evaluate("window.notReloaded === true")  # followed by the script, not by a reload
        assert laptop.text_content("#run-cases") == str(PROBES) and laptop.get_attribute(
            "#run-progress", "value"
        ) == str(PROBES)
        checked(laptop, "operator-run-finished")

        # a run with execution errors, recorded as a runner records them, for the widest tables on a phone: four
        # retried (answered), then two more (the run's latest errors, with the retry form)
        run = start_run(graphs, ID, 1, DEMO_VERSION, ExecutionSettings(), THEO)
        errors = [
            ExecutionError(
                probe=p.iri,
                target=DEMO_VERSION.fingerprint,
                kind="http_status",
                status=503,
                turn=1,
                attempts=3,
                message=f"POST https://chat.example.org/v1/chat/completions answered 503: {'upstream overloaded ' * 6}",
            )
            for p in plan_probes(graphs, ID, run.plan)
        ]
        record_cases(graphs, ID, run.number, errors[:4], THEO)
        with ThreadPoolExecutor(1) as thread:  # off Playwright's event loop: a retry runs its own
            thread.submit(retry_errors, graphs, ID, run.number, DemoChatbot(), ExecutionSettings(), THEO).result()
        record_cases(graphs, ID, run.number, errors[4:], THEO)
        phone = new_page(PHONE)
        sign_in_page(phone, url, "theo", f"{RUNS}/{run.number}")
        assert phone.locator("table.errors:not(.retried) tbody tr").count() == 2
        assert phone.locator("table.retried tbody tr").count() == 4 and phone.text_content("#run-state") == "finished"
        checked(phone, "operator-run-errors-phone")
        phone.goto(f"{url}{RUNS}")
        checked(phone, "operator-runs-phone")
