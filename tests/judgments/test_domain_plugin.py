"""A domain brings its own check as a plugin, and its own KG shapes as data (issue 25 item 1): the bed-nets test
domain, over real HTTP.

Its check, ``bn:DryingPlaceCheck``, is no code of the engine: the domain's own distribution ``caie-bednets``
(examples/bednets, installed by ``make test``) registers it under the entry-point group ``caie.checks``. A
judges graph naming it judges replies imported as a run; a rule naming a kind nobody registered is refused with
the installed plugins. The bed-nets DSO names its KGs' shapes (``epo:knowledgeGraphShapes``), so a Ghana KG is
refused until they are loaded, then checked by them.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from ..conftest import EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from ..runs.test_imports_api import jsonl, row, upload

pytestmark = EMBEDDED_ONLY
DOMAIN = Path(__file__).parents[2] / "examples" / "bednets"
EARL = "http://www.w3.org/ns/earl#"
RULE = "https://example.org/judges/bednets/washing-dried-in-shade"
TURTLE = {"Content-Type": "text/turtle"}


def imported(service: Service) -> tuple[str, int]:
    """A run imported for one English washing probe (a red-teaming file): a reply drying the net in the sun, then
    one drying it in the shade; the probe and the run's number."""
    items = service.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    washing = [p for p in items if p["criterion"].endswith("/washing") and p["language"].endswith("/eng")]
    assert washing, [(p["criterion"], p["language"]) for p in items]
    replies = [
        "Wash it gently with mild soap, then dry it in direct sun.",
        "Wash it gently with mild soap and dry it in the shade.",
    ]
    answer = upload(
        service, jsonl(*(row(washing[0]["number"], reply, turn=turn) for turn, reply in enumerate(replies, 1))), "jsonl"
    )
    assert answer.status_code == 201, answer.text
    return washing[0]["probe"], answer.json()["number"]


def judge_with(service: Service, run: int, judges: bytes) -> httpx.Response:
    loaded = service.http.put(
        "/graphs/judges/bednets-drying", content=judges, headers={**TURTLE, **service.auth("admin")}
    )
    assert loaded.status_code == 201, loaded.text
    return service.http.post(f"/evaluations/{ID}/runs/{run}/rule-judgments", headers=service.auth("theo"))


def test_a_check_a_plugin_registers_judges_replies_over_http(approved: Service) -> None:
    probe, run = imported(approved)
    judged = judge_with(approved, run, (DOMAIN / "judges-drying.ttl").read_bytes())
    assert judged.status_code == 201, judged.text
    made = approved.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
    ours = sorted((d for d in made if d["judge"] == RULE and d["probe"] == probe), key=lambda d: d["turn"])
    assert [d["outcome"] for d in ours] == [EARL + "failed", EARL + "passed"], ours
    assert "'direct sun'" in ours[0]["rationale"] and "shade" in ours[0]["rationale"], ours[0]
    assert "'the shade'" in ours[1]["rationale"], ours[1]


def test_a_rule_naming_an_unregistered_check_is_refused_naming_the_installed_plugins(approved: Service) -> None:
    _, run = imported(approved)
    soaking = (DOMAIN / "judges-drying.ttl").read_text(encoding="utf-8").replace("DryingPlaceCheck", "SoakingCheck")
    refused = judge_with(approved, run, soaking.encode())
    assert refused.status_code == 422, refused.text
    detail = refused.json()["detail"]
    assert "https://example.org/dso/bednets/SoakingCheck is not a check kind installed here" in detail, detail
    assert "DryingPlaceCheck (from caie-bednets)" in detail and "(from caie-vaccine)" in detail, detail


def test_a_kg_is_checked_by_the_shapes_its_dso_declares(service: Service) -> None:
    def put(resource: str, body: bytes) -> dict:
        answer = service.http.put(f"/graphs/{resource}", content=body, headers={**TURTLE, **service.auth("admin")})
        return {"status": answer.status_code, **answer.json()}

    assert put("dso/bednets", (DOMAIN / "dso.ttl").read_bytes())["status"] == 201
    ghana = (DOMAIN / "kg-ghana.ttl").read_bytes()
    missing = put("kg/ghana?dso=bednets", ghana)
    assert missing["status"] == 422 and "<https://example.org/shapes/bednets-kg>" in missing["detail"], missing
    assert put("shapes/bednets-kg", (DOMAIN / "shapes-kg.ttl").read_bytes())["status"] == 201
    assert put("kg/ghana?dso=bednets", ghana)["status"] == 201
    nigeria = put("kg/nigeria?dso=bednets", (DOMAIN / "kg-nigeria.ttl").read_bytes())  # the where rule's other country
    assert nigeria["status"] == 201, nigeria

    # a channel without a label breaks only the domain's own shape, not the generic ones
    broken = ghana + b"\nkg:country bn:hasChannel kg:market-stalls .\nkg:market-stalls a bn:Channel .\n"
    refused = put("kg/ghana?dso=bednets", broken)
    assert refused["status"] == 422 and refused["conforms"] is False, refused
    [violation] = refused["violations"]
    assert "market-stalls" in violation["focus_node"] and "needs a label" in violation["message"], violation
