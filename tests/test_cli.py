"""The ``caie`` command line, run as a user would: a real process on an on-disk store."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from pyoxigraph import Quad

from service.core.store import EmbeddedStore
from service.worked_example import load_worked_example

from .conftest import REPO
from .test_envelope import load_spec, spec_quads  # noqa: F401

BASE = "http://caie.test/"


def caie(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "service.cli", *args]
    if args[0] != "validate":
        command += ["--data-dir", str(data), "--base-url", BASE]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO)


def test_load_query_and_validate(tmp_path: Path) -> None:
    loaded = caie("load", str(REPO / "ontologies/epo.ttl"), "--graph", f"{BASE}graphs/ontologies/epo", data=tmp_path)
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout)["kind"] == "ontologies"
    counted = caie("query", "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <http://caie.test/graphs/ontologies/epo> { ?s ?p ?o } }", data=tmp_path)
    assert counted.returncode == 0 and int(counted.stdout.splitlines()[1].split("^^")[0].strip('"')) > 1000
    bad = caie("load", str(REPO / "ontologies/epo.ttl"), "--graph", "widgets/x", data=tmp_path)
    assert bad.returncode == 2 and "unknown graph kind" in bad.stderr
    dso = str(REPO / "ontologies/dso/vaccine-education.ttl")
    assert caie("validate", str(REPO / "ontologies/kg/kenya.ttl"), "--dso", dso, data=tmp_path).returncode == 0
    broken = tmp_path / "broken.ttl"
    broken.write_text((REPO / "ontologies/kg/kenya.ttl").read_text().replace("ve:hasSchedule", "ve:noSuchProperty"))
    refused = caie("validate", str(broken), "--dso", dso, data=tmp_path)
    assert refused.returncode == 1 and json.loads(refused.stdout)["conforms"] is False


def test_derive_and_plan(tmp_path: Path, spec_quads: list[Quad]) -> None:  # noqa: F811
    store = EmbeddedStore(tmp_path)
    graphs = load_spec(store, spec_quads)  # the specification files as `caie serve` loads them, copied
    assert load_worked_example(graphs)
    store.close()
    derived = caie("derive", "measles", "--seed", "1", "--sample", "200", data=tmp_path)
    assert derived.returncode == 0, derived.stderr
    total, eligible = re.search(r"candidates ([\d,]+)\s+eligible ([\d,]+)", derived.stdout).groups()
    assert int(total.replace(",", "")) > int(eligible.replace(",", "")) > 0
    assert "ImmuneWithoutCause" in derived.stdout or "blocked" in derived.stdout
    planned = caie("plan", "measles", "--budget", "30", "--strategy", "Equal", "--agent", "theo", data=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert "plan 2:" in planned.stdout and "sampling probes" in planned.stderr and "11/11" in planned.stderr
