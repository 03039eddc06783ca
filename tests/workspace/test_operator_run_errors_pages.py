"""The evaluation operator's run page when the target fails (issue 24 §5), over real HTTP as a signed-in person's
browser sends it: a run whose job failed shows why, its Retry continues it, and its execution errors are listed as
the record holds them; a run whose target failed some probes has them retried from its page once the target
recovers, the earlier errors still listed; a viewer sees no retry form and is refused, as is a form without its CSRF
token. Starting a run: test_operator_run_start_pages.py; the pages in Chromium: test_operator_pages_browser.py.
"""

from __future__ import annotations

import json
import re
import secrets

import httpx
import pytest

from ..api.workspace import hidden, shown_error
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from ..runs.test_run_record import PROBES
from ..servers import AppSlot, free_port
from .operator_pages import RUNS, job_ended, pages, signed_in, start_form

pytestmark = EMBEDDED_ONLY  # the pages call the runs domain, whose store transport tests/runs covers


KEY_ENV = "CAIE_TEST_OPERATOR_TARGET_KEY"
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
