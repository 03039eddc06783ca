"""Responses collected elsewhere, imported over real HTTP as runs of the bed-nets plan (6 probes, approved).

The plan goes out as an Inspect dataset, a real Inspect eval runs it (inspect-ai's ``mockllm/model`` echoing
each user turn, in a child process as in test_inspect_io.py) and the log comes back as a run whose probes have
their traces with the mock's replies, but one, given a follow-up the mock fails on, whose case is the failure
the log reports (``epo:ReportedFailure``); red-teaming rows come back likewise. Every bad upload is refused by
name with nothing stored: a row for a probe the plan does not have, two target versions in one file, a plan not
approved, a caller who is not an operator, a format that is none of the three.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import httpx

from service.core.namespaces import EPO

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, dump
from ..plan.test_pinned_inputs import select
from ..plan.test_second_domain_plan import ID
from .test_inspect_io import FAILING_TURN, RELEASE, REPO, _reply
from .test_run_record import OPERATOR, PROBES

pytestmark = EMBEDDED_ONLY
IMPORTS = f"/evaluations/{ID}/runs/imports"
PLAN = f"{BASE_URL}evaluations/{ID}/plans/1"
RUN = f"{BASE_URL}evaluations/{ID}/runs/1"

REPLIES = f"""
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    PREFIX prov: <http://www.w3.org/ns/prov#>
    SELECT ?probe ?index ?sent ?reply WHERE {{
      GRAPH ?case {{ ?case epo:inRun <{RUN}> ; epo:realizesProbe ?probe .
                    ?turn epo:inConversation ?case ; epo:turnIndex ?index ; epo:inputText ?sent .
                    ?response prov:wasGeneratedBy ?turn ; epo:responseText ?reply .
                    ?trace epo:traceOf ?case }}
    }} ORDER BY ?probe ?index"""
FAILURES = f"""
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    SELECT ?probe ?kind ?message ?turn ?kept WHERE {{
      GRAPH ?case {{ ?case epo:inRun <{RUN}> ; epo:realizesProbe ?probe .
                    ?error a epo:ExecutionError ; epo:errorKind ?kind ; epo:errorMessage ?message ;
                           epo:errorIn/epo:turnIndex ?turn .
                    ?response epo:responseText ?kept }}
    }}"""
SOURCE = f"""
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    PREFIX dcterms: <http://purl.org/dc/terms/>
    SELECT ?format ?digest WHERE {{ GRAPH <{RUN}> {{ <{RUN}> epo:importedFrom ?source .
                                                   ?source dcterms:format ?format ; epo:digest ?digest }} }}"""


def upload(service: Service, body: bytes, form: str, agent: str | None = OPERATOR, plan: int = 1) -> httpx.Response:
    return service.http.post(
        IMPORTS, params={"plan": plan, "format": form}, content=body, headers=service.auth(agent) if agent else {}
    )


def row(probe: int | str, reply: str, release: str = "helpline-2026-10", turn: int = 1) -> dict[str, object]:
    return {
        "probe": probe,
        "turn": turn,
        "user_text": f"question {probe}.{turn}",
        "response_text": reply,
        "sent_at": f"2026-11-30T09:0{turn}:00Z",
        "received_at": f"2026-11-30T09:0{turn}:02+00:00",
        "session": "s1",
        "operator": "Amina Odhiambo",
        "system": "Bed-nets helpline",
        "model_release": release,
    }


def jsonl(*rows: dict[str, object]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def inspect_log(dataset: Path) -> bytes:
    """The log of a real Inspect eval of ``dataset`` (mockllm echoing each user turn), as uploaded."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.runs.test_inspect_io", str(dataset.parent / "logs"), f"{dataset}=scripted"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [location] = json.loads(done.stdout.splitlines()[-1])
    return Path(location).read_bytes()


def test_the_exported_plan_run_by_inspect_imports_back_onto_its_probes(approved: Service, tmp_path: Path) -> None:
    exported = approved.http.get(f"/evaluations/{ID}/plans/1/inspect-dataset")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("application/jsonl")
    samples = [json.loads(line) for line in exported.text.splitlines()]
    probes = approved.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    assert [s["id"] for s in samples] == [p["probe"] for p in probes] and len(samples) == PROBES
    assert [s["input"][0]["content"] for s in samples] == [p["openingPrompt"] for p in probes]
    samples[-1]["metadata"]["follow_ups"] = [FAILING_TURN]  # the mock fails on it, as a dropped connection would
    dataset = tmp_path / "plan-1.jsonl"
    dataset.write_text("".join(json.dumps(sample) + "\n" for sample in samples), encoding="utf-8")
    log = inspect_log(dataset)

    imported = upload(approved, log, "inspect")
    assert imported.status_code == 201, imported.text
    run = imported.json()
    assert imported.headers["Location"] == f"/evaluations/{ID}/runs/1" and run["run"] == RUN
    assert (run["probes"], run["cases"], run["traces"], run["executionErrors"]) == (PROBES, PROBES, PROBES - 1, 1)
    assert run["targetConfiguration"]["adapter"] == "imported"
    assert (run["targetConfiguration"]["model_release"], run["settings"]) == (RELEASE, {})
    [listed] = approved.http.get(f"/evaluations/{ID}/runs").json()["runs"]
    assert (listed["targetFingerprint"], listed["done"]) == (run["targetFingerprint"], True)
    replies = {r["probe"]: (r["sent"], r["reply"]) for r in select(approved, REPLIES)}
    assert replies == {p["probe"]: (p["openingPrompt"], _reply(p["openingPrompt"])) for p in probes[:-1]}
    [failed] = select(approved, FAILURES)  # the reply before the failure is kept, the failed turn named
    assert "the target dropped the connection" in failed.pop("message")
    assert failed == {
        "probe": probes[-1]["probe"],
        "kind": f"{EPO}ReportedFailure",
        "turn": "2",
        "kept": _reply(probes[-1]["openingPrompt"]),
    }
    assert select(approved, SOURCE) == [{"format": "application/zip", "digest": hashlib.sha256(log).hexdigest()}]


def test_red_teaming_rows_become_the_cases_of_their_probes(approved: Service) -> None:
    body = jsonl(
        row(2, "Hang it over the bed.", turn=2), row(2, "Tuck it in."), row(f"{PLAN}/probes/5", "Wash it gently.")
    )
    imported = upload(approved, body, "jsonl")
    assert imported.status_code == 201, imported.text
    run = imported.json()
    assert (run["cases"], run["traces"], run["done"]) == (2, 2, False)
    assert run["targetConfiguration"]["adapter"] == "imported"
    assert [(r["probe"], r["index"], r["sent"], r["reply"]) for r in select(approved, REPLIES)] == [
        (f"{PLAN}/probes/2", "1", "question 2.1", "Tuck it in."),
        (f"{PLAN}/probes/2", "2", "question 2.2", "Hang it over the bed."),
        (f"{PLAN}/probes/5", "1", f"question {PLAN}/probes/5.1", "Wash it gently."),
    ]
    assert select(approved, SOURCE)[0]["format"] == "application/jsonl"


def test_bad_uploads_are_refused_by_name_and_store_nothing(approved: Service) -> None:
    before = len(dump(approved.store))
    good = jsonl(row(1, "Hang it."))
    cases = [
        (
            upload(approved, jsonl(row(1, "Hang it."), row(99, "Wash it.")), "jsonl"),
            422,
            f"not probes of {PLAN}: {PLAN}/probes/99 (row 2)",
        ),
        (
            upload(approved, jsonl(row(1, "Hang it."), row(3, "Wash it.", release="helpline-2026-11")), "jsonl"),
            422,
            "two target versions",
        ),
        (upload(approved, b"probe,turn\n1,1\n", "csv"), 422, "row 1 (the header): no column"),
        (
            upload(approved, b"not an Inspect log", "inspect"),
            422,
            "the uploaded file cannot be read as an Inspect eval log",
        ),
        (upload(approved, good, "xml"), 422, "format"),
        (upload(approved, good, "jsonl", plan=9), 404, "no plan 9"),
        (upload(approved, good, "jsonl", agent="annie"), 403, "lacks the role"),
        (upload(approved, good, "jsonl", agent=None), 401, "credential"),
    ]
    for answer, status, phrase in cases:
        assert (answer.status_code, phrase in answer.text) == (status, True), answer.text
    read = approved.http.get(IMPORTS)  # the import, not a run numbered "imports"
    assert (read.status_code, read.headers["Allow"]) == (405, "POST"), read.text
    assert len(dump(approved.store)) == before
    assert approved.http.get(f"/evaluations/{ID}/runs").json()["runs"] == []


def test_an_import_onto_a_plan_not_approved_is_refused(planned: Service) -> None:
    before = len(dump(planned.store))
    refused = upload(planned, jsonl(row(1, "Hang it.")), "jsonl")
    assert refused.status_code == 409 and "no domain expert has approved the plan" in refused.text, refused.text
    assert len(dump(planned.store)) == before
