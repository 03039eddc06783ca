"""The ``caie`` command line, run as a user would: a real process on an on-disk store."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, Quad
from pyoxigraph import Store as OxStore

from service.core.config import Credential
from service.core.errors import BadRequest, Forbidden, Unprocessable
from service.core.store import EmbeddedStore
from service.judgments.human_steps import import_steps, read_steps

from .conftest import REPO, graphs_over, restore
from .test_envelope import example_envelope

BASE = "http://caie.test/"


def data_dir_with_worked_example(path: Path, quads: list[Quad]) -> Path:
    """``path`` as a ``--data-dir`` (an on-disk embedded store) holding ``quads``, written by pyoxigraph's bulk
    loader: no process has the directory open yet, and one transaction took three times the CPU (3.4 s against 1)."""
    store = OxStore(str(path))
    store.bulk_extend(quads)
    store.flush()
    del store  # closed: the command opens it next
    return path


def caie(*args: str, data: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "service.cli", *args]
    if args[0] != "validate":
        command += ["--data-dir", str(data), "--base-url", BASE]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, cwd=REPO, env={**os.environ, **(env or {})}, check=False
    )  # tests assert its status, some a failure


def test_load_query_and_validate(tmp_path: Path) -> None:
    loaded = caie("load", str(REPO / "ontologies/epo.ttl"), "--graph", f"{BASE}graphs/ontologies/epo", data=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout)["kind"] == "ontologies"
    counted = caie(
        "query",
        "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <http://caie.test/graphs/ontologies/epo> { ?s ?p ?o } }",
        data=tmp_path,
    )
    assert counted.returncode == 0 and int(counted.stdout.splitlines()[1].split("^^")[0].strip('"')) > 1000
    # scenario rules loaded under a name derivation does not read (not shapes/scenario-*): said so, as over HTTP
    misnamed = caie(
        "load", str(REPO / "examples/bednets/scenario-routing.ttl"), "--graph", "shapes/bednets-rules", data=tmp_path
    )
    assert misnamed.returncode == 0, misnamed.stderr
    [why] = json.loads(misnamed.stdout)["warnings"]
    assert "is read by nothing" in why and f"caie load: warning: {why}" in misnamed.stderr, misnamed.stderr
    bad = caie("load", str(REPO / "ontologies/epo.ttl"), "--graph", "widgets/x", data=tmp_path)
    assert bad.returncode == 2 and "unknown graph kind" in bad.stderr
    dso = str(REPO / "ontologies/dso/vaccine-education.ttl")
    assert caie("validate", str(REPO / "ontologies/kg/kenya.ttl"), "--dso", dso, data=tmp_path).returncode == 0
    broken = tmp_path / "broken.ttl"
    broken.write_text((REPO / "ontologies/kg/kenya.ttl").read_text().replace("ve:hasSchedule", "ve:noSuchProperty"))
    refused = caie("validate", str(broken), "--dso", dso, data=tmp_path)
    assert refused.returncode == 1 and json.loads(refused.stdout)["conforms"] is False


def test_derive_and_plan(tmp_path: Path, worked_example_quads: list[Quad]) -> None:
    data_dir_with_worked_example(tmp_path, worked_example_quads)
    derived = caie("derive", "measles", "--seed", "1", "--sample", "200", data=tmp_path)
    assert derived.returncode == 0, derived.stderr
    total, eligible = re.search(r"candidates ([\d,]+)\s+eligible ([\d,]+)", derived.stdout).groups()
    assert int(total.replace(",", "")) > int(eligible.replace(",", "")) > 0
    assert "ImmuneWithoutCause" in derived.stdout or "blocked" in derived.stdout
    plan = ("plan", "measles", "--budget", "30", "--strategy", "Equal", "--agent", "theo")
    capped = caie(*plan, data=tmp_path, env={"CAIE_MAX_PLAN_BUDGET": "29"})  # the deployment's cap, as over HTTP
    assert capped.returncode == 2 and "at most 29" in capped.stderr and "CAIE_MAX_PLAN_BUDGET" in capped.stderr
    planned = caie(*plan, data=tmp_path)
    assert planned.returncode == 0, planned.stderr
    in_scope = sum(c.get("inScope", True) for c in example_envelope()["criteria"])
    assert (
        "plan 2:" in planned.stdout
        and "sampling probes" in planned.stderr
        and f"{in_scope}/{in_scope}" in planned.stderr
    )


def test_the_worked_example_is_run_judged_and_attested(worked_example_quads: list[Quad]) -> None:
    """``make run``'s example goes through steps 4 and 5: every probe of the approved plan answered by the
    demonstration chatbot, and its deliberate failures (DELIBERATE_FAILURES) caught by the rule judges: the wrong
    Nigerian schedule (c07), the clinic without calling ahead (c05), English replies to questions in another
    language (c11), the bare refusal (c09); a human determination; attestations, one superseded with a reason."""
    store = EmbeddedStore()
    restore(store, worked_example_quads)
    graphs = graphs_over(store, BASE)
    evaluation, run = NamedNode(f"{BASE}evaluations/measles"), f"{BASE}evaluations/measles/runs/1"
    (view,) = graphs.rows("runs", {"evaluation": evaluation})
    assert (view["probes"].value, view["traces"].value, view["errors"].value) == ("300", "300", "0")
    rows = graphs.rows("determinations", {"evaluation": evaluation, "ofRun": NamedNode(run)})
    failed = {r["criterion"].value.rsplit("/", 1)[-1] for r in rows if r["outcome"].value.endswith("#failed")}
    assert {"c05", "c07", "c09", "c11"} <= failed
    nigeria = [r for r in rows if r["criterion"].value.endswith("/c07") and r["outcome"].value.endswith("#failed")]
    assert nigeria and all("9 months" in r["rationale"].value for r in nigeria)
    attested = graphs.rows("attestations", {"evaluation": evaluation})
    superseded = [a for a in attested if a["current"].value == "false"]
    assert len(superseded) == 1 and any(a.get("supersedes") and a["reason"].value for a in attested)
    # step 6: a final report on the run, signed off and accepted, whose failed criteria include the four above
    (report,) = graphs.rows("reports", {"evaluation": evaluation})
    assert report["run"].value == run and report.get("signOff") and report.get("acceptance"), report
    criteria = graphs.rows("report-criteria", {"report": report["report"]})
    assert {"c05", "c07", "c09", "c11"} <= {
        r["criterion"].value.rsplit("/", 1)[-1] for r in criteria if r["role"].value == "failed"
    }
    store.close()


REPLIES = """
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    PREFIX prov: <http://www.w3.org/ns/prov#>
    SELECT ?probe ?index ?reply WHERE {
      GRAPH ?case { ?case epo:realizesProbe ?probe .
                    ?turn epo:inConversation ?case ; epo:turnIndex ?index .
                    ?response prov:wasGeneratedBy ?turn ; epo:responseText ?reply }
    }"""


def test_the_experts_steps_come_from_the_shipped_file_and_name_their_cases(worked_example_quads: list[Quad]) -> None:
    """The worked example's human steps are exactly the lines of examples/measles/human-steps.jsonl, marked there as
    demonstration data: every manual determination in the record is one of its lines (none made up in code), each
    rationale quotes the reply it judges (the quote is text of that case's reply), and the current attestations are
    the file's last word per criterion; the report tells a reader the expert's steps are demonstration data."""
    lines = [
        json.loads(line) for line in (REPO / "examples" / "measles" / "human-steps.jsonl").read_text().splitlines()
    ]
    assert lines[0]["kind"] == "about" and "DEMONSTRATION DATA" in lines[0]["statement"]
    store = EmbeddedStore()
    restore(store, worked_example_quads)
    graphs = graphs_over(store, BASE)
    evaluation, run = NamedNode(f"{BASE}evaluations/measles"), f"{BASE}evaluations/measles/runs/1"
    probe = f"{BASE}evaluations/measles/plans/1/probes/"
    manual = {
        (
            r["probe"].value.removeprefix(probe),
            r["criterion"].value.rsplit("/", 1)[-1],
            r["outcome"].value.rsplit("#", 1)[-1],
            r["rationale"].value,
        )
        for r in graphs.rows("determinations", {"evaluation": evaluation, "ofRun": NamedNode(run)})
        if r["mode"].value.endswith("#manual")
    }
    written = [line for line in lines if line["kind"] == "determination"]
    assert manual == {(str(d["probe"]), d["criterion"], d["outcome"], d["rationale"]) for d in written}
    replies = {
        (row["probe"].value.removeprefix(probe), int(row["index"].value)): row["reply"].value
        for row in store.select(REPLIES)
    }
    for line in written:
        assert line["quote"] in replies[(str(line["probe"]), line["turn"])], line
        assert line["quote"] in line["rationale"], line
    last = {line["criterion"]: line for line in lines if line["kind"] == "attestation"}
    current = {
        a["criterion"].value.rsplit("/", 1)[-1]: a
        for a in graphs.rows("attestations", {"evaluation": evaluation})
        if a["current"].value == "true"
    }
    assert {c: (a["outcome"].value.rsplit("#", 1)[-1], a["rationale"].value) for c, a in current.items()} == {
        c: (line["outcome"], line["rationale"]) for c, line in last.items()
    }
    (report,) = graphs.rows("reports", {"evaluation": evaluation})
    texts = " ".join(r["text"].value for r in graphs.rows("report-texts", {"report": report["report"]}))
    assert "demonstration data" in texts and "human-steps.jsonl" in texts
    store.close()


SIZES = "SELECT ?g (COUNT(*) AS ?n) WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } } GROUP BY ?g"
"""How many quads each graph of a store holds (the default graph's row without ``?g``)."""


def _sizes(store: EmbeddedStore) -> dict[str, int]:
    return {row["g"].value if "g" in row else "": int(row["n"].value) for row in store.select(SIZES)}


def test_the_importer_refuses_what_it_cannot_stand_behind(worked_example_quads: list[Quad]) -> None:
    """Another person's lines are refused (403), a quote that is not the reply's text, an unknown criterion or probe
    are named by line (422), a file that is not JSON Lines is a 400; and nothing is recorded on any refusal."""
    store = EmbeddedStore()
    restore(store, worked_example_quads)
    graphs = graphs_over(store, BASE)
    before = _sizes(store)
    theo = Credential(agent="theo", name="theo", roles=frozenset({"domain_expert"}))
    line = {
        "kind": "determination",
        "by": "annie",
        "probe": 38,
        "criterion": "c06",
        "outcome": "failed",
        "quote": "a dose of measles vaccine",
        "rationale": "offers 'a dose of measles vaccine' to a pregnant woman",
    }
    with pytest.raises(Forbidden, match="decisions by annie"):
        import_steps(graphs, "measles", 1, read_steps(json.dumps(line).encode(), "jsonl"), theo)
    annie = Credential(agent="annie", name="annie", roles=frozenset({"domain_expert"}))
    wrong = [{**line, "quote": "get the vaccine today"}, {**line, "criterion": "c99"}, {**line, "probe": 999}]
    body = "\n".join(json.dumps(w) for w in wrong).encode()
    with pytest.raises(Unprocessable) as refused:
        import_steps(graphs, "measles", 1, read_steps(body, "jsonl"), annie)
    assert [p.split(":")[0] for p in refused.value.detail] == ["line 1", "line 2", "line 3"]
    assert "is not in the reply to turn 1 of probe 38" in refused.value.detail[0]
    with pytest.raises(BadRequest, match="line 1 is not JSON"):
        read_steps(b"kind,by\ndetermination,annie\n", "jsonl")
    assert _sizes(store) == before
    store.close()
