"""The review reads of step 3 and the evaluations listing over real HTTP.

Each filtered or paged answer is compared with the whole listing filtered here, in Python, so the SPARQL
filters and pages (queries/scenarios.rq, scenario-count.rq, probes.rq, probe-count.rq, evaluations.rq)
are checked against a plain reading of what they mean.

The queries are the same text on both backends, run by one engine (Oxigraph), so the scenario filters run on
the embedded store. What a remote ``oxigraph serve`` adds is the transport (bound parameters, ``LIMIT`` and
``OFFSET`` sent over the SPARQL protocol): the probe filter and pages, the latest exclusion in the listing and
the evaluations listing also run there (:data:`.conftest.ALSO_REMOTE`).
"""

from __future__ import annotations

from collections import Counter

from ..api.test_evaluations import ID, create, sign_off
from ..conftest import ALSO_REMOTE, EMBEDDED_ONLY, Service
from ..test_envelope import example_evaluation
from .test_plans_api import SMALL_PLAN

VE = "https://w3id.org/ob-caie/dso/vaccine-education/"

pytestmark = EMBEDDED_ONLY


def get(service: Service, url: str, **params: object) -> dict:
    answer = service.http.get(url, params=params)  # type: ignore[arg-type]  # httpx's QueryParamTypes is narrower than **object; the callers pass str and int
    assert answer.status_code == 200, answer.text
    return answer.json()


def pages_of(service: Service, url: str, size: int, total: int) -> list[dict]:
    """Every item, read ``size`` at a time; each page must report the same total."""
    items = []
    for offset in range(0, total, size):
        page = get(service, url, limit=size, offset=offset)
        assert (page["total"], page["limit"], page["offset"]) == (total, size, offset)
        items += page["items"]
    return items


def test_scenario_filters_and_pages_agree_with_the_whole_listing(small_planned: Service) -> None:
    signed = small_planned
    url = f"/evaluations/{ID}/scenarios"
    whole = get(signed, url, limit=1000)
    items = whole["items"]
    assert whole["total"] == len(items) > 0
    assert [s["index"] for s in items] == sorted(s["index"] for s in items)

    for status in ("eligible", "blocked"):
        page = get(signed, url, status=status, limit=1000)
        assert page["items"] == [s for s in items if s["status"] == status] and page["total"] == len(page["items"]) > 0

    rule, _ = Counter(r for s in items for r in s["blockedBy"]).most_common(1)[0]
    assert get(signed, url, rule=rule, limit=1000)["items"] == [s for s in items if rule in s["blockedBy"]]

    sample = next(s for s in items if s["status"] == "blocked")["facets"]
    (status,), (country,) = sample["hasVaccinationStatus"], sample["livesIn"]
    by_name = get(signed, url, facet=f"hasVaccinationStatus={status}", limit=1000)
    assert by_name["items"] == [s for s in items if status in s["facets"]["hasVaccinationStatus"]]
    by_iri = get(signed, url, facet=f"{VE}hasVaccinationStatus={status}", limit=1000)
    assert by_iri == by_name
    both = signed.http.get(
        url,
        params=[
            ("facet", f"hasVaccinationStatus={status}"),
            ("facet", f"livesIn={country}"),
            ("status", "blocked"),
            ("limit", "1000"),
        ],
    ).json()
    assert both["items"] == [
        s for s in by_name["items"] if country in s["facets"]["livesIn"] and s["status"] == "blocked"
    ]
    assert both["total"] == len(both["items"]) > 0

    size = max(7, whole["total"] // 9)  # about ten pages, each a query of its own, whatever the listing's length
    assert pages_of(signed, url, size, whole["total"]) == items
    beyond = get(signed, url, offset=whole["total"])
    assert beyond["items"] == [] and beyond["total"] == whole["total"]


def test_a_multi_valued_facet_lists_every_value(small_planned: Service) -> None:
    """epo:personState has one value per person state (age, vaccination, infection, immunity): all are listed,
    sorted, and each facet is a list, one-valued or not."""
    signed = small_planned
    items = get(signed, f"/evaluations/{ID}/scenarios", limit=1000)["items"]
    assert items
    for scenario in items:
        facets = scenario["facets"]
        assert all(isinstance(values, list) and values == sorted(set(values)) for values in facets.values())
        states = [
            v
            for name in ("hasAgeGroup", "hasVaccinationStatus", "hasInfectionHistory", "hasImmunityStatus")
            for v in facets.get(name, [])
        ]
        assert len(states) > 1 and facets["personState"] == sorted(states)


def test_scenario_filters_are_checked(signed: Service) -> None:
    url = f"/evaluations/{ID}/scenarios"
    five = ("hasAgeGroup", "hasVaccinationStatus", "hasInfectionHistory", "hasImmunityStatus", "livesIn")
    refused = {
        "unknown facet": [("facet", f"hasNoSuchFacet={VE}Child")],
        "is not an absolute IRI": [("facet", "hasAgeGroup=a child")],
        "the facet property": [("facet", f"urn:a b={VE}Child")],
        "at most 4 facet filters": [("facet", f"{name}={VE}Child") for name in five],
        "status must be one of": [("status", "approved")],
        "the rule": [("rule", "not an IRI")],
    }
    for words, params in refused.items():
        answer = signed.http.get(url, params=params)
        assert answer.status_code == 400 and words in answer.json()["detail"], (words, answer.text)
    assert get(signed, url)["total"] == 0, "before any plan, nothing was derived"


@ALSO_REMOTE
def test_the_latest_exclusion_shows_in_the_listing(small_planned: Service) -> None:
    signed = small_planned
    url = f"/evaluations/{ID}/scenarios"
    first = get(signed, url, status="eligible", limit=1)["items"][0]
    assert first["excluded"] is None
    for reason in ("a first look", "on second thought"):
        excluded = signed.http.post(
            f"{url}/{first['scenario'].rsplit('/', 1)[-1]}/exclusion",
            json={"reason": reason},
            headers=signed.auth("annie"),
        )
        assert excluded.status_code == 201, excluded.text
    listed = [s for s in get(signed, url, limit=1000)["items"] if s["excluded"]]
    assert [s["scenario"] for s in listed] == [first["scenario"]]
    assert listed[0]["excluded"]["reason"] == "on second thought" and listed[0]["excluded"]["by"].endswith(
        "/agents/annie"
    )


@ALSO_REMOTE
def test_probe_filter_and_pages_agree_with_the_whole_listing(small_planned: Service) -> None:
    signed, plan = small_planned, {"number": 1}
    assert get(signed, f"/evaluations/{ID}/plans/1")["budget"] == SMALL_PLAN["budget"]
    url = f"/evaluations/{ID}/plans/{plan['number']}/probes"
    whole = get(signed, url, limit=1000)
    items = whole["items"]
    assert whole["total"] == len(items) == 40 and [p["number"] for p in items] == list(range(1, 41))

    criterion = items[-1]["criterion"]
    by_iri = get(signed, url, criterion=criterion, limit=1000)
    assert by_iri["items"] == [p for p in items if p["criterion"] == criterion] and by_iri["total"] == len(
        by_iri["items"]
    )
    assert get(signed, url, criterion=criterion.rsplit("/", 1)[-1], limit=1000) == by_iri
    assert get(signed, url, criterion="no-such-criterion") == {"total": 0, "limit": 50, "offset": 0, "items": []}

    assert pages_of(signed, url, 9, 40) == items
    assert signed.http.get(f"/evaluations/{ID}/plans/{plan['number'] + 1}/probes").status_code == 404
    assert signed.http.get(url, params={"limit": 0}).status_code == 422


@ALSO_REMOTE
def test_evaluations_listing_names_each_current_envelope(loaded: Service) -> None:
    create(loaded)
    second = {**example_evaluation(), "id": "second", "title": "A second evaluation, with no envelope yet"}
    assert loaded.http.post("/evaluations", json=second, headers=loaded.auth("theo")).status_code == 201

    def listed() -> list[tuple[str, str, int | None, str | None]]:
        found = get(loaded, "/evaluations")["evaluations"]
        assert all(e["@id"].endswith(f"/evaluations/{e['id']}") for e in found)
        return [
            (e["id"], e["title"], e["envelope"] and e["envelope"]["version"], e["envelope"] and e["envelope"]["digest"])
            for e in found
        ]

    v1 = get(loaded, f"/evaluations/{ID}/envelope")
    title = example_evaluation()["title"]
    assert listed() == [(ID, title, 1, v1["digest"]), ("second", second["title"], None, None)]

    sign_off(loaded)
    started = loaded.http.post(f"/evaluations/{ID}/envelope/versions", headers=loaded.auth("theo"))
    assert started.status_code == 201, started.text
    assert listed()[0] == (ID, title, 2, started.json()["digest"])
