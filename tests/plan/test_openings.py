"""Opening turns in the probe's language, from template files, over real HTTP (issue 9 §3, docs/templates.md).

The worked example's 300-probe plan: every opening turn is in the language it is tagged with (its words come
from that language's template file, and lingua, a language detector no one here wrote, agrees wherever it knows
the language), names its template set, uses the knowledge graphs' local settings, and no two are the same. The
envelope's languages without a template file are reported (plan JSON and a published query) and get no probes;
removing a template file from the store takes its language out of the next plan. caie-spec's S3 (probes have a
prior passed consistency check) is a published query that finds nothing on either backend, and finds the probe
whose check or DSO is taken away.
"""

from __future__ import annotations

import re
from functools import cache

import langcodes
from lingua import Language, LanguageDetectorBuilder
from pyoxigraph import NamedNode, Quad, QuerySolutions, RdfFormat, Store, parse
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF

from service.core import queries

from ..api.test_evaluations import ID, create, sign_off
from ..conftest import ALSO_REMOTE, BASE_URL, EMBEDDED_ONLY, REPO, Service
from .test_pinned_inputs import select
from .test_plans_api import PLAN, make_plan

TEMPLATES = REPO / "ontologies" / "templates"
SMALL = {**PLAN, "strategy": "Equal", "budget": 24, "reviewSample": 20}
DETECTED = {
    "en": Language.ENGLISH,
    "yo": Language.YORUBA,
    "sw": Language.SWAHILI,
    "bn": Language.BENGALI,
    "hi": Language.HINDI,
}
"""The plan's languages lingua knows (it has no Hausa, Igbo or Nigerian Pidgin)."""
NEIGHBOURS = (
    Language.MARATHI,
    Language.GUJARATI,
    Language.PUNJABI,
    Language.TAMIL,
    Language.TELUGU,
    Language.SOMALI,
    Language.ZULU,
    Language.SHONA,
    Language.XHOSA,
    Language.GANDA,
    Language.INDONESIAN,
    Language.TAGALOG,
)
"""Languages a short text in one of those could be taken for: the detector must tell them apart."""
pytestmark = EMBEDDED_ONLY  # what is tested is the plan, not the store; S3's query runs on both
WORD = re.compile(r"\w+")
EPO = "https://w3id.org/ob-caie/epo/"
CONSISTENCY_RULE = "https://w3id.org/ob-caie/shapes/scenario-consistency/ImmuneWithoutCause"


def plan_iri(number: int = 1) -> str:
    return f"{BASE_URL}evaluations/{ID}/plans/{number}"


def bound(name: str, **values: str) -> str:
    """A published query with its parameters bound by a VALUES block, as a third party would run it."""
    block = " ".join(f"VALUES ?{key} {{ <{value}> }}" for key, value in values.items())
    return queries.load(name).replace("WHERE {", f"WHERE {{ {block}", 1)


def openings(service: Service, number: int = 1) -> list[dict[str, str]]:
    return select(
        service,
        f"""
        PREFIX epo: <{EPO}>
        SELECT ?probe ?text (LANG(?text) AS ?tag) ?language ?templates WHERE {{
          GRAPH <{plan_iri(number)}> {{
            <{plan_iri(number)}> epo:includesProbe ?probe .
            ?probe epo:openingPrompt ?text .
            OPTIONAL {{ ?probe epo:language ?language }}
            OPTIONAL {{ ?probe epo:openingTemplates ?templates }}
          }}
        }}""",
    )


@cache
def template_words(tag: str) -> frozenset[str]:
    """Every word of the template file of ``tag`` (its opening texts, in that language)."""
    return frozenset(word for text in texts(tag) for word in WORD.findall(text))


def texts(tag: str) -> list[str]:
    graph = Graph().parse(TEMPLATES / f"{tag}.ttl")
    return [
        str(o)
        for p, o in graph.predicate_objects()
        if str(p).startswith(EPO + "openingText") and isinstance(o, Literal) and o.language == tag
    ]


@cache
def english_sentences() -> frozenset[str]:
    return frozenset(text for text in texts("en") if " " in text)


@cache
def kg_data() -> Graph:
    graph = Graph()
    for path in [
        REPO / "ontologies" / "dso" / "vaccine-education.ttl",
        *sorted((REPO / "ontologies" / "kg").glob("*.ttl")),
    ]:
        graph.parse(path)
    return graph


def tag_of(language: str) -> str:
    """A language IRI's BCP 47 tag, read from the DSO and KG files: its code property, else its ISO 639 IRI's code."""
    codes = [str(o) for p, o in kg_data().predicate_objects(URIRef(language)) if str(p).endswith("languageCode")]
    return langcodes.standardize_tag(codes[0] if codes else language.rsplit("/", 1)[-1])


def languages() -> set[str]:
    return {
        str(s) for s in kg_data().subjects(RDF.type, URIRef("https://w3id.org/ob-caie/dso/vaccine-education/Language"))
    }


def test_every_opening_is_in_its_tagged_language_from_its_template_file(measles_planned: Service) -> None:
    rows = openings(measles_planned)
    assert len(rows) == 300
    tags = {row["tag"] for row in rows}
    assert len(tags - {"en"}) >= 5, tags  # Hausa, Yoruba, Igbo, Pidgin, Swahili, Bengali, Hindi: most of them drawn
    detector = LanguageDetectorBuilder.from_languages(*DETECTED.values(), *NEIGHBOURS).build()
    for row in rows:
        tag, text = row["tag"], row["text"]
        assert row["templates"] == f"https://w3id.org/ob-caie/templates/{tag}", row
        assert tag_of(row["language"]) == tag, row
        strangers = set(WORD.findall(text)) - template_words(tag)
        assert not strangers, f"{text!r} ({tag}) has words its template file lacks: {strangers}"
        if tag != "en":
            assert not any(sentence in text for sentence in english_sentences()), f"English in {text!r} ({tag})"
        if tag in DETECTED:
            assert detector.detect_language_of(text) == DETECTED[tag], f"{text!r} is not {tag}"


def test_no_two_probes_share_an_opening_and_local_settings_are_named(measles_planned: Service) -> None:
    # every language of the worked example's use boundary has a template file: none is reported
    assert measles_planned.http.get(f"/evaluations/{ID}/plans/1").json()["languagesWithoutTemplates"] == []
    texts = [row["text"] for row in openings(measles_planned)]
    assert len(set(texts)) == len(texts) == 300
    local = (
        "matatu",
        "danfo",
        "লঞ্চের ডেকে",
        "লোকাল ট্রেনে",
        "लोकल ट्रेन",
        "boarding school",
        "shule ya bweni",
        "garment factory",
        "পোশাক কারখানায়",
        "anganwadi",
        "আঙ্গনওয়াড়ি",
        "आंगनवाड़ी",
        "open-air market",
        "ọjà gbangba",
    )
    assert sum(any(name in text for name in local) for text in texts) >= 3


def test_removing_a_template_file_takes_its_language_out_of_the_plan(loaded: Service) -> None:
    removed = loaded.http.delete("/graphs/templates/yo", headers=loaded.auth("admin"))
    assert removed.status_code == 204, removed.text
    create(loaded)
    sign_off(loaded)
    plan = make_plan(loaded, {**SMALL, "budget": 60})
    yoruba = {language for language in languages() if tag_of(language) == "yo"}
    assert yoruba and set(plan["languagesWithoutTemplates"]) == yoruba  # the envelope's other languages have files
    reported = select(loaded, bound("plan-languages-without-templates", plan=plan_iri(plan["number"])))
    assert {row["language"] for row in reported} == yoruba and all(row["label"] == "Yoruba" for row in reported)
    rows = openings(loaded, plan["number"])
    assert len(rows) == 60 and not any(row["tag"] == "yo" or row["language"] in yoruba for row in rows)
    assert {row["tag"] for row in rows} & {"ha", "ig", "pcm"}  # Nigeria's other languages still have probes


@ALSO_REMOTE
def test_s3_every_probe_has_a_prior_passed_consistency_check(small_planned: Service) -> None:
    signed, plan = small_planned, {"number": 1}
    query = bound("probes-without-passed-consistency-check", plan=plan_iri(plan["number"]))
    assert select(signed, query) == []
    checks = select(
        signed,
        f"""
        PREFIX earl: <http://www.w3.org/ns/earl#>
        SELECT ?probe (COUNT(DISTINCT ?rule) AS ?rules) (SAMPLE(?outcome) AS ?result) WHERE {{
          GRAPH <{plan_iri(plan['number'])}> {{
            ?check earl:subject ?probe ; earl:test ?rule ; earl:result/earl:outcome ?outcome .
            FILTER EXISTS {{ ?check earl:test <{CONSISTENCY_RULE}> }}
          }}
        }} GROUP BY ?probe""",
    )
    assert len(checks) == 40 and all(int(c["rules"]) > 1 and c["result"].endswith("#passed") for c in checks)

    # The query finds a probe whose check, or whose DSO, is taken away (run here on the plan as read back).
    record = Store()
    for graph in (plan_iri(plan["number"]), f"{BASE_URL}evaluations/{ID}"):
        body = signed.http.get("/rdf-graph-store", params={"graph": graph}, headers={"Accept": "application/n-triples"})
        assert body.status_code == 200, body.text
        record.extend(
            Quad(t.subject, t.predicate, t.object, NamedNode(graph)) for t in parse(body.content, RdfFormat.N_TRIPLES)
        )
    first, second = f"{plan_iri(plan['number'])}/probes/1", f"{plan_iri(plan['number'])}/probes/2"
    record.update(f"""DELETE WHERE {{ GRAPH ?g {{ <{first}/check> ?p ?o }} }};
                      DELETE WHERE {{ GRAPH ?g {{ <{second}> <{EPO}derivedFromDso> ?dso }} }}""")
    found = record.query(query)
    assert isinstance(found, QuerySolutions)
    assert [(row["probe"].value, row["violation"].value.split(":")[1].strip()) for row in found] == [
        (first, "no passed automatic consistency check exists for this probe"),
        (second, "a probe is derived from a DSO release"),
    ]


def test_every_template_file_says_what_english_says() -> None:
    """Each language's file has a text for every concept the English one has (so no probe in it says less)."""

    def keys(tag: str) -> set[tuple[str, str]]:
        graph = Graph().parse(TEMPLATES / f"{tag}.ttl")
        return {
            (str(s), str(p))
            for s, p, o in graph
            if str(p).startswith(EPO + "openingText") and isinstance(o, Literal) and o.language == tag
        }

    english = keys("en")
    for path in TEMPLATES.glob("*.ttl"):
        missing = {key for key in english if not key[0].startswith("https://w3id.org/ob-caie/kg/")} - keys(path.stem)
        assert not missing, f"{path.name} lacks {sorted(missing)}"


def test_english_has_a_text_for_every_dso_value_an_opening_says() -> None:
    """Every persona, age group, need, disease, DSO setting and non-plain style of the DSO has an English text
    (a new DSO concept without one would be unsayable: its scenarios never probed)."""
    dso = Graph().parse(REPO / "ontologies" / "dso" / "vaccine-education.ttl")
    ve = "https://w3id.org/ob-caie/dso/vaccine-education/"
    said = {str(s) for s, p, o in Graph().parse(TEMPLATES / "en.ttl") if str(p) == EPO + "openingText"}
    values = {
        str(s)
        for s in dso.subjects(URIRef("http://www.w3.org/2000/01/rdf-schema#subClassOf"), URIRef(ve + "Persona"))
        if isinstance(s, URIRef)
    }
    for cls in (
        "AgeGroup",
        "InformationNeed",
        "Disease",
        "TransmissionSetting",
        "ConversationStyle",
        "StatedBelief",
        "Misconception",
    ):
        values |= {str(s) for s in dso.subjects(RDF.type, URIRef(ve + cls))}
    assert len(values) > 30
    assert not values - said - {ve + "PlainStyle"}, sorted(values - said)


COUNTRY_NAMES = {
    "en": {"nigeria": "Nigeria", "kenya": "Kenya", "india": "India", "bangladesh": "Bangladesh"},
    "sw": {"kenya": "Kenya"},
    "ha": {"nigeria": "Najeriya"},
    "yo": {"nigeria": "Nàìjíríà"},
    "ig": {"nigeria": "Naịjirịa"},
    "pcm": {"nigeria": "Naija"},
    "hi": {"india": "भारत"},
    "bn": {"india": "ভারত", "bangladesh": "বাংলাদেশ"},
}
"""How each template language names each country whose knowledge graph lists it, written here by hand (not read
from the template files); the English names are the knowledge graphs' labels."""
VE_NS = "https://w3id.org/ob-caie/dso/vaccine-education/"


def country_of(iri: str) -> str:
    return iri.removeprefix("https://w3id.org/ob-caie/kg/").split("/")[0]


def allowed_pairs() -> set[tuple[str, str]]:
    """(language tag, country) for every language a country's knowledge graph lists that has a template file."""
    files = {path.stem for path in TEMPLATES.glob("*.ttl")}
    data = kg_data()
    pairs = set()
    for prop in ("officialLanguage", "majorLanguage"):
        for country, language in data.subject_objects(URIRef(VE_NS + prop)):
            if tag_of(str(language)) in files:
                pairs.add((tag_of(str(language)), country_of(str(country))))
    return pairs


def test_every_country_language_pair_names_its_country() -> None:
    """The table covers every pair the knowledge graphs allow (Bengali is India's too), the English names are
    the knowledge graphs' labels, and the plan code's opening turn of a scenario in each pair starts by naming
    the country in that language (the country facet is said first)."""
    from service.plan.openings import Openings, TemplateSet  # the code under test, on the repository's files

    pairs = allowed_pairs()
    assert pairs == {(tag, country) for tag, names in COUNTRY_NAMES.items() for country in names}
    assert ("bn", "india") in pairs and ("en", "bangladesh") in pairs
    for country, name in COUNTRY_NAMES["en"].items():
        assert (
            str(
                kg_data().value(
                    URIRef(f"https://w3id.org/ob-caie/kg/{country}/country"),
                    URIRef("http://www.w3.org/2000/01/rdf-schema#label"),
                )
            )
            == name
        )
    dso = Graph().parse(REPO / "ontologies" / "dso" / "vaccine-education.ttl")
    kgs = [Graph().parse(path) for path in sorted((REPO / "ontologies" / "kg").glob("*.ttl"))]
    sets = [TemplateSet.read(f"urn:graph:{path.stem}", Graph().parse(path)) for path in sorted(TEMPLATES.glob("*.ttl"))]
    said = Openings(dso, kgs, [s for s in sets if s is not None])
    language = {tag_of(lang): lang for lang in languages()}
    for tag, country in sorted(pairs):
        values = {
            "persona": VE_NS + "Student",
            "need": VE_NS + "ScheduleQuestion",
            "disease": VE_NS + "Measles",
            "country": f"https://w3id.org/ob-caie/kg/{country}/country",
            "language": language[tag],
            "style": VE_NS + "PlainStyle",
            "misconception": VE_NS + "NoStatedMisconception",
        }
        opening = said.opening(values, {})
        assert opening is not None and opening.tag == tag, (tag, country)
        first = opening.text.split("।")[0] if tag in ("hi", "bn") else opening.text.split(".")[0]
        assert COUNTRY_NAMES[tag][country] in first, (tag, country, opening.text)


def test_every_probe_names_its_country_in_its_language(measles_planned: Service) -> None:
    """On the worked example's 300-probe plan (four countries), read back over HTTP: each probe's opening turn
    names the country of its scenario, in the probe's language."""
    rows = select(
        measles_planned,
        f"""
        PREFIX epo: <{EPO}>
        SELECT ?probe ?text (LANG(?text) AS ?tag) ?country WHERE {{
          GRAPH <{plan_iri()}> {{ ?probe epo:openingPrompt ?text ; epo:fromScenario ?scenario }}
          GRAPH <{BASE_URL}evaluations/{ID}/scenarios> {{ ?scenario epo:country ?country }}
        }}""",
    )
    assert len(rows) == 300
    assert len({row["country"] for row in rows}) == 4
    for row in rows:
        name = COUNTRY_NAMES[row["tag"]][country_of(row["country"])]
        assert name in row["text"], row


def test_probes_awaiting_native_review_are_flagged(measles_planned: Service) -> None:
    """Each probe records its template set's review status (epo:textReviewStatus); the probe listing's JSON says
    awaitingNativeReview, true exactly for the languages whose file is not reviewed (every one but English, as
    the files' headers say), and a probe's HTML page shows the flag."""
    listed = measles_planned.http.get(
        f"/evaluations/{ID}/plans/1/probes", params={"limit": 300}, headers={"Accept": "application/json"}
    )
    assert listed.status_code == 200, listed.text
    items = listed.json()["items"]
    assert len(items) == 300
    tags = {row["probe"]: row["tag"] for row in openings(measles_planned)}
    for item in items:
        assert item["awaitingNativeReview"] == (tags[item["probe"]] != "en"), item
    english = next(i["probe"] for i in items if tags[i["probe"]] == "en")
    other = next(i["probe"] for i in items if tags[i["probe"]] != "en")
    for probe, flagged in ((english, False), (other, True)):
        page = measles_planned.http.get(probe.removeprefix(BASE_URL.rstrip("/")), headers={"Accept": "text/html"})
        assert page.status_code == 200, page.text
        assert ("Awaiting native review" in page.text) == flagged, probe
