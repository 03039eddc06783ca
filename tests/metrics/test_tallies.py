"""Pass-rate tallies (service/judgments/tallies.py): each run's k, n and cases per criterion, kept in the record as
judgments batches are written, must always equal what ``queries/pass-rate-counts.rq`` counts from the raw
determinations: after every batch, under concurrent batches, and while a run still records cases.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from caie_vaccine.demo import DemoChatbot
from pyoxigraph import NamedNode

from service.core.config import Credential
from service.runs.model import ExecutionSettings
from service.runs.records import start_run
from service.runs.runner import continue_run

from ..conftest import ALSO_REMOTE, BASE_URL, EMBEDDED_ONLY, Service, graphs_over
from .conftest import EVALUATION, ID, determine, probes
from .test_metrics_api import metrics, rates
from .test_recompute_from_export import exported, select

pytestmark = EMBEDDED_ONLY

EVALUATION_IRI = f"{BASE_URL}evaluations/{ID}"
OPERATOR = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))


def counted(service: Service, name: str, run: int) -> dict[str, tuple[int, int, int]]:
    """Criterion identifier to (k, n, cases) in run ``run`` by the published query ``name``."""
    graphs = graphs_over(service.store)
    rows = graphs.rows(
        name, {"evaluation": NamedNode(EVALUATION_IRI), "run": NamedNode(f"{EVALUATION_IRI}/runs/{run}")}
    )
    return {
        row["criterion"].value.rsplit("/", 1)[-1]: (int(row["k"].value), int(row["n"].value), int(row["cases"].value))
        for row in rows
    }


FACTS = """
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    SELECT DISTINCT ?case ?fact ?criterion WHERE {
      VALUES ?fact { epo:judgedOn epo:decidedOn epo:failedOn }
      GRAPH ?stated { ?case ?fact ?criterion }
    }"""


def same_as_recount(service: Service, run: int) -> dict[str, tuple[int, int, int]]:
    """The run's tallies, equal to pass-rate-counts.rq's recount; and the facts the record states about its cases
    (wherever stated: by the batches or a recount), equal to those its determinations give."""
    tallied = counted(service, "pass-rate-tallies", run)
    assert tallied == counted(service, "pass-rate-counts", run)
    graphs = graphs_over(service.store)
    prefix = f"{EVALUATION_IRI}/runs/{run}/"
    stated = {
        tuple(row[name].value for name in ("case", "fact", "criterion"))
        for row in service.store.select(FACTS)
        if row["case"].value.startswith(prefix)
    }
    assert stated == {
        tuple(row[name].value for name in ("case", "fact", "criterion"))
        for row in graphs.rows("case-outcome-facts", {"run": NamedNode(prefix.rstrip("/"))})
    }
    return tallied


@ALSO_REMOTE
def test_tallies_follow_every_batch_as_the_query_counts(measured: Service) -> None:
    # the fixture's batches (tests/metrics/conftest.py): run 1 hanging A failed by annie then passed by nora in a
    # later batch (still failed: any failed fails), B passed; washing A inapplicable, B cantTell; run 2 washing A passed
    assert same_as_recount(measured, 1) == {"hanging": (1, 2, 2), "washing": (0, 1, 2), "where": (0, 0, 2)}
    assert same_as_recount(measured, 2) == {"hanging": (0, 0, 2), "washing": (1, 1, 2), "where": (0, 0, 2)}
    by = probes(measured)
    hanging_b, washing_a, where_a = by["hanging"][1], by["washing"][0], by["where"][0]
    # B, passed so far, gets a failed: k drops; washing A, inapplicable so far, gets a cantTell: n grows
    determine(
        measured,
        1,
        "nora",
        [
            (hanging_b, "hanging", "failed"),
            (washing_a, "washing", "cantTell"),
            (where_a, "where", "passed"),
            (where_a, "where", "inapplicable"),
        ],
    )
    assert same_as_recount(measured, 1) == {"hanging": (0, 2, 2), "washing": (0, 2, 2), "where": (1, 1, 2)}
    # run 2's tallies did not move
    assert same_as_recount(measured, 2) == {"hanging": (0, 0, 2), "washing": (1, 1, 2), "where": (0, 0, 2)}
    # and the service's pass rates (read from the tallies, no asOf) are these counts
    assert {c: (k, n, cases) for (c, run), (k, n, _, cases) in rates(metrics(measured)).items() if run == 1} == {
        "hanging": (0, 2, 2),
        "washing": (0, 2, 2),
        "where": (1, 1, 2),
    }


def test_concurrent_batches_lose_no_count(measured: Service) -> None:
    by = probes(measured)
    batches = [
        [(probe, criterion, outcome)]
        for criterion in ("hanging", "washing", "where")
        for probe in by[criterion]
        for outcome in ("passed", "cantTell")
    ]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda items: determine(measured, 2, "nora", items), batches))
    # every case of run 2 now has a passed determination, and none a failed one
    assert same_as_recount(measured, 2) == {"hanging": (2, 2, 2), "washing": (2, 2, 2), "where": (2, 2, 2)}


def test_cases_recorded_after_the_tallies_are_counted(measured: Service) -> None:
    """A run judged while it still records cases: its tallies counted fewer cases than it has now, so the service
    recounts until the next batch brings them up to date; the answer is always the query's."""
    graphs = graphs_over(measured.store)
    target, settings = DemoChatbot(), ExecutionSettings(concurrency=2)
    run = start_run(graphs, ID, 1, target.version, settings, OPERATOR)
    continue_run(graphs, ID, run.number, target, settings, OPERATOR, limit=2)
    first = [row["probe"].value for row in graphs.rows("run-recorded-probes", {"run": NamedNode(run.iri)})]
    assert len(first) == 2
    criterion = next(c for c, planned in probes(measured).items() if first[0] in planned)
    determine(measured, run.number, "annie", [(first[0], criterion, "passed")])
    assert sum(cases for _, _, cases in same_as_recount(measured, run.number).values()) == 2
    continue_run(graphs, ID, run.number, target, settings, OPERATOR)  # the plan's other 4 probes
    answered = {
        c: (k, n, cases) for (c, number), (k, n, _, cases) in rates(metrics(measured)).items() if number == run.number
    }
    assert answered == counted(measured, "pass-rate-counts", run.number)
    assert {c: cases for c, (_, _, cases) in answered.items()} == {"hanging": 2, "washing": 2, "where": 2}
    where_b = probes(measured)["where"][1]
    determine(measured, run.number, "annie", [(where_b, "where", "failed")])
    assert same_as_recount(measured, run.number)["where"] == (0, 1, 2)


def test_verify_recounts_the_tallies_and_names_one_changed_behind_the_service(measured: Service) -> None:
    body = {"run": 1, "limitations": ["two probes per criterion"], "recommendations": [], "fitness": "NotFit"}
    made = measured.http.post(f"{EVALUATION}/reports", json=body, headers=measured.auth("annie"))
    assert made.status_code == 201, made.text
    checked = measured.http.get(f"{EVALUATION}/reports/1/verify").json()
    assert checked["holds"] is True
    assert {t["criterion"].rsplit("/", 1)[-1]: t["stored"] for t in checked["tallies"]} == {
        "hanging": "1 of 2, 2 cases",
        "washing": "0 of 1, 2 cases",
        "where": "0 of 0, 2 cases",
    }
    # hanging's k in run 1's tallies, raised from 1 to 2 directly in the store
    tallies = f"{EVALUATION_IRI}/runs/1/tallies"
    measured.store.run_update(f"""
        PREFIX epo: <https://w3id.org/ob-caie/epo/>
        WITH <{tallies}> DELETE {{ ?tally epo:casesPassed 1 }} INSERT {{ ?tally epo:casesPassed 2 }}
        WHERE {{ ?tally epo:forCriterion <{EVALUATION_IRI}/envelope/v1/criteria/hanging> }}""")
    checked = measured.http.get(f"{EVALUATION}/reports/1/verify").json()
    assert checked["holds"] is False
    assert [
        (t["criterion"].rsplit("/", 1)[-1], t["stored"], t["recomputed"]) for t in checked["tallies"] if not t["holds"]
    ] == [("hanging", "2 of 2, 2 cases", "1 of 2, 2 cases")]
    assert any(d.startswith("tally of criterion") and "hanging" in d for d in checked["differences"])
    refused = measured.http.post(f"{EVALUATION}/reports/1/sign-off", json={}, headers=measured.auth("annie"))
    assert refused.status_code == 409 and "hanging" in refused.text


def test_a_large_batch_counts_each_case_once(measured: Service) -> None:
    """A batch larger than one request's VALUES block, with many determinations on one case: the case is counted
    once (hanging A in run 2: judged, and failed, whatever else is said of it)."""
    hanging_a = probes(measured)["hanging"][0]
    determine(measured, 2, "nora", [(hanging_a, "hanging", "cantTell")] * 600 + [(hanging_a, "hanging", "failed")])
    assert same_as_recount(measured, 2)["hanging"] == (0, 1, 2)


def test_a_third_party_reads_the_tallies_from_the_exported_record(measured: Service) -> None:
    """rdflib's own SPARQL engine over the exported TriG: each run's tallies count every case it has
    (run-tally-state.rq), and pass-rate-tallies.rq gives the service's pass rates and pass-rate-counts.rq's recount."""
    dataset = exported(measured)
    for run in (1, 2):
        [state] = select(dataset, "run-tally-state", run=NamedNode(f"{EVALUATION_IRI}/runs/{run}"))
        assert (state["tallied"], state["recorded"]) == ("6", "6")

    def keyed(name: str) -> dict[tuple[str, int], tuple[int, int, int, int]]:
        return {
            (row["criterion"].rsplit("/", 1)[-1], int(row["run"].rsplit("/", 1)[-1])): (
                int(row["k"]),
                int(row["n"]),
                int(row["frame"]),
                int(row["cases"]),
            )
            for row in select(dataset, name)
        }

    assert keyed("pass-rate-tallies") == keyed("pass-rate-counts") == rates(metrics(measured))
