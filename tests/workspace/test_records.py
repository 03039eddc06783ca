"""The workspace's home (service/workspace/records.py): an evaluation's stage in the lifecycle and what waits for
whom. The bed-nets test domain is taken through every stage over HTTP, as its people would (the run's probes
executed by the runner, as ``caie run`` does), and after each step the stage and each role's waiting items are
read; the worked example (built by ``make run``) stands accepted, with its cases waiting for people.
"""

from __future__ import annotations

from collections import Counter

import pytest
from caie_vaccine.demo import DemoChatbot
from pyoxigraph import Quad

from service.core.config import Credential
from service.runs.cases import record_cases
from service.runs.model import ExecutionError, ExecutionSettings
from service.runs.records import start_run
from service.runs.runner import continue_run
from service.workspace import Stage, Waiting, annotation_queue, evaluations_for, waiting_for

from ..conftest import ALSO_REMOTE, BASE_URL, EMBEDDED_ONLY, ROLES, Service, dump, graphs_over, restore
from ..judgments.test_judgments_api import JUDGES, probes
from ..plan.test_second_domain_plan import ID, PLAN, domain_json, load_domain, posted, sign_off

pytestmark = EMBEDDED_ONLY  # what it shows is how a record's content reads, not the store's transport
THEO = Credential(agent="theo", roles=frozenset({"evaluation_operator"}))
SETTINGS = ExecutionSettings(concurrency=2)


def stage(service: Service, evaluation: str = ID) -> Stage:
    (found,) = [
        o
        for o in evaluations_for(graphs_over(service.store), "vera", frozenset(ROLES["vera"]))
        if o.identifier == evaluation
    ]
    return found.stage


def waits(service: Service, agent: str, evaluation: str = ID) -> Counter[Waiting]:
    """How many items of each kind wait for ``agent`` (by the roles the tests give them) in the evaluation."""
    items = waiting_for(graphs_over(service.store), agent, frozenset(ROLES[agent]), None, frozenset())
    return Counter(item.kind for item in items if item.evaluation == evaluation)


def everyone(service: Service) -> dict[str, Counter[Waiting]]:
    return {agent: waits(service, agent) for agent in ("annie", "dana", "theo", "nora", "vera")}


def nothing_but(**expected: Counter[Waiting]) -> dict[str, Counter[Waiting]]:
    return {agent: expected.get(agent, Counter()) for agent in ("annie", "dana", "theo", "nora", "vera")}


@ALSO_REMOTE  # the reads bound by VALUES rows and the batches read since, over SPARQL 1.1 HTTP too
def test_an_evaluation_goes_through_every_stage_and_each_step_waits_for_its_role_alone(service: Service) -> None:
    load_domain(service)
    made = service.http.post("/evaluations", json=domain_json("evaluation.json"), headers=service.auth("theo"))
    assert made.status_code == 201, made.text
    assert stage(service) is Stage.SCOPED
    assert everyone(service) == nothing_but(annie=Counter({Waiting.DSO_APPROPRIATENESS: 1}))

    posted(service, "/dso/appropriateness", {"appropriate": True, "rationale": "models what people ask"}, "annie")
    enveloped = service.http.put(
        f"/evaluations/{ID}/envelope", json=domain_json("envelope.json"), headers=service.auth("theo")
    )
    assert enveloped.status_code == 201, enveloped.text
    criteria = [c["id"] for c in domain_json("envelope.json")["criteria"]]
    assert stage(service) is Stage.ENVELOPE_DRAFTED
    assert everyone(service) == nothing_but(
        annie=Counter({Waiting.RELEVANCE: len(criteria), Waiting.ENVELOPE_APPROPRIATENESS: 1})
    )
    relevance = [
        i
        for i in waiting_for(graphs_over(service.store), "annie", frozenset({"domain_expert"}), None, frozenset())
        if i.kind is Waiting.RELEVANCE
    ]
    assert sorted(i.item.rsplit("/", 1)[-1] for i in relevance) == sorted(criteria)
    assert {i.path for i in relevance} == {f"/evaluations/{ID}/workspace/envelope"}

    posted(service, f"/criteria/{criteria[0]}/relevance", {"relevant": True, "rationale": "matters"}, "annie")
    assert waits(service, "annie")[Waiting.RELEVANCE] == len(criteria) - 1  # one given, the others still wait
    sign_off(service)  # the rest of the domain expert's assessments, then the organizational expert's sign-off
    assert stage(service) is Stage.ENVELOPE_SIGNED_OFF
    assert everyone(service) == nothing_but()

    posted(service, "/plans", PLAN, "theo")
    assert stage(service) is Stage.PLANNED
    assert everyone(service) == nothing_but(annie=Counter({Waiting.PLAN_APPROVAL: 1}))
    posted(service, "/plans/1/approval", {}, "annie")
    assert stage(service) is Stage.PLAN_APPROVED
    assert everyone(service) == nothing_but(theo=Counter({Waiting.RUN_START: 1}))

    graphs = graphs_over(service.store)
    run = start_run(graphs, ID, 1, DemoChatbot().version, SETTINGS, THEO)
    first = f"{BASE_URL}evaluations/{ID}/plans/1/probes/1"
    record_cases(
        graphs,
        ID,
        run.number,
        [ExecutionError(first, DemoChatbot().version.fingerprint, "timeout", "no reply within 30 s", 3, 1)],
        THEO,
    )
    continue_run(graphs, ID, run.number, DemoChatbot(), SETTINGS, THEO, limit=2)
    assert stage(service) is Stage.RUNNING
    assert everyone(service) == nothing_but(
        theo=Counter({Waiting.RUN_IN_PROGRESS: 1, Waiting.RUN_ERRORS: 1}), nora=Counter({Waiting.ANNOTATION: 1})
    )
    (annotation,) = [i for i in waiting_for(graphs, "nora", frozenset({"annotator"}), None, frozenset())]
    assert (annotation.count, annotation.path) == (2, f"/evaluations/{ID}/workspace/annotate?run=1")

    continue_run(graphs, ID, run.number, DemoChatbot(), SETTINGS, THEO)
    assert stage(service) is Stage.RAN
    assert everyone(service) == nothing_but(
        theo=Counter({Waiting.RUN_ERRORS: 1}), nora=Counter({Waiting.ANNOTATION: 1})
    )

    loaded = service.http.put(
        "/graphs/judges/bednets",
        content=JUDGES.read_bytes(),
        headers={"Content-Type": "text/turtle", **service.auth("admin")},
    )
    assert loaded.status_code == 201, loaded.text
    assert (
        service.http.post(f"/evaluations/{ID}/runs/1/rule-judgments", headers=service.auth("theo")).status_code == 201
    )
    determined = {
        d["criterion"].rsplit("/", 1)[-1]
        for d in service.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
    }
    assert stage(service) is Stage.JUDGED
    assert waits(service, "annie") == Counter({Waiting.ATTESTATION: len(determined)})
    attest = [i for i in waiting_for(graphs, "annie", frozenset({"domain_expert"}), None, frozenset())]
    assert {i.path for i in attest} == {f"/evaluations/{ID}/workspace/criteria/{c}?run=1" for c in determined}

    for criterion in sorted(determined):
        posted(
            service,
            "/runs/1/attestations",
            {
                "criterion": criterion,
                "outcome": "cantTell",
                "rationale": "too few",
                "sufficiency": "insufficient",
                "appropriateness": "appropriate",
            },
            "annie",
        )
    assert stage(service) is Stage.ATTESTED
    assert waits(service, "annie") == Counter()

    posted(service, "/reports", {"run": 1, "fitness": "NotFit"}, "theo")
    assert stage(service) is Stage.REPORTED
    assert waits(service, "annie") == Counter({Waiting.REPORT_SIGN_OFF: 1})
    assert waits(service, "dana") == Counter()
    posted(service, "/reports/1/sign-off", {"comment": "the figures hold"}, "annie")
    assert stage(service) is Stage.SIGNED_OFF
    assert (waits(service, "annie"), waits(service, "dana")) == (Counter(), Counter({Waiting.REPORT_ACCEPTANCE: 1}))
    posted(service, "/reports/1/acceptance", {}, "dana")
    assert stage(service) is Stage.ACCEPTED
    assert everyone(service) == nothing_but(
        theo=Counter({Waiting.RUN_ERRORS: 1}), nora=Counter({Waiting.ANNOTATION: 1})
    )


def test_a_later_determination_puts_an_attested_criterion_back_before_its_expert(judged: Service) -> None:
    determined = sorted(
        {
            d["criterion"].rsplit("/", 1)[-1]
            for d in judged.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
        }
    )
    made = {
        c: posted(
            judged,
            "/runs/1/attestations",
            {
                "criterion": c,
                "outcome": "cantTell",
                "rationale": "too few",
                "sufficiency": "insufficient",
                "appropriateness": "appropriate",
            },
            "annie",
        )
        for c in determined
    }
    assert (stage(judged), waits(judged, "annie")) == (Stage.ATTESTED, Counter())
    probe = probes(judged, "hanging")[0]["probe"]
    posted(
        judged,
        "/runs/1/determinations",
        {
            "determinations": [
                {
                    "probe": probe,
                    "criterion": "hanging",
                    "outcome": "failed",
                    "rationale": "says nothing about tucking it in",
                }
            ]
        },
        "nora",
    )
    (item,) = waiting_for(graphs_over(judged.store), "annie", frozenset({"domain_expert"}), None, frozenset())
    assert (item.kind, item.item, item.label) == (
        Waiting.ATTESTATION,
        made["hanging"]["criterion"],
        "attest hanging for run 1 (determined again since its attestation)",
    )
    assert stage(judged) is Stage.ATTESTED  # every criterion still has a current attestation
    posted(
        judged,
        "/runs/1/attestations",
        {
            "criterion": "hanging",
            "outcome": "failed",
            "rationale": "nora read it",
            "sufficiency": "sufficient",
            "appropriateness": "appropriate",
            "supersedes": made["hanging"]["attestation"],
            "reason": "a person failed it",
        },
        "annie",
    )
    assert waits(judged, "annie") == Counter()


@pytest.fixture
def example(service: Service, worked_example_quads: list[Quad]) -> Service:
    restore(service.store, worked_example_quads)
    return service


def test_the_worked_example_is_accepted_and_its_cases_wait_for_annotators(example: Service) -> None:
    (overview,) = evaluations_for(graphs_over(example.store), "vera", frozenset({"viewer"}))
    assert (overview.identifier, overview.stage, overview.plan, overview.run, overview.report) == (
        "measles",
        Stage.ACCEPTED,
        1,
        1,
        1,
    )
    assert overview.stage.label == "accepted" and overview.stage.step == 6
    # the 300 cases less those people determined on every criterion they bear on: counted from the REST answer
    needing = example.http.get("/evaluations/measles/runs/1/cases-needing-people").json()["cases"]
    assert dict(overview.waiting) == {Waiting.ANNOTATION: len({c["probe"] for c in needing})}
    everything = waiting_for(graphs_over(example.store), "admin", frozenset({"admin"}), None, frozenset())
    assert {i.kind for i in everything} == {Waiting.ANNOTATION}
    assert waiting_for(graphs_over(example.store), "vera", frozenset({"viewer"}), None, frozenset()) == []


def test_an_annotators_cases_wait_for_them_in_their_languages_and_expertise(example: Service) -> None:
    graphs = graphs_over(example.store)

    def annotation(languages: frozenset[str] | None, expertise: frozenset[str]) -> int:
        (item,) = waiting_for(graphs, "nora", frozenset({"annotator"}), languages, expertise)
        assert (item.kind, item.path) == (Waiting.ANNOTATION, "/evaluations/measles/workspace/annotate?run=1")
        return item.count

    queue = annotation_queue(graphs, "measles", 1, "nora", frozenset({"en"}), frozenset(), 1)
    assert annotation(frozenset({"en"}), frozenset()) == queue.waiting < annotation(None, frozenset())
    call_ahead = frozenset({"https://w3id.org/ob-caie/dso/vaccine-education/CallAhead"})
    matching = annotation_queue(graphs, "measles", 1, "nora", frozenset({"en"}), call_ahead, 200)
    assert annotation(frozenset({"en"}), call_ahead) == sum(i.matches_expertise for i in matching.items) > 0
    assert (
        waiting_for(
            graphs,
            "nora",
            frozenset({"annotator"}),
            frozenset({"en"}),
            frozenset({"https://example.org/no-such-concept"}),
        )
        == []
    )


def test_a_record_rebuilt_behind_the_service_is_read_afresh(judged: Service) -> None:
    graphs, before = graphs_over(judged.store), dump(judged.store)
    first = waiting_for(graphs, "nora", frozenset({"annotator"}), None, frozenset())
    probe = probes(judged, "hanging")[0]["probe"]
    posted(
        judged,
        "/runs/1/determinations",
        {"determinations": [{"probe": probe, "criterion": "hanging", "outcome": "passed", "rationale": "fine"}]},
        "nora",
    )
    determined = waiting_for(graphs, "nora", frozenset({"annotator"}), None, frozenset())
    assert [i.count for i in determined] == [first[0].count - 1]  # the batch appended since was read
    judged.store.run_update("DROP ALL")
    restore(judged.store, before)  # the record as it was, under the same graph service
    assert waiting_for(graphs, "nora", frozenset({"annotator"}), None, frozenset()) == first
