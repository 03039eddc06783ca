"""The domain expert's scenarios page over real HTTP (service/api/routers/workspace_expert*.py): on the bed-nets plan,
each blocked scenario shown with the rules that blocked it and their messages, the "By rule" counts as the REST summary
gives them, and an eligible scenario excluded with a reason by a domain expert (a viewer gets 403, a form without the
CSRF token 403, an empty reason 422, an unknown scenario 404); on the worked example, two rules sharing a label named
apart. The same pages in a browser: test_expert_pages_browser.py.
"""

from __future__ import annotations

import re
from html import unescape

from markupsafe import escape

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from .example_pages import EVALUATION
from .example_pages import signed_in as example_signed_in
from .expert_pages import WORKSPACE, forms, page, people_site, posted, refusal, signed_in

pytestmark = EMBEDDED_ONLY  # what the pages show is how a record reads, not the store's transport


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
