"""The domain expert's plan page over real HTTP (service/api/routers/workspace_expert*.py), on the bed-nets plan: the
plan as the REST route gives it (digest, budget, allocation per criterion, each probe's opening, the pinned graphs);
the operator who made it is offered no approval and gets 403 for posting one; a domain expert approves it with the
digest reviewed (a stale digest 409, a malformed one 422, no CSRF token 403). The same pages in a browser:
test_expert_pages_browser.py.
"""

from __future__ import annotations

import re

from markupsafe import escape

from ..api.workspace import hidden
from ..conftest import EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID
from .expert_pages import WORKSPACE, forms, page, people_site, posted, refusal, signed_in

pytestmark = EMBEDDED_ONLY  # what the pages show is how a record reads, not the store's transport


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
