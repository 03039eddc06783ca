"""The domain expert's criteria pages over real HTTP (service/api/routers/workspace_expert*.py), on the bed-nets run
judged: the criteria listed as determined, not attested; a criterion's evidence (its statement, the conversations
bearing on it, every verdict, the aggregation rule's proposal); an attestation recorded by a domain expert (a viewer
gets 403, no CSRF token 403, an outcome the evidence does not support 422, a second one 409) and superseded only by
whom the domain lets (the expert who attested it or the deployment's supersede role; anyone else 403, no reason 422).
The same pages in a browser: test_expert_pages_browser.py.
"""

from __future__ import annotations

import re

from markupsafe import escape

from ..conftest import BASE_URL, EMBEDDED_ONLY, Service
from ..plan.test_second_domain_plan import ID, domain_json
from .expert_pages import WORKSPACE, attestations, forms, page, people_site, posted, refusal, signed_in

pytestmark = EMBEDDED_ONLY  # what the pages show is how a record reads, not the store's transport


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
