"""Two ``caie run`` processes share one run through a remote store (a real ``oxigraph serve``): each claims
probes before running them, so the target is asked each probe's opening once, and each probe's case is
recorded once, however the two interleave.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import httpx
from pyoxigraph import NamedNode

from service.core.config import Credential
from service.core.store import RemoteStore
from service.runs.model import ExecutionSettings
from service.runs.records import plan_probes, start_run
from service.runs.targets import OpenAICompatible

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, dump, graphs_over, restore
from ..plan.test_second_domain_plan import ID
from .test_run_record import PROBES

pytestmark = EMBEDDED_ONLY  # the approved record is made on the embedded store, then copied to the remote one


def test_two_runners_share_a_run_on_a_remote_store_and_run_no_probe_twice(
    approved: Service, chat_server: str, remote_url: str
) -> None:
    httpx.post(
        f"{remote_url}/update", content=b"DROP ALL", headers={"Content-Type": "application/sparql-update"}
    ).raise_for_status()
    remote = RemoteStore(f"{remote_url}/query", f"{remote_url}/update", f"{remote_url}/store")
    restore(remote, dump(approved.store))
    graphs = graphs_over(remote)
    operator = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))
    target = OpenAICompatible(f"{chat_server}/v1", "shared")
    run = start_run(
        graphs,
        ID,
        1,
        target.version,
        ExecutionSettings(concurrency=1),
        operator,
        outside_boundary="a test chat server, not the scope's release",
    )
    env = {
        **os.environ,
        "CAIE_BASE_URL": BASE_URL,
        "CAIE_STORE": "remote",
        "CAIE_REMOTE_QUERY_URL": f"{remote_url}/query",
        "CAIE_REMOTE_UPDATE_URL": f"{remote_url}/update",
        "CAIE_REMOTE_STORE_URL": f"{remote_url}/store",
    }
    command = [
        sys.executable,
        "-m",
        "service.cli",
        "run",
        ID,
        "--run",
        str(run.number),
        "--openai-base-url",
        f"{chat_server}/v1",
        "--model",
        "shared",
        "--concurrency",
        "1",
        "--claim",
        "1",
        "--timeout",
        "5",
    ]
    runners = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outputs = [runner.communicate(timeout=120) for runner in runners]
    assert [r.returncode for r in runners] == [0, 0], [err for _, err in outputs]
    ran = [int(re.search(r"ran (\d+), recorded", out).group(1)) for out, _ in outputs]  # type: ignore[union-attr]  # a None match fails the test as an AttributeError, which is its point
    assert sum(ran) == PROBES, outputs
    openings = {p.opening_prompt for p in plan_probes(graphs, ID, run.plan)}
    assert httpx.get(f"{chat_server}/asked/shared").json() == {opening: 1 for opening in openings}
    recorded = graphs.rows("run-recorded-probes", {"run": NamedNode(run.iri)})
    assert len(recorded) == PROBES == len({row["probe"].value for row in recorded})
    remote.close()
