"""The model judge (issue 10 §4) against a real OpenAI-compatible server process (tests/runs/chat_server.py), on
the bed-nets run judged by its rule: determinations with the judge's model, prompt digest and configuration
recorded; answers it cannot parse recorded as JudgeFailure execution errors and never as determinations; and the
separation rule of formal audits (issue 10 §6), on the domain functions with the rule on.
"""

from __future__ import annotations

import json

import pytest

from service.api import create_app
from service.core.config import Credential, Settings
from service.core.errors import Forbidden
from service.judgments.attestations import attest
from service.judgments.model_judge import PROMPT_DIGEST, PROMPT_VERSION, read_verdict
from service.judgments.records import Ruling, record_rulings
from service.judgments.separation import Separation

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, dump, graphs_over, settings_for
from .test_judgments_api import EARL, ID, probes

pytestmark = EMBEDDED_ONLY
EPO = "https://w3id.org/ob-caie/epo/"
FAILURES = f"""
    PREFIX epo: <{EPO}>
    PREFIX prov: <http://www.w3.org/ns/prov#>
    SELECT ?error ?message ?answer ?judge WHERE {{
      GRAPH ?batch {{ ?error a epo:ExecutionError ; epo:errorKind epo:JudgeFailure ; epo:errorMessage ?message ;
                              prov:wasAttributedTo ?judge ; epo:errorIn ?turn .
                       OPTIONAL {{ ?error prov:value ?answer }} }}
    }}"""
CONFIGURATION = f"SELECT ?configuration WHERE {{ GRAPH ?g {{ <%s> <{EPO}configuration> ?configuration }} }}"


def sparql(service: Service, query: str) -> list[dict[str, str]]:
    answer = service.http.get("/sparql", params={"query": query}, headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.text
    return [{name: cell["value"] for name, cell in row.items()} for row in answer.json()["results"]["bindings"]]


def test_a_model_judge_determines_and_what_it_cannot_parse_is_a_judge_failure(
    judged: Service, chat_server: str, app_slot
) -> None:
    slot, _ = app_slot
    url = f"/evaluations/{ID}/runs/1/model-judgments"
    target = {"kind": "openai-compatible", "base_url": f"{chat_server}/v1", "model": "judge-ok"}
    with slot.serving(create_app(settings_for(judged.tokens, run_target_allowlist=[chat_server]), judged.store)):
        before = len(dump(judged.store))
        refusals = [
            (
                {"target": {**target, "base_url": "http://127.0.0.2:9/v1"}, "criteria": ["hanging"]},
                "theo",
                422,
                "not among the targets",
            ),
            (
                {"target": {**target, "parameters": {"temperature": 0.7}}, "criteria": ["hanging"]},
                "theo",
                422,
                "temperature 0",
            ),
            ({"target": target, "criteria": ["hanging", "c99"]}, "theo", 422, "no criterion 'c99'"),
            (
                {"target": {**target, "api_key_env": "NO_JUDGE_KEY_HERE"}, "criteria": ["hanging"]},
                "theo",
                422,
                "NO_JUDGE_KEY_HERE",
            ),
            ({"target": target, "criteria": ["hanging"]}, "annie", 403, "lacks the role"),
        ]
        for body, agent, status, phrase in refusals:
            answer = judged.http.post(url, json=body, headers=judged.auth(agent))
            assert (answer.status_code, phrase in answer.text) == (status, True), (body, answer.text)
        assert len(dump(judged.store)) == before

        made = judged.http.post(url, json={"target": target, "criteria": ["hanging"]}, headers=judged.auth("theo"))
        assert made.status_code == 201, made.text
        garbled = judged.http.post(
            url,
            json={"target": {**target, "model": "judge-garbled"}, "criteria": ["hanging"]},
            headers=judged.auth("theo"),
        )
        assert garbled.status_code == 201, garbled.text
        broken = judged.http.post(
            url, json={"target": {**target, "model": "broken"}, "criteria": ["hanging"]}, headers=judged.auth("theo")
        )  # answers 500
        assert broken.status_code == 201, broken.text

        hanging = probes(judged, "hanging")
        assert len(made.json()["determinations"]) == len(hanging) == 2 and made.json()["failures"] == []
        listed = judged.http.get(
            f"/evaluations/{ID}/determinations", params={"criterion": hanging[0]["criterion"]}
        ).json()["determinations"]
        by_model = [d for d in listed if d["judge"].startswith(f"{BASE_URL}agents/model-judges/")]
        # the garbled judge's answers made none
        assert sorted(d["determination"] for d in by_model) == sorted(made.json()["determinations"])
        for d in by_model:
            assert (d["mode"], d["outcome"], d["method"], d["pointerStart"]) == (
                EARL + "automatic",
                EARL + "passed",
                EPO + "ModelJudge",
                "0",
            )
            assert d["version"].startswith(
                f"judge-ok; prompt {PROMPT_VERSION} sha256:{PROMPT_DIGEST[:16]}; configuration sha256:"
            )
            assert d["rationale"].startswith("the reply opens with")
        configuration = json.loads(sparql(judged, CONFIGURATION % by_model[0]["judge"])[0]["configuration"])
        assert (
            configuration["target"]["model_release"],
            configuration["target"]["parameters"],
            configuration["prompt"]["sha256"],
        ) == ("judge-ok", {"temperature": 0}, PROMPT_DIGEST)

        assert garbled.json()["determinations"] == broken.json()["determinations"] == []
        failures = {f["error"]: f for f in sparql(judged, FAILURES)}
        assert sorted(failures) == sorted(garbled.json()["failures"] + broken.json()["failures"])
        assert len(garbled.json()["failures"]) == len(broken.json()["failures"]) == 2
        assert all(
            "not a verdict" in failures[e]["message"] and failures[e]["answer"].startswith("Looks fine to me")
            for e in garbled.json()["failures"]
        )
        assert all(
            "gave no answer (http_status)" in failures[e]["message"] and "answer" not in failures[e]
            for e in broken.json()["failures"]
        )
        judges = {f["judge"] for f in failures.values()} | {d["judge"] for d in by_model}
        assert len(judges) == 3  # another model, another judge


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("Looks fine: passed.", "Invalid JSON"),
        ('```json\n{"outcome": "passed", "rationale": "ok", "quote": ""}\n```', "Invalid JSON"),
        ('{"outcome": "passed", "rationale": "ok", "quote": "", "confidence": 0.9}', "confidence: Extra inputs"),
        ('{"outcome": "maybe", "rationale": "ok", "quote": ""}', "outcome: Input should be"),
        ('{"outcome": "failed", "rationale": "ok", "quote": 3}', "quote: Input should be a valid string"),
        ('{"outcome": "failed", "rationale": " ", "quote": ""}', "the rationale is empty"),
        ('{"outcome": "failed", "rationale": "ok"}', "quote: Field required"),
        ('{"outcome": "failed", "rationale": "ok", "quote": "go to the clinic"}', "is not text of the reply"),
    ],
)
def test_a_verdict_is_read_strictly(answer: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        read_verdict(answer, "Call the clinic before you go.", 1)


def test_a_verdict_quote_is_the_pointer() -> None:
    reply = "Call the clinic before you go."
    outcome, _, pointer = read_verdict(
        ' {"outcome":"passed","rationale":"it says to call","quote":"the clinic"} ', reply, 2
    )
    assert pointer is not None
    assert (outcome, pointer.turn, reply[pointer.start : pointer.end]) == (EARL + "passed", 2, "the clinic")
    assert read_verdict('{"outcome": "cantTell", "rationale": "no advice", "quote": ""}', reply, 1)[2] is None


def test_with_the_separation_rule_who_ran_a_run_neither_determines_nor_attests_and_no_determiner_attests(
    judged: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIE_SEPARATION", "true")
    assert Settings(base_url=BASE_URL).separation is True
    graphs = graphs_over(judged.store)
    probe = probes(judged, "hanging")[0]
    criterion = probe["criterion"]
    ruling = Ruling(probe["probe"], criterion, 1, EARL + "failed", "says nothing about tying the net up")
    theo = Credential(agent="theo", roles=frozenset({"evaluation_operator", "annotator"}))
    deployment = Separation.of(settings_for(judged.tokens, separation=True), graphs)
    with pytest.raises(Forbidden, match=r"separation rule \(CAIE_SEPARATION.*agent 'theo' ran run 1 .* not determine"):
        record_rulings(graphs, ID, 1, [ruling], theo, separation=deployment)

    rule = Separation(True, {graphs.agent_iri("theo"): "acme-testing", graphs.agent_iri("annie"): "who-evaluation"})
    tess = Credential(agent="tess", roles=frozenset({"annotator"}), organization="acme-testing")
    with pytest.raises(Forbidden, match="organization 'acme-testing' ran run 1"):
        record_rulings(graphs, ID, 1, [ruling], tess, separation=rule)
    annie = Credential(agent="annie", roles=frozenset({"domain_expert"}), organization="who-evaluation")
    assert len(record_rulings(graphs, ID, 1, [ruling], annie, separation=rule)) == 1
    attestation = ("failed", "neither reply says how to fix the net", "sufficient", "appropriate")
    with pytest.raises(Forbidden, match=f"organization 'who-evaluation' determined on {criterion} .* may not attest"):
        attest(graphs, ID, 1, criterion, EARL + attestation[0], *attestation[1:], annie, separation=rule)
    with pytest.raises(Forbidden, match="agent 'theo' ran run 1 .* may not attest"):
        attest(
            graphs,
            ID,
            1,
            criterion,
            EARL + attestation[0],
            *attestation[1:],
            Credential(agent="theo", roles=frozenset({"domain_expert"})),
            separation=rule,
        )
    erin = Credential(agent="erin", roles=frozenset({"domain_expert"}))  # no organization: only herself
    assert attest(graphs, ID, 1, criterion, EARL + attestation[0], *attestation[1:], erin, separation=rule).current


# ------------------------------------------------------------------------------------------ grounded, configured

PROMPTS: list[str] = []


async def _grounded_judge(request):  # a judge model that refuses a prompt without the graph's facts
    from starlette.responses import JSONResponse

    prompt = (await request.json())["messages"][-1]["content"]
    PROMPTS.append(prompt)
    if "kg/ghana/antenatal-clinics" not in prompt or "Expected result: " not in prompt:
        return JSONResponse({"error": {"message": "the prompt lacks the expected behaviour"}}, status_code=400)
    verdict = {"outcome": "cantTell", "rationale": "the reply names no channel", "quote": ""}
    return JSONResponse(
        {
            "id": "x",
            "object": "chat.completion",
            "model": "grounded",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(verdict)}}
            ],
        }
    )


@pytest.fixture(scope="module")
def grounded_server():
    """A small OpenAI-compatible server, in this process on loopback, that checks what the judge is told."""
    import threading

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from ..servers import free_port, wait_until_up

    port = free_port()

    async def health(request):
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/v1/chat/completions", _grounded_judge, methods=["POST"]), Route("/health", health)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until_up(f"http://127.0.0.1:{port}/health")
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_the_configured_model_judge_is_told_the_expected_result_the_graphs_facts_and_the_conversation(
    judged: Service, grounded_server: str, app_slot
) -> None:
    slot, _ = app_slot
    url = f"/evaluations/{ID}/runs/1/model-judgments"
    unconfigured = create_app(settings_for(judged.tokens, run_target_allowlist=[grounded_server]), judged.store)
    with slot.serving(unconfigured):
        refused = judged.http.post(url, json={"criteria": ["where"]}, headers=judged.auth("theo"))
        assert refused.status_code == 422 and "CAIE_MODEL_JUDGE_BASE_URL" in refused.text
    outside = create_app(
        settings_for(judged.tokens, model_judge_base_url=f"{grounded_server}/v1", model_judge_model="grounded"),
        judged.store,
    )
    with slot.serving(outside):  # the configured endpoint is still under the allow-list
        refused = judged.http.post(url, json={"criteria": ["where"]}, headers=judged.auth("theo"))
        assert refused.status_code == 422 and "not among the targets" in refused.text
    configured = create_app(
        settings_for(
            judged.tokens,
            run_target_allowlist=[grounded_server],
            model_judge_base_url=f"{grounded_server}/v1",
            model_judge_model="grounded",
        ),
        judged.store,
    )
    PROMPTS.clear()
    with slot.serving(configured):
        made = judged.http.post(url, json={"criteria": ["where"]}, headers=judged.auth("theo"))
        where = probes(judged, "where")
    assert made.status_code == 201, made.text
    assert made.json()["failures"] == [] and len(made.json()["determinations"]) == len(where) > 0 and PROMPTS
    for prompt in PROMPTS:
        assert "Criterion: Asked where to get a bed net" in prompt and "Expected result: " in prompt
        assert "scenario fact: https://example.org/dso/bednets/livesIn = https://example.org/kg/ghana/country" in prompt
        assert "ours=true" in prompt and "User: " in prompt and "Chatbot: " in prompt
