"""The annotator's queue and blindness (service/workspace/annotation.py): a case in a language the annotator does
not read never waits for them (the worked example's eight languages, each case's language read back with SPARQL);
a plan that assigns probes (MatchedToExpertise over HTTP) gives each annotator their own and nobody else's, with
their progress; and a case's other verdicts stay hidden from an annotator until they submit their own.
"""

from __future__ import annotations

import pytest
from pyoxigraph import Quad

from service.core.errors import BadRequest, NotFound
from service.workspace import Queue, annotation_queue, case_view, reads

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, graphs_over, restore
from ..judgments.test_judgments_api import probes
from ..plan.test_second_domain_plan import BN, ID, posted
from ..runs.test_run_record import DEMO, finished

pytestmark = EMBEDDED_ONLY  # what it shows is the queue's rules over a record, not the store's transport
LANGUAGES = """
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    SELECT ?number (LANG(?opening) AS ?tag) WHERE {
      GRAPH <http://caie.test/evaluations/measles/plans/1> { ?probe epo:openingPrompt ?opening }
      BIND(STRAFTER(STR(?probe), "/probes/") AS ?number)
    }"""


@pytest.fixture
def example(service: Service, worked_example_quads: list[Quad]) -> Service:
    restore(service.store, worked_example_quads)
    return service


def tags(service: Service) -> dict[int, str]:
    """Each probe of the worked example's plan and its opening turn's language tag, by the published SPARQL endpoint."""
    answer = service.http.get(
        "/sparql", params={"query": LANGUAGES}, headers={"Accept": "application/sparql-results+json"}
    )
    return {int(b["number"]["value"]): b["tag"]["value"] for b in answer.json()["results"]["bindings"]}


def test_a_case_in_a_language_the_annotator_does_not_read_never_waits_for_them(example: Service) -> None:
    graphs, language_of = graphs_over(example.store), tags(example)

    def queue(read: set[str] | None) -> Queue:
        return annotation_queue(
            graphs, "measles", 1, "nora", None if read is None else frozenset(read), frozenset(), 200
        )

    everyone = queue(None)  # declared no language: offered every one
    assert everyone.waiting > len(everyone.items) == 200
    waiting = {}
    for tag in sorted(set(language_of.values())):  # the worked example's eight languages
        alone = queue({tag})
        assert alone.items and {language_of[i.probe] for i in alone.items} == {tag}, tag
        assert all(i.language == tag for i in alone.items)
        waiting[tag] = alone.waiting
    assert len(waiting) == 8 and sum(waiting.values()) == everyone.waiting  # each case in exactly one of them
    for read, tags_read in (({"sw", "ha"}, {"sw", "ha"}), ({"swa"}, {"sw"}), ({"en-NG", "BN"}, {"en", "bn"})):
        both = queue(read)
        assert {language_of[i.probe] for i in both.items} == tags_read, read
        assert both.waiting == sum(waiting[tag] for tag in tags_read)
    assert queue(set()).waiting == 0  # declared reading none of them
    assert annotation_queue(graphs, "measles", None, "nora", frozenset({"en"}), frozenset(), 200) == queue({"en"})


def test_the_queue_prefers_expertise_then_probe_order_and_counts_progress(example: Service) -> None:
    graphs = graphs_over(example.store)
    plain = annotation_queue(graphs, "measles", 1, "nora", frozenset({"en"}), frozenset(), 200)
    assert [i.probe for i in plain.items] == sorted(i.probe for i in plain.items)
    c05 = "http://caie.test/evaluations/measles/envelope/v1/criteria/c05"
    concepts = example.http.get("/evaluations/measles/envelope").json()
    call_ahead = "https://w3id.org/ob-caie/dso/vaccine-education/CallAhead"
    assert "ve:CallAhead" in next(c["concepts"] for c in concepts["criteria"] if c["id"] == "c05")  # compacted
    expert = annotation_queue(graphs, "measles", 1, "nora", frozenset({"en"}), frozenset({call_ahead}), 200)
    first = [i for i in expert.items if i.matches_expertise]
    assert first and all(c05 in i.criteria for i in first) and expert.items[: len(first)] == tuple(first)
    assert {i.probe for i in expert.items} == {i.probe for i in plain.items}  # preferred, not restricted
    assert annotation_queue(graphs, "measles", 1, "nora", frozenset({"en"}), frozenset(), 3).items == plain.items[:3]
    # nobody assigned anything: nora's share is what waits for anyone, and she determined none of it yet
    assert (plain.determined, plain.total) == (0, sum(len(i.criteria) for i in plain.items))
    with pytest.raises(BadRequest):
        annotation_queue(graphs, "measles", 1, "nora", None, frozenset(), 1000)
    with pytest.raises(NotFound):
        annotation_queue(graphs, "measles", 9, "nora", None, frozenset(), 10)


def test_a_plan_that_assigns_probes_gives_each_annotator_their_own(planned: Service) -> None:
    body = {
        "strategy": "MatchedToExpertise",
        "budget": 4,
        "seed": 7,
        "reviewSample": 48,
        "annotators": [
            {"agent": "nora", "expertise": [str(BN.HowToHang), str(BN.Washing)], "capacity": 3},
            {"agent": "ana", "expertise": [str(BN.WhereToGet)], "capacity": 3},
        ],
    }
    posted(planned, "/plans", body, "theo")
    posted(planned, "/plans/2/approval", {}, "annie")
    started = planned.http.post(
        f"/evaluations/{ID}/runs", json={"plan": 2, "target": DEMO}, headers=planned.auth("theo")
    )
    assert started.status_code == 202, started.text
    finished(planned, 1, traces=4)
    listed = planned.http.get(f"/evaluations/{ID}/plans/2/probes", params={"limit": 100}).json()["items"]
    mine = {p["number"]: p for p in listed if p["assignedTo"] == f"{BASE_URL}agents/nora"}
    assert mine and len(mine) < len(listed)
    graphs = graphs_over(planned.store)
    queue = annotation_queue(graphs, ID, 1, "nora", None, frozenset(), 50)
    assert {i.probe for i in queue.items} == set(mine) and all(i.assigned for i in queue.items)
    assert (queue.determined, queue.total) == (0, sum(len(p["exercises"]) for p in mine.values()))
    assert annotation_queue(graphs, ID, 1, "vera", None, frozenset(), 50).items == ()  # no assignment, no work
    ana = annotation_queue(graphs, ID, 1, "ana", None, frozenset(), 50)
    assert {i.probe for i in ana.items} == set(range(1, 5)) - set(mine)

    number = min(mine)
    criterion = mine[number]["exercises"][0].rsplit("/", 1)[-1]
    posted(
        planned,
        "/runs/1/determinations",
        {
            "determinations": [
                {
                    "probe": mine[number]["probe"],
                    "criterion": criterion,
                    "outcome": "passed",
                    "rationale": "says to tuck it in",
                }
            ]
        },
        "annie",
    )  # another person's word does not do nora's assigned work
    assert annotation_queue(graphs, ID, 1, "nora", None, frozenset(), 50) == queue
    posted(
        planned,
        "/runs/1/determinations",
        {
            "determinations": [
                {
                    "probe": mine[number]["probe"],
                    "criterion": c.rsplit("/", 1)[-1],
                    "outcome": "passed",
                    "rationale": "fine",
                }
                for c in mine[number]["exercises"]
            ]
        },
        "nora",
    )
    after = annotation_queue(graphs, ID, 1, "nora", None, frozenset(), 50)
    assert number not in {i.probe for i in after.items}
    assert (after.determined, after.total) == (len(mine[number]["exercises"]), queue.total)


def test_others_verdicts_stay_hidden_until_the_annotator_gives_their_own(judged: Service) -> None:
    graphs = graphs_over(judged.store)
    probe = probes(judged, "hanging")[0]
    number = probe["number"]
    before = case_view(graphs, ID, 1, number, "nora")
    hanging = next(c for c in before.criteria if c.criterion.identifier == "hanging")
    assert hanging.own == () and hanging.others is None and not before.determined
    assert [t.index for t in before.turns] == [1] and before.turns[0].reply
    listed = judged.http.get(f"/evaluations/{ID}/determinations", params={"criterion": probe["criterion"]}).json()
    rule = {d["determination"] for d in listed["determinations"] if d["probe"] == probe["probe"]}
    assert rule  # the rule judge ruled on it: nora must not see that yet

    posted(
        judged,
        "/runs/1/determinations",
        {
            "determinations": [
                {
                    "probe": probe["probe"],
                    "criterion": "hanging",
                    "outcome": "failed",
                    "rationale": "no word on tucking in",
                }
            ]
        },
        "annie",
    )
    still = next(c for c in case_view(graphs, ID, 1, number, "nora").criteria if c.criterion.identifier == "hanging")
    assert still.others is None  # another person's verdict is hidden as well

    made = posted(
        judged,
        "/runs/1/determinations",
        {
            "determinations": [
                {
                    "probe": probe["probe"],
                    "criterion": "hanging",
                    "outcome": "passed",
                    "rationale": "it says to hang it up",
                }
            ]
        },
        "nora",
    )["determinations"]
    after = next(c for c in case_view(graphs, ID, 1, number, "nora").criteria if c.criterion.identifier == "hanging")
    assert [v.determination for v in after.own] == made and after.own[0].judge_kind == "person"
    listed = judged.http.get(f"/evaluations/{ID}/determinations", params={"criterion": probe["criterion"]}).json()
    everyone = {d["determination"] for d in listed["determinations"] if d["probe"] == probe["probe"]}
    assert {v.determination for v in after.others} == everyone - set(made)
    assert {v.judge_kind for v in after.others} == {"rule", "person"}
    seen = next(c for c in case_view(graphs, ID, 1, number, "annie").criteria if c.criterion.identifier == "hanging")
    assert {v.determination for v in seen.others} == everyone - {v.determination for v in seen.own} and seen.own
    with pytest.raises(NotFound):
        case_view(graphs, ID, 1, 99, "nora")


def test_who_reads_what_compares_primary_language_subtags() -> None:
    assert reads(frozenset({"sw"}), "sw-KE") and reads(frozenset({"swa"}), "sw") and reads(frozenset({"EN"}), "en-NG")
    assert not reads(frozenset({"en"}), "sw") and not reads(frozenset({"pcm"}), "en")
    assert not reads(frozenset({"en"}), "und") and not reads(frozenset(), "en")  # an unknown language: not theirs
    assert reads(None, "und") and reads(None, "ha")  # declared none: offered every language
