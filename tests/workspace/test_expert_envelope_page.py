"""The domain expert's envelope page over real HTTP (service/api/routers/workspace_expert*.py), on the bed-nets
envelope drafted: each criterion's relevance, the DSO's and the envelope's appropriateness recorded by a domain expert,
the sign-off by an organizational expert, then the envelope frozen. A viewer is shown no form and gets 403 for posting
one anyway; a form without the session's CSRF token gets 403; a refused form comes back with the message and the
values sent, under the refusal's status. Each action is checked against what the REST routes then return. The same
pages in a browser: test_expert_pages_browser.py.
"""

from __future__ import annotations

import re
from html import unescape

from markupsafe import escape

from service.envelope.unread import unread_graphs

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, graphs_over
from ..plan.test_second_domain_plan import DOMAIN, ID, domain_json
from .expert_pages import CRITERIA, WORKSPACE, approvals, forms, page, people_site, posted, refusal, signed_in

pytestmark = EMBEDDED_ONLY  # what the pages show is how a record reads, not the store's transport


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
