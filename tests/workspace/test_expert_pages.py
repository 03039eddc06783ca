"""The domain expert's workspace pages over real HTTP (service/api/routers/workspace_expert*.py), on the bed-nets test
domain at each stage its experts act in: a drafted envelope, a plan made, a run judged. People sign in through the
form; each action a page offers is checked against what the REST routes then return. A person whose roles do not
allow an action is not shown its form and gets 403 for posting it anyway; a form without the session's CSRF token
gets 403; a refused form comes back with the message and the values sent, under the refusal's status. The same pages
in a browser: test_expert_pages_browser.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape

import httpx
from markupsafe import escape

from service.api import create_app
from service.envelope.unread import unread_graphs

from ..api.workspace import Visitor, hidden, quick_hashes, shown_error, visitor
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, graphs_over, settings_for
from ..plan.test_second_domain_plan import DOMAIN, ID, domain_json, load_domain
from .example_pages import EVALUATION
from .example_pages import signed_in as example_signed_in

pytestmark = EMBEDDED_ONLY  # what the pages show is how a record reads, not the store's transport
PEOPLE = [
    {"agent": "annie", "username": "annie", "password": "annie's long password", "roles": ["domain_expert"]},
    {"agent": "erin", "username": "erin", "password": "erin's long password", "roles": ["domain_expert"]},
    {
        "agent": "lena",
        "username": "lena",
        "password": "lena's long password",
        "roles": ["domain_expert", "lead_expert"],
    },
    {"agent": "dana", "username": "dana", "password": "dana's long password", "roles": ["organizational_expert"]},
    {"agent": "theo", "username": "theo", "password": "theo's long password", "roles": ["evaluation_operator"]},
    {"agent": "vera", "username": "vera", "password": "vera's long password", "roles": ["viewer"]},
]
SUPERSEDE_ROLE = "lead_expert"
WORKSPACE = f"/evaluations/{ID}/workspace"
CRITERIA = [c["id"] for c in domain_json("envelope.json")["criteria"]]


def draft(service: Service) -> None:
    """The domain loaded, the evaluation scoped and its envelope written: nothing assessed yet."""
    load_domain(service)
    made = service.http.post("/evaluations", json=domain_json("evaluation.json"), headers=service.auth("theo"))
    assert made.status_code == 201, made.text
    enveloped = service.http.put(
        f"/evaluations/{ID}/envelope", json=domain_json("envelope.json"), headers=service.auth("theo")
    )
    assert enveloped.status_code == 201, enveloped.text


@contextmanager
def people_site(service: Service, app_slot: tuple) -> Iterator[str]:
    """The service over ``service``'s store with :data:`PEOPLE` who sign in and the deployment's supersede role;
    ``service.http`` (bearer tokens) reaches the same app."""
    slot, url = app_slot
    settings = settings_for(service.tokens, people=json.dumps(quick_hashes(PEOPLE)), supersede_role=SUPERSEDE_ROLE)
    with slot.serving(create_app(settings, service.store)):
        yield url


@contextmanager
def signed_in(url: str, agent: str) -> Iterator[Visitor]:
    with visitor(url) as browser:
        answer = browser.sign_in(agent, next(p["password"] for p in PEOPLE if p["agent"] == agent))
        assert answer.status_code == 303, answer.text
        yield browser


def page(browser: Visitor, path: str) -> str:
    answer = browser.get(path)
    assert answer.status_code == 200, answer.text
    return answer.text


def forms(html: str) -> list[str]:
    """Where each form on the page posts (the sign-out form every page carries left out)."""
    return [a for a in re.findall(r'<form[^>]*method="post" action="([^"]+)"', html) if a != "/sign-out"]


def token(html: str) -> str:
    return hidden(html, "csrf_token")


def posted(browser: Visitor, path: str, data: dict[str, str]) -> httpx.Response:
    """A form sent as a browser sends it, with the session's token read from the page it is on."""
    return browser.post(path, data={"csrf_token": browser.csrf(), **data})


def refusal(answer: httpx.Response) -> str:
    """The message a refused form came back with, as the person reads it."""
    return unescape(shown_error(answer.text))


def approvals(service: Service) -> list[dict]:
    return service.http.get(f"/evaluations/{ID}/approvals").json()["approvals"]


def test_the_envelope_page_records_each_assessment_and_the_sign_off_by_role(drafted: Service, app_slot: tuple) -> None:
    criterion = f"{BASE_URL}evaluations/{ID}/envelope/v1/criteria/{CRITERIA[0]}"
    envelope = f"{WORKSPACE}/envelope"
    with people_site(drafted, app_slot) as url:
        with signed_in(url, "vera") as vera:
            html = page(vera, envelope)
            for c in domain_json("envelope.json")["criteria"]:
                assert escape(c["statement"]) in html
            assert forms(html) == []  # a viewer reads the envelope and is offered no action
            refused = posted(vera, f"{envelope}/relevance/{CRITERIA[0]}", {"relevant": "true", "rationale": "x"})
            assert refused.status_code == 403 and "lacks the role" in refused.text
        assert approvals(drafted) == []

        with signed_in(url, "annie") as annie:
            html = page(annie, envelope)
            assert sorted(forms(html)) == sorted(
                [
                    f"{envelope}/dso-appropriateness",
                    f"{envelope}/appropriateness",
                    *(f"{envelope}/relevance/{c}" for c in CRITERIA),
                ]
            )
            no_token = annie.post(f"{envelope}/relevance/{CRITERIA[0]}", data={"relevant": "true", "rationale": "x"})
            assert no_token.status_code == 403 and "CSRF" in no_token.text
            unexplained = posted(annie, f"{envelope}/relevance/{CRITERIA[0]}", {"relevant": "false", "rationale": " "})
            assert unexplained.status_code == 422
            assert "note: Field required" in refusal(unexplained)
            assert re.search(r'value="false" checked', unexplained.text)  # kept
            assert approvals(drafted) == []

            done = posted(annie, f"{envelope}/relevance/{CRITERIA[0]}", {"relevant": "true", "rationale": "it matters"})
            assert done.status_code == 303
            back = done.headers["location"]
            assert back == f"{envelope}?done=relevance-{CRITERIA[0]}#relevance-{CRITERIA[0]}"
            assert f"Recorded: the relevance of {CRITERIA[0]}." in page(annie, back)
            (record,) = approvals(drafted)
            assert (record["kind"], record["subject"], record["outcome"], record["agent"], record["comment"]) == (
                "relevance",
                criterion,
                "passed",
                "annie",
                "it matters",
            )
            status = drafted.http.get(f"/evaluations/{ID}/envelope").json()["status"]
            assert status["relevance"] == {CRITERIA[0]: "passed", **{c: None for c in CRITERIA[1:]}}

        with signed_in(url, "dana") as dana:
            html = page(dana, envelope)
            assert forms(html) == [f"{envelope}/sign-off"]
            early = posted(dana, f"{envelope}/sign-off", {"comment": "too soon"})
            assert early.status_code == 409
            assert "cannot be signed off yet" in refusal(early)

        with signed_in(url, "annie") as annie:
            for path, data in [
                ("dso-appropriateness", {"appropriate": "true", "rationale": "models nets"}),
                *((f"relevance/{c}", {"relevant": "true", "rationale": "matters"}) for c in CRITERIA[1:]),
                ("appropriateness", {"appropriate": "true", "rationale": "fits the public"}),
            ]:
                assert posted(annie, f"{envelope}/{path}", data).status_code == 303, path
        status = drafted.http.get(f"/evaluations/{ID}/envelope").json()["status"]
        assert (status["dsoAppropriateness"], status["appropriateness"], status["missingForSignOff"]) == (
            "passed",
            "passed",
            [],
        )

        with signed_in(url, "dana") as dana:
            # signed off as the REST route does (envelope.unread.sign_off_reporting_unread): the domain loads the
            # vaccine DSO's scenario rules, which nothing reads here, so dana lands on the page with each warning
            # the REST route answers (not recorded: shown at once, 200, rather than after a redirect)
            landed = posted(dana, f"{envelope}/sign-off", {"comment": ""})
            assert landed.status_code == 200, landed.text
            html = unescape(landed.text)
            assert "Recorded: the sign-off." in html and "signed off</a></strong> by dana" in html
            shown = re.search(r'<div class="notice" role="status" id="sign-off-warnings">(.*?)</div>', html, re.DOTALL)
            assert shown, "no warnings on the page"
            warnings = re.findall(r"<li>(.*?)</li>", shown.group(1))
            assert warnings == [graph.describe() for graph in unread_graphs(graphs_over(drafted.store))]
            assert len(warnings) == 2 and all("scenario-" in w and "is read by nothing" in w for w in warnings)
            html = page(dana, envelope)
            assert "signed off</a></strong> by dana" in html and "sign-off-warnings" not in html
            assert forms(html) == []  # a second sign-off of the same content would change nothing
        assert drafted.http.get(f"/evaluations/{ID}/envelope").json()["status"]["signedOff"] is True

        # Frozen: the domain refuses a relevance or appropriateness assessment of v1, so no form offers one; the
        # DSO's names the DSO's content and counts toward the next version, and its form says so.
        with signed_in(url, "annie") as annie:
            html = unescape(page(annie, envelope))
            assert forms(html) == [f"{envelope}/dso-appropriateness"]
            assert "are the ones it was signed off with: no further one is recorded" in html
            assert "changes nothing for v1: it names the DSO's present content" in html
            added = b"<https://example.org/dso/bednets/Changed> a <http://www.w3.org/2002/07/owl#Class> .\n"
            changed = drafted.http.put(
                "/graphs/dso/bednets",
                content=(DOMAIN / "dso.ttl").read_bytes() + added,
                headers={"Content-Type": "text/turtle", **drafted.auth("admin")},
            )
            assert changed.status_code in (200, 201), changed.text
            html = unescape(page(annie, envelope))
            assert "The DSO changed after envelope v1 was signed off" in html
            assert forms(html) == [f"{envelope}/dso-appropriateness"]
            assert (
                posted(
                    annie, f"{envelope}/dso-appropriateness", {"appropriate": "true", "rationale": "still models nets"}
                ).status_code
                == 303
            )
        assert drafted.http.get(f"/evaluations/{ID}/envelope").json()["status"]["signedOff"] is True


def test_the_scenarios_page_shows_each_blocked_one_with_its_rule_and_excludes_an_eligible_one(
    planned: Service, app_slot: tuple
) -> None:
    listing = f"{WORKSPACE}/scenarios"
    rest = f"/evaluations/{ID}/scenarios"
    blocked = planned.http.get(rest, params={"status": "blocked", "limit": 25}).json()
    eligible = planned.http.get(rest, params={"status": "eligible", "limit": 25}).json()["items"]
    assert blocked["items"] and eligible
    with people_site(planned, app_slot) as url, signed_in(url, "vera") as vera:
        html = page(vera, f"{listing}?status=blocked")
        assert f"1–{len(blocked['items'])} of {blocked['total']}" in html
        names = by_rule(html)
        summary = planned.http.get(f"{rest}/summary").json()["rules"]
        assert [(rule, count) for rule, (_, count) in names.items()] == [
            (r["rule"], r["scenarios"]) for r in summary if not r["rule"].endswith("EligibleScenario")
        ]
        for item in blocked["items"]:  # each with the rules that blocked it, named as above, and its messages
            shown = html[html.index(f'id="exclude-{item["scenario"].rsplit("/", 1)[-1]}"') :]
            shown = shown[: shown.index("</li>")]
            assert [(rule, names[rule][0]) for rule in item["blockedBy"]] == re.findall(
                r'Blocked by <a [^>]*title="([^"]+)"[^>]*>([^<]+)</a>', shown
            )
            assert all(escape(message) in shown for message in item["messages"]) and item["messages"]
        assert forms(html) == []
        key = eligible[0]["scenario"].rsplit("/", 1)[-1]
        refused = posted(vera, f"{listing}/{key}/exclusion", {"reason": "a viewer's reason"})
        assert refused.status_code == 403

        with signed_in(url, "annie") as annie:
            html = page(annie, f"{listing}?status=eligible")
            assert f"{listing}/{key}/exclusion" in forms(html)
            assert annie.post(f"{listing}/{key}/exclusion", data={"reason": "x"}).status_code == 403  # no CSRF token
            empty = posted(annie, f"{listing}/{key}/exclusion", {"reason": "  ", "status": "eligible", "page": "1"})
            assert empty.status_code == 422 and "reason: Field required" in refusal(empty)
            unknown = posted(annie, f"{listing}/{'0' * len(key)}/exclusion", {"reason": "no such scenario"})
            assert unknown.status_code == 404 and "no derived scenario" in refusal(unknown)
            assert not [s for s in planned.http.get(rest, params={"limit": 1000}).json()["items"] if s["excluded"]]

            done = posted(
                annie,
                f"{listing}/{key}/exclusion",
                {"reason": "nets are not given to infants alone", "status": "eligible", "page": "1"},
            )
            assert done.headers["location"] == (f"{listing}?status=eligible&done=exclude-{key}#exclude-{key}")
            html = page(annie, done.headers["location"])
            assert f"Recorded: the exclusion of scenario {key}." in html
            assert f"{listing}/{key}/exclusion" not in forms(html)  # excluded once
        (excluded,) = [s for s in planned.http.get(rest, params={"limit": 1000}).json()["items"] if s["excluded"]]
        assert (excluded["scenario"], excluded["excluded"]["reason"], excluded["excluded"]["by"]) == (
            eligible[0]["scenario"],
            "nets are not given to infants alone",
            f"{BASE_URL}agents/annie",
        )


def by_rule(html: str) -> dict[str, tuple[str, int]]:
    """The scenarios page's "By rule" list: each blocking rule's IRI (the link's title) to its name and count."""
    listed = html[html.index('<ul class="rules">') :]
    found = re.findall(
        r'<a href="[^"]*" title="([^"]+)">blocked by ([^<]+)</a>:\s*([\d,]+)</li>', listed[: listed.index("</ul>")]
    )
    return {rule: (unescape(name), int(count.replace(",", ""))) for rule, name, count in found}


def test_two_rules_sharing_a_label_read_apart_on_the_worked_examples_scenarios_page(example: Service) -> None:
    """The worked example's DSO blocking class ve:InfantAsker and the shape restating it, sc:InfantAsker, are both
    labelled "infant asker" and block the same scenarios: each is named by its label and the namespace that tells
    them apart, and no two rules read the same."""
    with example_signed_in(example.url, "annie") as annie:
        names = by_rule(page(annie, f"{EVALUATION}/workspace/scenarios"))
    summary = example.http.get(f"{EVALUATION}/scenarios/summary").json()["rules"]
    assert {rule: count for rule, (_, count) in names.items()} == {
        r["rule"]: r["scenarios"] for r in summary if not r["rule"].endswith("EligibleScenario")
    }
    assert len({name for name, _ in names.values()}) == len(names)
    asker = {rule.rsplit("/", 2)[-2]: name for rule, (name, _) in names.items() if rule.endswith("/InfantAsker")}
    assert asker == {
        "vaccine-education": "infant asker (dso/vaccine-education)",
        "scenario-consistency": "infant asker (shapes/scenario-consistency)",
    }


def test_the_plan_page_shows_the_plan_and_a_domain_expert_approves_it(planned: Service, app_slot: tuple) -> None:
    rest = planned.http.get(f"/evaluations/{ID}/plans/1", headers={"Accept": "application/json"}).json()
    probes = planned.http.get(f"/evaluations/{ID}/plans/1/probes", params={"limit": 100}).json()["items"]
    plan_page = f"{WORKSPACE}/plans/1"
    with people_site(planned, app_slot) as url:
        with signed_in(url, "theo") as theo:
            listed = page(theo, f"{WORKSPACE}/plans")
            assert f'href="{plan_page}"' in listed and "no: no domain expert has approved the plan" in listed
            html = page(theo, plan_page)
            assert forms(html) == []  # the operator makes plans; a domain expert approves them
            assert rest["digest"] in html and f"{rest['budget']} probes" in html
            for allocation in rest["allocation"]:
                row = re.search(
                    rf'>{allocation["criterion"].rsplit("/", 1)[-1]}</a></td><td class="number">(\d+)</td>', html
                )
                assert row and int(row.group(1)) == allocation["probes"]
            for probe in probes:
                assert escape(probe["openingPrompt"]) in html and f'>Probe {probe["number"]}</a>' in html
            assert 'lang="en"' in html
            pinned = [
                row["graph"]["value"]
                for row in planned.http.get(
                    "/sparql",
                    params={
                        "query": f"""
                PREFIX epo: <https://w3id.org/ob-caie/epo/>
                PREFIX prov: <http://www.w3.org/ns/prov#>
                SELECT ?graph WHERE {{ GRAPH ?g {{ <{rest['plan']}> epo:inputPin ?pin . ?pin prov:entity ?graph }} }}"""
                    },
                    headers={"Accept": "application/sparql-results+json"},
                ).json()["results"]["bindings"]
            ]
            assert pinned and all(f'title="{graph}"' in html for graph in pinned)
            refused = posted(theo, f"{plan_page}/approval", {"digest": rest["digest"]})
            assert refused.status_code == 403

        with signed_in(url, "annie") as annie:
            html = page(annie, plan_page)
            assert forms(html) == [f"{plan_page}/approval"] and hidden(html, "digest") == rest["digest"]
            assert annie.post(f"{plan_page}/approval", data={"digest": rest["digest"]}).status_code == 403  # no CSRF
            stale = posted(annie, f"{plan_page}/approval", {"digest": "0" * 64})
            assert stale.status_code == 409 and "is not the one reviewed" in refusal(stale)
            malformed = posted(annie, f"{plan_page}/approval", {"digest": "not a digest"})
            assert malformed.status_code == 422 and "the plan's digest" in refusal(malformed)
            done = posted(annie, f"{plan_page}/approval", {"digest": rest["digest"], "comment": "six probes will do"})
            assert done.status_code == 303
            html = page(annie, done.headers["location"])
            assert "Recorded: the plan&#39;s approval." in html and "Approved now." in html and forms(html) == []
        after = planned.http.get(f"/evaluations/{ID}/plans/1", headers={"Accept": "application/json"}).json()
        assert after["approved"] is True
        assert [(a["agent"], a["comment"]) for a in after["approvals"]] == [("annie", "six probes will do")]


def attestations(service: Service) -> list[dict]:
    return service.http.get(f"/evaluations/{ID}/attestations").json()["attestations"]


def test_a_criterion_is_attested_from_its_evidence_and_superseded_only_by_whom_the_domain_lets(
    judged: Service, app_slot: tuple
) -> None:
    determinations = judged.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]
    hanging = [d for d in determinations if d["criterion"].endswith("/hanging")]
    probes = {p["probe"]: p for p in judged.http.get(f"/evaluations/{ID}/plans/1/probes").json()["items"]}
    evidence = f"{WORKSPACE}/criteria/hanging"
    with people_site(judged, app_slot) as url:
        with signed_in(url, "vera") as vera:
            listed = page(vera, f"{WORKSPACE}/criteria")
            for criterion in {d["criterion"].rsplit("/", 1)[-1] for d in determinations}:
                row = listed[listed.index(f'id="criterion-{criterion}"') :]
                assert "determined, not attested" in row[: row.index("</tr>")]
            html = page(vera, f"{evidence}?run=1")
            assert forms(html) == []
            statement = next(c for c in domain_json("envelope.json")["criteria"] if c["id"] == "hanging")["statement"]
            assert escape(statement) in html
            bearing = sorted({probes[d["probe"]]["number"] for d in hanging})
            assert re.findall(r'id="probe-(\d+)"', html) == [str(n) for n in bearing]  # the conversations, in order
            for d in hanging:  # every verdict, with its judge and rationale
                assert f"{d['outcome'].rsplit('#', 1)[-1]}" and escape(d["rationale"]) in html
            assert escape(probes[hanging[0]["probe"]]["openingPrompt"]) in html
            assert "The aggregation rule proposes <strong>" in html
            refused = posted(
                vera,
                f"{evidence}/attestation",
                {
                    "run": "1",
                    "outcome": "cantTell",
                    "rationale": "x",
                    "sufficiency": "insufficient",
                    "appropriateness": "appropriate",
                },
            )
            assert refused.status_code == 403
        assert attestations(judged) == []

        attest = {"run": "1", "outcome": "cantTell", "sufficiency": "insufficient", "appropriateness": "appropriate"}
        with signed_in(url, "annie") as annie:
            assert forms(page(annie, f"{evidence}?run=1")) == [f"{evidence}/attestation"]
            assert (
                annie.post(f"{evidence}/attestation", data={**attest, "rationale": "x"}).status_code == 403
            )  # no CSRF
            unfounded = posted(
                annie, f"{evidence}/attestation", {**attest, "outcome": "passed", "rationale": "all fine"}
            )
            assert unfounded.status_code == 422 and "insufficient evidence supports no passed" in refusal(unfounded)
            assert re.search(r'name="outcome" value="passed" checked', unfounded.text)  # what was sent, kept
            done = posted(annie, f"{evidence}/attestation", {**attest, "rationale": "two replies only"})
            assert done.headers["location"] == f"{evidence}?run=1&done=attest#attestations"
            html = page(annie, done.headers["location"])
            assert "Recorded: the attestation." in html and forms(html) == [f"{evidence}/supersession"]
            again = posted(annie, f"{evidence}/attestation", {**attest, "rationale": "once more"})
            assert again.status_code == 409 and "supersede it, with a reason" in refusal(again)
        (first,) = attestations(judged)
        assert (first["outcome"], first["rationale"], first["expert"], first["sufficiency"], first["current"]) == (
            "cantTell",
            "two replies only",
            f"{BASE_URL}agents/annie",
            "Insufficient",
            True,
        )

        correction = {
            **attest,
            "outcome": "inapplicable",
            "appropriateness": "inappropriate",
            "rationale": "the question was not about hanging",
            "supersedes": first["attestation"],
        }
        with signed_in(url, "erin") as erin:  # another domain expert, without the deployment's supersede role
            html = page(erin, f"{evidence}?run=1")
            assert forms(html) == [] and "Only annie, who attested it, may supersede" in html
            other = posted(erin, f"{evidence}/supersession", {**correction, "reason": "I read it otherwise"})
            assert other.status_code == 403 and "only they may supersede it" in refusal(other)
        assert [a["attestation"] for a in attestations(judged)] == [first["attestation"]]

        with signed_in(url, "annie") as annie:
            reasonless = posted(annie, f"{evidence}/supersession", {**correction, "reason": ""})
            assert reasonless.status_code == 422 and "needs the reason for the correction" in refusal(reasonless)
            assert "the question was not about hanging</textarea>" in reasonless.text
            done = posted(annie, f"{evidence}/supersession", {**correction, "reason": "misread the question"})
            assert done.headers["location"] == f"{evidence}?run=1&done=supersede#attestations"
            assert "Recorded: the superseding attestation." in page(annie, done.headers["location"])
        with signed_in(url, "lena") as lena:  # the supersede role's holder may correct annie's
            assert forms(page(lena, f"{evidence}?run=1")) == [f"{evidence}/supersession"]
        old, new = attestations(judged)
        assert (old["current"], new["current"], new["supersedes"], new["reason"], new["outcome"]) == (
            False,
            True,
            first["attestation"],
            "misread the question",
            "inapplicable",
        )
