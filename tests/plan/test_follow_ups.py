"""Scripted follow-up turns (issue 10, "Execution"; docs/templates.md): a probe is a conversation whose later user
turns come from its language's template file, keyed by the need its opening turn asks.

Over real HTTP on a 40-probe plan of the measles example: every probe's follow-ups are the ones its own
language's file gives for the need its opening asks, slots filled as the opening's (worked out here from the
files alone); they are in the plan graph, so the plan's digest covers them and a follow-up changed behind the
service un-approves the plan; the Inspect dataset export carries them; a run on the demonstration chatbot
sends them, one user turn after each reply, and the chatbot's reply to the follow-up stays on the question's
topic. Without HTTP: every template file has the follow-ups the English one has; a language whose file has
no follow-up for a need gets none, and says so (never another language's); a follow-up whose slot its need's
opening text does not say is refused, naming it (it would make the prompt frame count too few conversations).
"""

from __future__ import annotations

import json
import re
import time
from functools import cache

import pytest
from pyoxigraph import Literal, NamedNode, Quad
from rdflib import Graph, URIRef
from rdflib import Literal as RdfLiteral
from rdflib.collection import Collection

from service.core.errors import Conflict
from service.core.store import ChangeSet
from service.plan.openings import Openings, TemplateSet

from ..api.test_evaluations import ID
from ..conftest import ALSO_REMOTE, EMBEDDED_ONLY, REPO, Service, restored
from .test_pinned_inputs import select
from .test_plans_api import plan_json

TEMPLATES = REPO / "ontologies" / "templates"
EPO = "https://w3id.org/ob-caie/epo/"
VE = "https://w3id.org/ob-caie/dso/vaccine-education/"
SLOT = re.compile(r"\{(\w+)\}")
pytestmark = EMBEDDED_ONLY  # the plan and the run do not depend on the store; the follow-ups' query runs on both


@cache
def template_file(tag: str) -> Graph:
    return Graph().parse(TEMPLATES / f"{tag}.ttl")


def file_follow_ups(tag: str) -> dict[str, list[str]]:
    """Per need, the follow-up texts the file lists, as written (slots unfilled)."""
    graph = template_file(tag)
    return {
        str(need): [str(text) for text in Collection(graph, head)]
        for need, head in graph.subject_objects(URIRef(EPO + "followUpTexts"))
    }


def asked(tag: str, opening: str) -> tuple[str, list[str]]:
    """The need whose question ends ``opening``, and its follow-ups with their slots filled with the phrases the
    opening used for them: read off the file, the question matched with each slot as any of the file's phrases
    (a local setting may be a knowledge graph's label: any text)."""
    graph = template_file(tag)
    phrases = sorted({str(o) for o in graph.objects(None, URIRef(EPO + "openingText"))}, key=len, reverse=True)
    anything = "|".join(map(re.escape, phrases))
    found = set()
    for need, turns in file_follow_ups(tag).items():
        for prop in ("openingText", "openingTextAboutOther"):
            for question in graph.objects(URIRef(need), URIRef(EPO + prop)):
                parts = SLOT.split(str(question))  # text, slot, text, slot, ...
                pattern = "".join(
                    re.escape(p) if i % 2 == 0 else (f"(?P<{p}>{anything})" if p == "disease" else f"(?P<{p}>.+)")
                    for i, p in enumerate(parts)
                )
                if match := re.search(pattern + "$", opening):
                    found.add((need, tuple(SLOT.sub(lambda m: match[m[1]], turn) for turn in turns)))
    assert len(found) == 1, (opening, found)
    need, turns = found.pop()
    return need, list(turns)


def fits(turn: str, texts: set[str]) -> bool:
    """Whether ``turn`` is one of ``texts`` with its slots filled (by anything)."""
    return any(re.fullmatch(".+".join(map(re.escape, SLOT.split(text)[::2])), turn) for text in texts)


def probes_with_tags(service: Service) -> list[dict]:
    tags = {
        row["probe"]: row["tag"]
        for row in select(
            service,
            f"""
        PREFIX epo: <{EPO}>
        SELECT ?probe (LANG(?text) AS ?tag) WHERE {{ GRAPH ?plan {{ ?probe epo:openingPrompt ?text }} }}""",
        )
    }
    items = service.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    return [{**probe, "tag": tags[probe["probe"]]} for probe in items]


@ALSO_REMOTE
def test_each_probe_has_its_languages_follow_ups_for_its_need(small_planned: Service) -> None:
    probes = probes_with_tags(small_planned)
    assert len(probes) == 40
    for probe in probes:
        assert probe["followUps"] == asked(probe["tag"], probe["openingPrompt"])[1], probe
    english, swahili = ({turn for turns in file_follow_ups(tag).values() for turn in turns} for tag in ("en", "sw"))
    sw = [p for p in probes if p["tag"] == "sw"]
    en = [p for p in probes if p["tag"] == "en"]
    assert sw and en
    for probe in sw:  # the Swahili file's text, never the English one
        [turn] = probe["followUps"]
        assert fits(turn, swahili) and not fits(turn, english)
    for probe in en:
        [turn] = probe["followUps"]
        assert fits(turn, english) and not fits(turn, swahili)
    # the turns are in the plan graph, numbered as user turns (the opening is 1), tagged like the opening
    rows = select(
        small_planned,
        f"""
        PREFIX epo: <{EPO}>
        SELECT ?probe ?position ?text (LANG(?text) AS ?tag) WHERE {{ GRAPH ?plan {{
          ?probe epo:followUp ?turn . ?turn epo:followUpPosition ?position ; epo:followUpPrompt ?text }} }}""",
    )
    assert {(r["probe"], r["position"], r["text"], r["tag"]) for r in rows} == {
        (p["probe"], "2", p["followUps"][0], p["tag"]) for p in probes
    }


def test_the_inspect_dataset_carries_each_probes_follow_ups(small_planned: Service) -> None:
    """The plan exported for Inspect: each sample's follow-ups are its probe's, which the scripted solver plays."""
    exported = small_planned.http.get(f"/evaluations/{ID}/plans/1/inspect-dataset")
    assert exported.status_code == 200, exported.text
    samples = {s["id"]: s for s in map(json.loads, exported.text.splitlines())}
    probes = probes_with_tags(small_planned)
    assert samples.keys() == {p["probe"] for p in probes}
    for probe in probes:
        sample = samples[probe["probe"]]
        assert sample["input"] == [{"role": "user", "content": probe["openingPrompt"]}]
        assert sample["metadata"]["follow_ups"] == probe["followUps"] != []


def test_the_plan_digest_covers_the_follow_ups(small_planned: Service) -> None:
    service, plan = small_planned, plan_json(small_planned)
    url = f"/evaluations/{ID}/plans/1/approval"
    assert service.http.post(url, json={"digest": plan["digest"]}, headers=service.auth("annie")).status_code == 201
    [row] = select(
        service,
        f"""
        PREFIX epo: <{EPO}>
        SELECT ?turn ?text (LANG(?text) AS ?tag) WHERE {{ GRAPH <{plan['plan']}> {{
          <{plan['plan']}/probes/1> epo:followUp ?turn . ?turn epo:followUpPrompt ?text }} }}""",
    )
    # someone with access to the store rewords probe 1's follow-up, bypassing the service
    graph, turn, prompt = NamedNode(plan["plan"]), NamedNode(row["turn"]), NamedNode(EPO + "followUpPrompt")
    service.store.apply(
        ChangeSet(
            delete=[Quad(turn, prompt, Literal(row["text"], language=row["tag"]), graph)],
            insert=[Quad(turn, prompt, Literal(row["text"] + "!", language=row["tag"]), graph)],
        )
    )
    view = plan_json(service)
    assert view["digest"] != plan["digest"] and view["approved"] is False
    assert any("changed after it was made" in reason for reason in view["notApprovedBecause"])


def approve(service: Service) -> None:
    approved = service.http.post(f"/evaluations/{ID}/plans/1/approval", json={}, headers=service.auth("annie"))
    assert approved.status_code == 201, approved.text


@pytest.fixture
def approved(small_planned: Service, snapshots: dict) -> Service:
    return restored(small_planned, snapshots, "measles example with a 40-probe plan approved", approve)


TURNS = """
    PREFIX epo: <https://w3id.org/ob-caie/epo/>
    PREFIX prov: <http://www.w3.org/ns/prov#>
    SELECT ?probe ?index ?sent ?reply WHERE {
      GRAPH ?case { ?case epo:realizesProbe ?probe .
                    ?turn epo:inConversation ?case ; epo:turnIndex ?index ; epo:inputText ?sent .
                    ?response prov:wasGeneratedBy ?turn ; epo:responseText ?reply }
    } ORDER BY ?probe ?index"""

ON_TOPIC = {
    "VaccineSafety": "vaccine is safe",
    "ScheduleQuestion": "dose",
    "ExposureAdvice": "exposure",
    "SymptomRecognition": "rash appears",
    "WhereToGetVaccinated": "vaccination days",
    "TransmissionRisk": "contagious",
    "TreatmentQuestion": "vitamin A",
}
"""What the demonstration chatbot's answer on each need's topic says (examples/vaccine/caie_vaccine/demo.py)."""


def test_a_run_sends_each_follow_up_after_the_reply_before_it(approved: Service) -> None:
    started = approved.http.post(
        f"/evaluations/{ID}/runs", json={"plan": 1, "target": {"kind": "demo"}}, headers=approved.auth("theo")
    )
    assert started.status_code == 202, started.text
    for _ in range(600):
        run = approved.http.get(f"/evaluations/{ID}/runs/1").json()
        if run["job"] is None or run["job"]["state"] != "running":
            break
        time.sleep(0.05)
    assert (run["cases"], run["traces"], run["executionErrors"]) == (40, 40, 0), run
    sent: dict[str, list[tuple[str, str]]] = {}
    for row in select(approved, TURNS):
        sent.setdefault(row["probe"], []).append((row["index"], row["sent"], row["reply"]))
    probes = probes_with_tags(approved)
    assert sent.keys() == {p["probe"] for p in probes}
    understood = 0
    for probe in probes:
        turns = sorted(sent[probe["probe"]], key=lambda t: int(t[0]))
        assert [(i, text) for i, text, _ in turns] == [("1", probe["openingPrompt"]), ("2", probe["followUps"][0])]
        topic = ON_TOPIC.get(asked(probe["tag"], probe["openingPrompt"])[0].removeprefix(VE))
        # follow-ups on measles only: the demonstration bot declines one on another disease's vaccine, whatever it
        # made of the opening (a need other than the other-disease question may be asked about another disease)
        measles = str(template_file(probe["tag"]).value(URIRef(VE + "Measles"), URIRef(EPO + "openingText")))
        if topic and measles in probe["followUps"][0] and topic in turns[0][2]:  # the bot understood the opening
            assert topic in turns[1][2], (probe, turns)  # and so is the reply to the follow-up
            understood += 1
    assert understood >= 2  # the 40-probe plan has two measles questions in English the bot answers on topic


def test_a_language_without_a_follow_up_gets_none_and_says_so() -> None:
    dso = Graph().parse(REPO / "ontologies" / "dso" / "vaccine-education.ttl")
    kgs = [Graph().parse(REPO / "ontologies" / "kg" / "kenya.ttl")]
    english, swahili = (TemplateSet.read(f"urn:graph:{tag}", template_file(tag)) for tag in ("en", "sw"))
    assert english and swahili and swahili.follow_ups
    bare = TemplateSet(
        swahili.iri,
        "sw",
        swahili.graph,
        swahili.conforms_to,
        swahili.review_status,
        swahili.texts,
        swahili.about_other,
        {},
    )  # the Swahili file without its follow-ups
    values = {
        "persona": VE + "Student",
        "need": VE + "ScheduleQuestion",
        "disease": VE + "Measles",
        "language": "http://lexvo.org/id/iso639-3/swa",
        "style": VE + "PlainStyle",
    }
    said = Openings(dso, kgs, (english, bare)).opening(values, {})
    assert said is not None and said.text == "Mimi ni mwanafunzi. Chanjo ya surua inapaswa kutolewa lini?"
    assert (said.follow_ups, said.lacking_follow_ups) == ((), (VE + "ScheduleQuestion",))
    with_them = Openings(dso, kgs, (english, swahili)).opening(values, {})
    assert with_them is not None and with_them.follow_ups == (
        "Na ikiwa dozi moja ilikosekana, je, ratiba inaanza upya?",
    )
    assert with_them.lacking_follow_ups == ()
    english_said = Openings(dso, kgs, (english, bare)).opening(
        {**values, "language": "http://lexvo.org/id/iso639-3/eng"}, {}
    )
    assert english_said is not None
    assert english_said.follow_ups == ("What if a dose was missed? Does the schedule start again?",)


def test_a_follow_up_slot_its_question_does_not_say_is_refused() -> None:
    dso = Graph().parse(REPO / "ontologies" / "dso" / "vaccine-education.ttl")
    graph = Graph()
    for triple in template_file("en"):
        graph.add(triple)
    head = URIRef("urn:x:list")
    Collection(graph, head, [RdfLiteral("Is it different {setting}?", lang="en")])
    graph.add((URIRef(VE + "SymptomRecognition"), URIRef(EPO + "followUpTexts"), head))
    broken = TemplateSet.read("urn:graph:en", graph)
    assert broken is not None
    with pytest.raises(
        Conflict,
        match=r"\{setting\} in the follow-up 'Is it different \{setting\}\?' of <"
        + re.escape(VE + "SymptomRecognition"),
    ):
        Openings(dso, [], (broken,))


def test_every_template_file_has_the_follow_ups_english_has() -> None:
    """As many follow-up turns for each need as the English file, in each language's own tag, and the file's
    review status unchanged by them (non-English files stay awaiting a native speaker's review)."""
    english = file_follow_ups("en")
    assert len(english) == 8 and all(english.values())
    for path in TEMPLATES.glob("*.ttl"):
        graph = template_file(path.stem)
        found = file_follow_ups(path.stem)
        assert {need: len(turns) for need, turns in found.items()} == {need: len(t) for need, t in english.items()}, (
            path
        )
        assert all(
            text.language == path.stem
            for _, head in graph.subject_objects(URIRef(EPO + "followUpTexts"))
            for text in Collection(graph, head)
        ), path
        status = next(graph.objects(None, URIRef(EPO + "reviewStatus")))
        assert str(status) == EPO + ("Reviewed" if path.stem == "en" else "AwaitingNativeSpeakerReview"), path
