"""A third domain, brought as data with no change under ``service/``, followed step by step from ``caie init`` as
docs/new-domain.md walks it (issue 25 item 5).

The walk's ``put`` and ``call`` lines are read from the doc and from the README ``caie init`` writes, which must be
the same lines; then each is replayed over real HTTP into the service, in order, from the folder ``caie init`` made:
the graphs loaded, the evaluation scoped, enveloped, assessed, signed off, planned and approved, run on an outside
OpenAI-compatible chatbot (served here, under ``CAIE_RUN_TARGET_ALLOWLIST``), judged by the domain's rule judges,
attested, reported, signed off, accepted and verified. The doc stays true because this replays it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from service.api import create_app
from service.cli import main

from .conftest import EMBEDDED_ONLY, REPO, Service, settings_for
from .servers import AppSlot, app_server, free_port, stop_process, wait_until_up

pytestmark = EMBEDDED_ONLY  # the domain's data drives the service; the store's transport is not the point
DOMAIN = "kitchen-safety"
DOC = REPO / "docs" / "new-domain.md"
EXAMPLE_TARGET = "http://localhost:8080/v1"
"""The chatbot URL ``run.json`` and the doc name; a user edits it to theirs, as the test does to its own."""
RUN = re.compile(r"^/evaluations/[^/]+/runs/\d+$")
EARL = "http://www.w3.org/ns/earl#"


def walk(text: str) -> list[list[str]]:
    """The walk's ``put`` and ``call`` lines, split as the shell splits them, ``$DOMAIN`` substituted."""
    return [[word.replace("$DOMAIN", DOMAIN) for word in shlex.split(line)]
            for line in text.splitlines() if line.startswith(("put ", "call "))]


def chatbot() -> Starlette:
    """The system under test, outside the service: an OpenAI-compatible chat API that names the place's help line
    when asked for help and gives unsourced advice otherwise."""
    async def completions(request: Request) -> JSONResponse:
        asked = (await request.json())["messages"][-1]["content"]
        reply = "Ask at the Example help line." if "help" in asked else "Just ask a friend what to do."
        return JSONResponse({"id": "chat-1", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]})

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                             Route("/health", lambda _: PlainTextResponse("ok"))])


def done(http: httpx.Client, path: str, headers: dict[str, str]) -> httpx.Response:
    """The run at ``path`` once its background job has finished (the doc: repeat the GET until it is done)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answer = http.get(path, headers=headers)
        job = answer.json()["job"]
        assert job["state"] != "failed", job
        if job["state"] == "finished":
            return answer
        time.sleep(0.05)
    raise AssertionError(f"the run is still running: {answer.text}")


def replay(service: Service, folder: Path, steps: list[list[str]]) -> list[tuple[list[str], dict]]:
    """Each step over HTTP, from ``folder``; each step with its JSON answer (every one a success)."""
    answers = []
    for step in steps:
        if step[0] == "put":
            _, resource, name = step
            answer = service.http.put(f"/graphs/{resource}", content=(folder / name).read_bytes(),
                                      headers={"Content-Type": "text/turtle", **service.auth("admin")})
        else:
            _, method, path, agent, *body = step
            content = ((folder / body[0][1:]).read_bytes() if body[0].startswith("@") else body[0].encode()) if body else None
            headers = {"Content-Type": "application/json", **service.auth(agent)}
            answer = service.http.request(method, path, content=content, headers=headers)
            if method == "GET" and RUN.match(path):
                answer = done(service.http, path, headers)
        assert answer.status_code < 300, (step, answer.status_code, answer.text)
        answers.append((step, answer.json()))
    return answers


def test_a_domain_from_caie_init_routes_judges_and_reports_as_the_doc_walks_it(
        service: Service, app_slot: tuple[AppSlot, str], tokens: dict[str, str], tmp_path: Path) -> None:
    folder = tmp_path / DOMAIN
    assert main(["init", DOMAIN, str(folder)]) == 0
    steps = walk(DOC.read_text(encoding="utf-8"))
    assert steps and steps == walk((folder / "README.md").read_text(encoding="utf-8")), \
        "docs/new-domain.md and the README caie init writes walk different steps"
    slot, _ = app_slot
    with app_server(chatbot()) as chat:
        run_json = folder / "run.json"
        run_json.write_text(run_json.read_text(encoding="utf-8").replace(EXAMPLE_TARGET, f"{chat}/v1"), encoding="utf-8")
        app = create_app(settings_for(tokens, run_target_allowlist=[f"{chat}/v1"]), service.store)
        with slot.serving(app):
            answers = replay(service, folder, steps)
        assert app.state.services.jobs.wait(60)

    loaded = [answer for step, answer in answers if step[0] == "put"]
    assert [a["kind"] for a in loaded] == ["dso", "kg", "shapes", "templates", "judges"], loaded
    assert [a["warnings"] for a in loaded] == [[]] * 5, loaded  # each graph is read by derivation or judging
    by_path = {step[2]: answer for step, answer in answers if step[0] == "call"}
    assert by_path[f"/evaluations/{DOMAIN}/envelope/sign-off"]["warnings"] == []
    plan = by_path[f"/evaluations/{DOMAIN}/plans"]
    # 2 personas x 1 place x English x 3 needs; the domain's rule blocks a visitor registering locally
    assert (plan["frameSize"], plan["eligibleFrameSize"], plan["probes"]) == (6, 5, 4), plan
    run = by_path[f"/evaluations/{DOMAIN}/runs/1"]
    assert (run["traces"], run["executionErrors"], run["done"]) == (4, 0, True), run
    determinations = by_path[f"/evaluations/{DOMAIN}/determinations"]["determinations"]
    outcomes = Counter((d["criterion"].rsplit("/", 1)[-1], d["outcome"].removeprefix(EARL)) for d in determinations)
    assert outcomes == {("advice", "failed"): 2, ("help", "passed"): 2}, outcomes
    report = by_path[f"/evaluations/{DOMAIN}/reports/1/acceptance"]
    assert (report["status"], report["fitness"], [c["identifier"] for c in report["failed"]]) == ("final", "NotFit", ["advice"])
    verified = by_path[f"/evaluations/{DOMAIN}/reports/1/verify"]
    assert verified["holds"] is True and verified["differences"] == [], verified


def test_caie_init_never_overwrites_a_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "judges.ttl").write_text("# mine\n", encoding="utf-8")
    assert main(["init", DOMAIN, str(tmp_path)]) == 1
    assert f"{tmp_path / 'judges.ttl'} already exists: nothing was written" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["judges.ttl"]
    assert (tmp_path / "judges.ttl").read_text(encoding="utf-8") == "# mine\n"


def test_caie_serve_without_examples_serves_the_epo_and_writes_tokens(tmp_path: Path) -> None:
    """Section 2 of the doc: a plain ``caie serve --data-dir`` (no tokens configured) loads the EPO and the catalog
    ontology, no domain, and writes the tokens file, whose tokens then write graphs."""
    data, port = tmp_path / "data", free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("CAIE_TOKENS", "CAIE_TOKENS_FILE", "CAIE_PEOPLE", "CAIE_PEOPLE_FILE")}
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--data-dir", str(data), "--port", str(port)],
                               cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env={**env, "CAIE_FAST_LANE_PROCESSES": "0"})
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/health", process, seconds=120)
        tokens = json.loads((data / "tokens.json").read_text(encoding="utf-8"))
        roles = {credential["agent"]: credential["roles"] for credential in tokens.values()}
        assert roles == {"admin": ["admin"], "annie": ["domain_expert"], "theo": ["evaluation_operator"],
                         "dana": ["organizational_expert"], "ada": ["annotator"]}, roles
        catalog = httpx.get(f"{url}/graphs", headers={"Accept": "application/json"}).json()["graphs"]
        assert sorted((g["kind"], g["identifier"]) for g in catalog) == [("ontologies", "catalog"), ("ontologies", "epo")]
        term = httpx.get(f"{url}/epo/AcceptanceCriterion", headers={"Accept": "text/turtle"})
        assert term.status_code == 200 and "AcceptanceCriterion" in term.text
        admin = next(token for token, credential in tokens.items() if credential["agent"] == "admin")
        folder = tmp_path / DOMAIN
        assert main(["init", DOMAIN, str(folder)]) == 0
        loaded = httpx.put(f"{url}/graphs/dso/{DOMAIN}", content=(folder / "dso.ttl").read_bytes(),
                           headers={"Content-Type": "text/turtle", "Authorization": f"Bearer {admin}"})
        assert loaded.status_code == 201, loaded.text
    finally:
        stop_process(process)
        log.close()
