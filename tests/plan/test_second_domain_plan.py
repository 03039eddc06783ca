"""A second DSO plans through the HTTP API with no code change (issue 9, "Done when").

The bed-nets domain (examples/bednets, the second worked example: its DSO, Ghana's knowledge graph, a SHACL consistency
rule, a routing rule and English templates) is loaded through ``/graphs`` by role, an evaluation is scoped on it
(evaluation.json: English and Twi), its envelope (envelope.json: three criteria, on hanging, washing and getting a
net) is assessed and signed off, and an operator makes a plan, all as a user would over HTTP. The plan and the
record then show, through the JSON and the published queries:

- the derivation blocks by the domain's own rules (a child parent; washing a net one does not use) and every
  probe's scenario is eligible; the routing rule keeps children from the hanging criterion;
- Twi has no template set, so the plan says so and every probe is English; each opening turn is the persona's and
  the need's text of templates-en.ttl, no two alike;
- the store also holds the vaccine DSO's scenario shapes, as a deployment serving both domains would: they
  declare another DSO (dcterms:conformsTo), so the derivation neither reads nor pins them;
- each criterion's prompt frame is the two personas' questions on its need (the age and the net are never said),
  so the domain holds six opening turns in all: a budget of six probes them all, by either strategy, and a
  larger one is refused naming the frames.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from rdflib import RDF, Graph, Literal, Namespace, URIRef

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..test_envelope import snapshot
from .test_openings import bound
from .test_pinned_inputs import select

DOMAIN = Path(__file__).parents[2] / "examples" / "bednets"
VACCINE_SHAPES = Path(__file__).parents[2] / "shapes"
"""The vaccine DSO's scenario shapes, loaded beside the domain's as another domain's (``shapes/scenario-*``)."""
ID = "bednets"
BN = Namespace("https://example.org/dso/bednets/")
EPO = "https://w3id.org/ob-caie/epo/"
ENGLISH, TWI = "http://lexvo.org/id/iso639-3/eng", "http://lexvo.org/id/iso639-3/twi"
PLAN = {"strategy": "Equal", "budget": 6, "seed": 7, "reviewSample": 48}
CHILD_PARENT = "https://example.org/shapes/bednets-consistency/ChildParent"
CRITERION_NEED = {"hanging": BN.HowToHang, "washing": BN.Washing, "where": BN.WhereToGet}
GRAPHS = {  # the /graphs resource of each domain file, as its author loads it (a KG names its DSO)
    "dso/bednets": "dso.ttl",
    "shapes/bednets-kg": "shapes-kg.ttl",  # the KG shapes the DSO declares: loaded before its KG
    "kg/ghana?dso=bednets": "kg-ghana.ttl",
    "shapes/scenario-bednets-consistency": "scenario-consistency.ttl",
    "shapes/scenario-bednets-routing": "scenario-routing.ttl",
    "templates/en": "templates-en.ttl",
}

pytestmark = EMBEDDED_ONLY  # what it shows is the domain's data driving the service, not the store's transport


def domain_json(name: str) -> dict:
    return json.loads((DOMAIN / name).read_text(encoding="utf-8"))


def posted(service: Service, path: str, body: dict, agent: str, evaluation: str = ID) -> dict:
    answer = service.http.post(f"/evaluations/{evaluation}{path}", json=body, headers=service.auth(agent))
    assert answer.status_code == 201, (path, answer.text)
    return answer.json()


def sign_off(service: Service, evaluation: str = ID, envelope: dict | None = None) -> None:
    """The domain expert finds the DSO, each criterion and the envelope fit; the organizational expert signs off."""

    def post(path: str, body: dict, agent: str) -> None:
        posted(service, path, body, agent, evaluation)

    post("/dso/appropriateness", {"appropriate": True, "rationale": "models what people ask about nets"}, "annie")
    for criterion in (envelope or domain_json("envelope.json"))["criteria"]:
        post(f"/criteria/{criterion['id']}/relevance", {"relevant": True, "rationale": "matters"}, "annie")
    post("/envelope/appropriateness", {"appropriate": True, "rationale": "fits the public"}, "annie")
    post("/envelope/sign-off", {"comment": "for the test domain"}, "dana")


def another_evaluation(service: Service, evaluation: str, envelope: dict) -> None:
    """A second evaluation of the domain (its scope under another id) with ``envelope``, signed off."""
    scope = {**domain_json("evaluation.json"), "id": evaluation}
    assert service.http.post("/evaluations", json=scope, headers=service.auth("theo")).status_code == 201
    put = service.http.put(f"/evaluations/{evaluation}/envelope", json=envelope, headers=service.auth("theo"))
    assert put.status_code == 201, put.text
    sign_off(service, evaluation, envelope)


def load_domain(service: Service) -> None:
    """The domain's graphs (and the vaccine DSO's scenario shapes) loaded through ``/graphs`` by the admin."""
    files = {
        **{f"shapes/{p.stem}": p for p in sorted(VACCINE_SHAPES.glob("scenario-*.ttl"))},
        **{resource: DOMAIN / name for resource, name in GRAPHS.items()},
    }
    for resource, path in files.items():
        put = service.http.put(
            f"/graphs/{resource}",
            content=path.read_bytes(),
            headers={"Content-Type": "text/turtle", **service.auth("admin")},
        )
        assert put.status_code == 201, (resource, put.text)


def draft(service: Service) -> None:
    """The domain's graphs loaded by the admin, the evaluation scoped and its envelope written: nothing assessed
    yet."""
    load_domain(service)
    made = service.http.post("/evaluations", json=domain_json("evaluation.json"), headers=service.auth("theo"))
    assert made.status_code == 201, made.text
    enveloped = service.http.put(
        f"/evaluations/{ID}/envelope", json=domain_json("envelope.json"), headers=service.auth("theo")
    )
    assert enveloped.status_code == 201, enveloped.text


def build(service: Service) -> None:
    """The domain drafted (:func:`draft`), its envelope assessed and signed off, plan 1 made."""
    draft(service)
    sign_off(service)
    posted(service, "/plans", PLAN, "theo")


def plan_iri(number: int = 1) -> str:
    return f"{BASE_URL}evaluations/{ID}/plans/{number}"


def local(iri: str) -> str:
    return iri.rsplit("/", 1)[-1]


def english_texts() -> dict[URIRef, str]:
    """Concept to its English opening text, read from the domain's template file."""
    templates = Graph().parse(DOMAIN / "templates-en.ttl")
    return {
        s: str(o)
        for s, o in templates.subject_objects(URIRef(EPO + "openingText"))  # type: ignore[misc]  # rdflib types subject_objects' pairs loosely; narrowed by the isinstance filter
        if isinstance(o, Literal) and o.language == "en"
    }


def probe_scenarios(service: Service) -> dict[str, dict]:
    """Per probe of plan 1: its criterion id, opening text and tag, template set, and its scenario's person's
    values by property IRI, read from the plan's and the scenarios graph with SPARQL."""
    rows = select(
        service,
        f"""
        PREFIX epo: <{EPO}>
        PREFIX dcterms: <http://purl.org/dc/terms/>
        SELECT ?probe ?criterion ?text (LANG(?text) AS ?tag) ?templates ?property ?value WHERE {{
          VALUES (?plan ?scenarios) {{ (<{plan_iri()}> <{BASE_URL}evaluations/{ID}/scenarios>) }}
          GRAPH ?plan {{ ?plan epo:includesProbe ?probe . ?probe epo:allocatedTo ?criterion ;
            epo:fromScenario ?scenario ; epo:openingPrompt ?text ; epo:openingTemplates ?templates }}
          GRAPH ?scenarios {{ ?scenario dcterms:subject ?person . ?person ?property ?value }}
        }}""",
    )
    probes: dict[str, dict] = {}
    for row in rows:
        probe = probes.setdefault(
            row["probe"],
            {
                "criterion": local(row["criterion"]),
                "text": row["text"],
                "tag": row["tag"],
                "templates": row["templates"],
                "values": defaultdict(set),
            },
        )
        probe["values"][row["property"]].add(row["value"])
    return probes


def test_the_plan_gives_each_criterion_its_prompt_frame(planned: Service) -> None:
    plan = planned.http.get(f"/evaluations/{ID}/plans/1").json()
    assert (plan["strategy"], plan["budget"], plan["probes"]) == ("Equal", 6, 6)
    # personas 2 x ages 2 x nets 2 x Ghana x English (Twi has no templates) x needs 3
    assert plan["frameSize"] == 24 and plan["languagesWithoutTemplates"] == [TWI]
    assert plan["eligibleFrameSize"] == 24 - 6 - 4 + 1  # child parents, washing without a net, both
    allocation = {local(a["criterion"]): a for a in plan["allocation"]}
    assert set(allocation) == set(CRITERION_NEED)
    for row in allocation.values():  # the two personas' questions on the need: age and net are never said
        assert (row["promptFrame"], row["probes"], row["exercisedBy"], row["scenarios"]) == (2, 2, 2, 2)
    named = select(planned, bound("plan-languages-without-templates", plan=plan_iri()))
    assert named == [{"language": TWI, "label": "Twi"}]


def test_the_domains_rules_block_and_only_eligible_scenarios_are_probed(planned: Service) -> None:
    summary = {
        r["rule"]: r["scenarios"] for r in planned.http.get(f"/evaluations/{ID}/scenarios/summary").json()["rules"]
    }
    assert summary == {CHILD_PARENT: 6, str(BN.WashingWithoutNet): 4, EPO + "EligibleScenario": 15}
    eligible = planned.http.get(f"/evaluations/{ID}/scenarios", params={"status": "eligible", "limit": 100}).json()
    probes = planned.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    assert {p["scenario"] for p in probes} <= {s["scenario"] for s in eligible["items"]}
    described = probe_scenarios(planned)
    assert len(described) == len(probes) == 6
    for iri, probe in described.items():
        values = probe["values"]
        persona, age, net = values[str(RDF.type)], values[str(BN.hasAgeBand)], values[str(BN.usesNet)]
        need = values[str(BN.asks)]
        assert not (str(BN.Parent) in persona and str(BN.Child) in age), iri  # the SHACL rule
        assert not (str(BN.Washing) in need and "false" in net), iri  # the OWL axiom
        assert need == {str(CRITERION_NEED[probe["criterion"]])}, iri
        if probe["criterion"] == "hanging":  # the routing rule: a child does not hang a net
            assert age == {str(BN.Adult)}, iri
        assert values[str(BN.speaks)] == {ENGLISH}, iri
    assert [
        row for row in select(planned, bound("criterion-probe-bearing", plan=plan_iri())) if row["bears"] != "true"
    ] == []
    assert select(planned, bound("probes-without-passed-consistency-check", plan=plan_iri())) == []


def test_another_domains_shapes_are_neither_read_nor_pinned(planned: Service) -> None:
    pinned = {
        row["graph"]
        for row in select(
            planned,
            f"""
        PREFIX prov: <http://www.w3.org/ns/prov#>
        SELECT ?graph WHERE {{ GRAPH <{plan_iri()}> {{ <{plan_iri()}> prov:wasInfluencedBy ?graph }} }}""",
        )
    }
    assert f"{BASE_URL}graphs/shapes/scenario-bednets-consistency" in pinned
    assert not any("graphs/shapes/scenario-consistency" in g or "graphs/shapes/scenario-routing" in g for g in pinned)
    rules = {r["rule"] for r in planned.http.get(f"/evaluations/{ID}/scenarios/summary").json()["rules"]}
    assert not any(rule.startswith("https://w3id.org/ob-caie/shapes/") for rule in rules)


def test_the_scenario_listing_filters_by_the_domains_own_facet_names(planned: Service) -> None:
    """The listing shows facets by local name (``asks``, ``hasAgeBand``); a filter takes those names back, as it
    takes the vaccine DSO's, and an unknown name gets a 400 naming the ones it knows."""
    listed = planned.http.get(
        f"/evaluations/{ID}/scenarios", params={"facet": [f"asks={BN.Washing}", f"hasAgeBand={BN.Adult}"], "limit": 100}
    ).json()
    assert listed["total"] > 0 and all(
        s["facets"]["asks"] == [str(BN.Washing)] and s["facets"]["hasAgeBand"] == [str(BN.Adult)]
        for s in listed["items"]
    )
    everything = planned.http.get(f"/evaluations/{ID}/scenarios", params={"limit": 100}).json()["items"]
    assert listed["total"] == sum(
        1
        for s in everything
        if s["facets"].get("asks") == [str(BN.Washing)] and s["facets"].get("hasAgeBand") == [str(BN.Adult)]
    )
    unknown = planned.http.get(f"/evaluations/{ID}/scenarios", params={"facet": f"hasWings={BN.Adult}"})
    assert unknown.status_code == 400 and "hasWings" in unknown.text and "usesNet" in unknown.text


def test_every_probe_is_english_and_says_its_scenario_from_the_templates(planned: Service) -> None:
    texts = english_texts()
    probes = planned.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    assert {p["language"] for p in probes} == {ENGLISH}
    said = [p["openingPrompt"] for p in probes]
    assert len(set(said)) == len(said)  # no two probes open alike
    personas = (BN.Parent, BN.Traveller)
    # the six probes are every opening turn the domain has: each persona's question on each criterion's need
    assert sorted(said) == sorted(f"{texts[p]} {texts[n]}" for p in personas for n in CRITERION_NEED.values())
    for iri, probe in probe_scenarios(planned).items():
        persona = next(URIRef(v) for v in probe["values"][str(RDF.type)] if URIRef(v) in personas)
        assert probe["text"] == f"{texts[persona]} {texts[CRITERION_NEED[probe['criterion']]]}", iri
        assert (probe["tag"], probe["templates"]) == ("en", "https://example.org/templates/bednets/en"), iri


def test_a_budget_fills_the_frames_by_either_strategy_and_more_is_refused(planned: Service) -> None:
    """Highest weight first gives the top third (hanging) two thirds of six, more than its frame of two: what the
    cap frees goes to the others, so the plan has its six probes. Seven is more than the domain can say."""
    plan = posted(planned, "/plans", {**PLAN, "strategy": "HighestWeightFirst"}, "theo")
    assert plan["probes"] == 6 and {local(a["criterion"]): a["probes"] for a in plan["allocation"]} == dict.fromkeys(
        CRITERION_NEED, 2
    )
    before = snapshot(planned.store)
    for strategy in ("Equal", "HighestWeightFirst", "ProportionalToWeight"):
        refused = planned.http.post(
            f"/evaluations/{ID}/plans", json={**PLAN, "strategy": strategy, "budget": 7}, headers=planned.auth("theo")
        )
        assert refused.status_code == 422, refused.text
        detail = refused.json()["detail"]
        assert "prompt frames" in detail and "criteria/hanging 2" in detail and "at most 6" in detail
    assert snapshot(planned.store) == before


def test_the_second_domains_criteria_route_by_their_declared_triggers_with_no_code_change(planned: Service) -> None:
    """The bed-nets envelope with each criterion triggered by its need (``bn:NeedFacet``) as a second evaluation: the
    plan has every probe exercise exactly the criteria its scenario triggers (queries/criterion-triggers.rq, as a
    third party runs it), and each criterion's probes ask its need."""
    other = "bednets-triggered"
    envelope = domain_json("envelope.json")
    for criterion in envelope["criteria"]:
        criterion["bearsWhen"] = [{"facet": str(BN.NeedFacet), "values": [str(CRITERION_NEED[criterion["id"]])]}]
    another_evaluation(planned, other, envelope)
    posted(planned, "/plans", PLAN, "theo", other)
    plan = f"{BASE_URL}evaluations/{other}/plans/1"
    rows = select(planned, bound("criterion-triggers", plan=plan))
    assert len(rows) == 6 * 3 and all(row["bears"] == row["exercised"] for row in rows), rows
    assert sum(row["exercised"] == "true" for row in rows) == 6  # each probe asks one need: one criterion each
    asked = {
        row["probe"]: row["need"]
        for row in select(
            planned,
            f"""
        PREFIX epo: <{EPO}>
        SELECT ?probe ?need WHERE {{
          GRAPH <{plan}> {{ ?probe epo:fromScenario ?scenario }}
          GRAPH <{BASE_URL}evaluations/{other}/scenarios> {{ ?scenario ?link ?person . ?person <{BN}asks> ?need }} }}""",
        )
    }
    for row in rows:
        if row["exercised"] == "true":
            assert asked[row["probe"]] == str(CRITERION_NEED[local(row["criterion"])]), row


def test_a_budget_over_a_shared_opening_turn_pool_is_refused_naming_one_that_draws(planned: Service) -> None:
    """Issue 25: criteria whose frames overlap draw from one pool of opening turns. Here hanging also covers washing,
    so the frames hold 4 + 2 + 2 = 8 turns together but the domain says only 6, and what hanging draws first washing
    cannot draw again. A budget of 12 was refused naming 8, and 8 and 6 then failed on the shared pool; the first
    refusal now names the largest budget that draws for the strategy and seed, and that budget makes the plan."""
    other = "bednets-shared"
    envelope = domain_json("envelope.json")
    hanging = next(c for c in envelope["criteria"] if c["id"] == "hanging")
    hanging["concepts"] = [str(BN.HowToHang), str(BN.Washing)]
    another_evaluation(planned, other, envelope)
    url, theo = f"/evaluations/{other}/plans", planned.auth("theo")
    refused = planned.http.post(url, json={**PLAN, "budget": 12}, headers=theo)
    assert refused.status_code == 422, refused.text
    detail = refused.json()["detail"]
    assert "prompt frames hold together (8" in detail and "one pool" in detail, detail
    cap = int(detail.rsplit("at most ", 1)[1])
    assert 1 <= cap < 6  # below the frames' 8 and the domain's 6 turns: Equal's draws overlap for seed 7
    plan = posted(planned, "/plans", {**PLAN, "budget": cap}, "theo", other)
    assert plan["probes"] == cap
    said = [p["openingPrompt"] for p in planned.http.get(f"{url}/1/probes", params={"limit": 100}).json()["items"]]
    assert len(set(said)) == len(said) == cap
    over = planned.http.post(url, json={**PLAN, "budget": cap + 1}, headers=theo)  # refused on the pool, same cap
    assert over.status_code == 422 and over.json()["detail"].endswith(f"at most {cap}"), over.text
