"""The experts' workspace end to end (issue 24's "Done when"), in Chromium on the worked example served over real HTTP
with one person per role, each signed in through the /sign-in form, a screenshot kept of every page visited:

1. an annotator determines three cases with the keyboard alone;
2. a domain expert attests two criteria and supersedes one of those attestations;
3. the domain expert signs the new report off and the organizational expert accepts it (signs it as final);
4. the report page then shows the new coverage and outcome distribution, as the test works them out from what it
   did and the envelope's weights, changed from report 1's; ``queries/coverage.rq`` and
   ``outcome-distribution.rq`` POSTed to /sparql by SPARQLWrapper give the same figures.

The worked example's run 1 has every applicable criterion attested and report 1 accepted, so nothing there waits
for an attestation: attestations are per run. The evaluation operator therefore starts run 2 of the approved plan on
the runs page first (the demonstration chatbot, about 2 s); its cases wait for a person, its criteria for attesting,
and report 2, made on the reports page, is computed from run 2's attestations alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from playwright.sync_api import Page, ViewportSize, expect
from SPARQLWrapper import JSON, POST, SPARQLWrapper

from ..conftest import BASE_URL, EMBEDDED_ONLY, REPO, Service
from ..pages_browser import LAPTOP, keep_screenshot
from .by_keyboard import determine_cases, sign_in
from .example_pages import EVALUATION, PASSWORDS
from .test_annotator_pages import determinations

pytestmark = EMBEDDED_ONLY  # the pages' domains are tested on every store elsewhere
WORKSPACE = f"{EVALUATION}/workspace"
EARL = "http://www.w3.org/ns/earl#"
COVERING = ("passed", "failed", "cantTell")
"""The outcomes that cover a criterion (docs/metrics.md); earl:inapplicable never does."""
ANNOTATOR_KEYS = {"c01": "f"}
"""The annotator fails c01 wherever it waits, passes every other criterion."""
WORDS = {"passed": "pass", "failed": "fail", "cantTell": "cannot tell"}
"""Outcomes as the attestation form says them."""
ATTESTED = {"c01": "failed", "c04": "passed"}
"""What the domain expert attests for run 2, in this order: what the aggregation rule proposes over the annotator's
verdicts."""
CORRECTED = ("c04", "cantTell")
"""The attestation the domain expert supersedes, and the outcome the correction states."""


@dataclass(frozen=True)
class Figures:
    """Coverage and the outcome distribution as exact numbers: what a report states."""

    covered: int
    applicable: int
    covered_weight: Fraction
    applicable_weight: Fraction
    outcomes: dict[str, tuple[int, Fraction]]
    """Per covering outcome: how many covered criteria have it, and their weight."""


def expected(outcomes: dict[str, str], envelope: dict) -> Figures:
    """The figures worked out from each criterion's current attested ``outcomes`` (identifier to EARL name) and the
    envelope's criteria: the applicable ones are those in scope, each weighs as the envelope states."""
    weights = {c["id"]: Fraction(str(c["weight"])) for c in envelope["criteria"] if c["inScope"]}
    covered = {c: o for c, o in outcomes.items() if c in weights and o in COVERING}
    by_outcome: dict[str, tuple[int, Fraction]] = {}
    for criterion, outcome in covered.items():
        count, weight = by_outcome.get(outcome, (0, Fraction(0)))
        by_outcome[outcome] = (count + 1, weight + weights[criterion])
    return Figures(
        len(covered),
        len(weights),
        sum((weights[c] for c in covered), Fraction(0)),
        sum(weights.values(), Fraction(0)),
        by_outcome,
    )


def near(shown: str, exact: Fraction) -> bool:
    """Whether a percentage the page shows (``23.29%``) is ``exact`` to its two decimals."""
    return abs(Fraction(Decimal(shown.removesuffix("%"))) / 100 - exact) <= Fraction(1, 20_000)


def shown(page: Page) -> Figures:
    """The figures a report page shows, each shown percentage checked against the exact numbers beside it."""
    said = page.locator("#coverage-value + p")  # "Covered weight 17 of 73 applicable; 2 of 13 applicable criteria …"
    strong, sentence = said.locator("strong").all_inner_texts(), said.inner_text()
    counts = sentence.split("; ", 1)[1].split(" applicable criteria")[0].split(" of ")
    covered_weight, applicable_weight = Fraction(strong[0]), Fraction(strong[1])
    assert near(page.locator("#coverage-value").inner_text(), covered_weight / applicable_weight)
    outcomes: dict[str, tuple[int, Fraction]] = {}
    for row in page.locator("table.distribution tr[class^=outcome-]").all():
        outcome, count, share, weight, weighted = row.locator("td").all_inner_texts()
        if int(count):  # the page lists every outcome, the query only those some criterion has
            outcomes[outcome] = (int(count), Fraction(weight))
        assert near(share, Fraction(int(count), int(counts[0]))) and near(weighted, Fraction(weight) / covered_weight)
    return Figures(int(counts[0]), int(counts[1]), covered_weight, applicable_weight, outcomes)


def bound(name: str, **values: str) -> str:
    """``queries/{name}.rq`` with its parameters bound by a VALUES block heading its inner WHERE group, as the
    query's header says (written here, not with the service's binder), its comment lines left out: SPARQLWrapper
    2.0 guesses a query's form from keywords in its text, and its comment stripping leaves every other line of a
    comment block, where coverage.rq's "adds the criteria up" reads as ADD, an update it then sends as one."""
    lines = (REPO / "queries" / f"{name}.rq").read_text(encoding="utf-8").splitlines()
    text = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    assert text.count("WHERE {") == 1
    block = f"VALUES ({' '.join('?' + k for k in values)}) {{ ({' '.join(values.values())}) }}"
    return text.replace("WHERE {", f"WHERE {{\n  {block}", 1)


def at_sparql(url: str, report: dict) -> Figures:
    """A report's figures as /sparql answers the published metric queries, POSTed by SPARQLWrapper, bound to its
    evaluation, run and date."""

    def rows(name: str) -> list[dict[str, str]]:
        client = SPARQLWrapper(f"{url}/sparql")
        client.setMethod(POST)
        client.setReturnFormat(JSON)
        client.setQuery(
            bound(
                name,
                evaluation=f"<{BASE_URL}evaluations/measles>",
                run=f"<{report['run']}>",
                asOf=f'"{report["asOf"]}"^^<http://www.w3.org/2001/XMLSchema#dateTime>',
            )
        )
        answer = client.queryAndConvert()
        return [{k: v["value"] for k, v in row.items()} for row in answer["results"]["bindings"]]  # type: ignore[index]  # queryAndConvert() is typed as any result format; this one is JSON

    (coverage,) = rows("coverage")
    return Figures(
        int(coverage["covered"]),
        int(coverage["applicable"]),
        Fraction(coverage["coveredWeight"]),
        Fraction(coverage["applicableWeight"]),
        {
            r["outcome"].removeprefix(EARL): (int(r["criteria"]), Fraction(r["outcomeWeight"]))
            for r in rows("outcome-distribution")
        },
    )


def attest(page: Page, form: str, outcome: str, evidence: str, rationale: str, button: str) -> None:
    """Fill the attestation (``#attest``) or supersession (``#supersede``) form and send it."""
    fields = page.locator(form)
    fields.get_by_label(outcome, exact=True).check()
    fields.get_by_label(evidence, exact=True).check()
    fields.get_by_label("appropriate", exact=True).check()
    fields.get_by_label("Rationale").fill(rationale)
    if form == "#supersede":
        fields.get_by_label("Reason for the correction").fill("three replies are too few to say it passes")
    with page.expect_navigation():
        fields.get_by_role("button", name=button).click()


def test_the_workspace_end_to_end(example: Service, new_page: Callable[[ViewportSize], Page]) -> None:
    url, rest = example.url, example.http
    people: dict[str, Page] = {}

    def visit(agent: str, path: str) -> Page:
        """``agent``'s browser on ``path``, signed in through the form on their first visit."""
        if agent not in people:
            people[agent] = new_page(LAPTOP)
            sign_in(people[agent], url, agent, PASSWORDS[agent], path)
        else:
            people[agent].goto(f"{url}{path}")
        return people[agent]

    def get(path: str) -> dict:
        answer = rest.get(f"{EVALUATION}{path}", headers={"Accept": "application/json"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    envelope = get("/envelope")
    run1 = {
        a["criterion"].rsplit("/", 1)[-1]: a["outcome"]
        for a in get("/attestations")["attestations"]
        if a["current"] and a["run"].endswith("/runs/1")
    }
    dana = visit("dana", f"{EVALUATION}/reports/1/page")
    keep_screenshot(dana, "e2e-01-report-1", always=True)
    before = shown(dana)
    assert before == expected(run1, envelope) == at_sparql(url, get("/reports/1"))

    # the evaluation operator starts run 2 on the runs page and its page follows it to its end
    theo = visit("theo", f"{WORKSPACE}/runs")
    theo.get_by_label("Plan", exact=True).select_option("1")
    theo.get_by_label("The demonstration chatbot (runs in the service)").check()
    with theo.expect_navigation():
        theo.get_by_role("button", name="Start the run").click()
    expect(theo.locator("#run-state")).to_have_text("finished", timeout=60_000)
    keep_screenshot(theo, "e2e-02-run-2", always=True)
    assert get("/runs/2")["startedBy"] == f"{BASE_URL}agents/theo"

    # 1. the annotator determines three cases of run 2 with the keyboard
    nora = visit("nora", f"{WORKSPACE}/annotate?run=2")
    keep_screenshot(nora, "e2e-03-annotator-queue", always=True)
    with nora.expect_navigation():
        nora.keyboard.press("s")
    keep_screenshot(nora, "e2e-04-annotator-case", always=True)
    made = determine_cases(
        nora,
        3,
        lambda identifier: ANNOTATOR_KEYS.get(identifier, "p"),
        lambda n: f"Read reply by reply; verdict {n} of the end-to-end walk.",
    )
    assert len({d.case for d in made}) == 3 and all("/annotate/2/" in d.case for d in made)
    assert sorted(determinations(example, "nora"), key=str) == sorted(  # earl:assertedBy nora, at /sparql
        ({"criterion": d.criterion, "outcome": EARL + d.outcome, "rationale": d.rationale} for d in made), key=str
    )
    verdicts: dict[str, set[str]] = {}
    for d in made:
        verdicts.setdefault(d.criterion.rsplit("/", 1)[-1], set()).add(d.outcome)
    proposed = {c: "failed" if "failed" in found else "passed" for c, found in verdicts.items()}  # any fail fails
    assert ATTESTED.items() <= proposed.items()

    # 2. the domain expert attests c01 and c04 for run 2, then supersedes the attestation of c04
    annie = visit("annie", f"{WORKSPACE}/criteria?run=2")
    keep_screenshot(annie, "e2e-05-criteria", always=True)
    corrected, correction = CORRECTED
    for identifier, outcome in ATTESTED.items():  # the corrected one last: its page stays for the correction
        with annie.expect_navigation():
            annie.get_by_role("link", name=identifier, exact=True).click()
        # the form starts from the aggregation rule's proposal over nora's verdicts
        expect(annie.locator("#attest").get_by_label(WORDS[outcome], exact=True)).to_be_checked()
        attest(
            annie,
            "#attest",
            WORDS[outcome],
            "sufficient",
            f"Nora's verdicts on {identifier} agree.",
            f"Attest {identifier} for run 2",
        )
        expect(annie.locator(".notice")).to_have_text("Recorded: the attestation.")
        if identifier != corrected:
            keep_screenshot(annie, f"e2e-06-criterion-{identifier}", always=True)
            with annie.expect_navigation():
                annie.get_by_role("link", name="Every criterion of run 2").click()
    attest(
        annie,
        "#supersede",
        WORDS[correction],
        "insufficient",
        "Three conversations cannot show it passes.",
        f"Supersede the attestation of {corrected}",
    )
    expect(annie.locator(".notice")).to_have_text("Recorded: the superseding attestation.")
    keep_screenshot(annie, f"e2e-07-criterion-{corrected}-superseded", always=True)
    run2 = sorted(
        (a for a in get("/attestations")["attestations"] if a["run"].endswith("/runs/2")), key=lambda a: a["at"]
    )
    assert [(a["criterion"].rsplit("/", 1)[-1], a["outcome"], a["expert"], a["current"]) for a in run2] == [
        *((c, o, f"{BASE_URL}agents/annie", c != corrected) for c, o in ATTESTED.items()),
        (corrected, correction, f"{BASE_URL}agents/annie", True),
    ]
    first = next(a for a in run2 if a["criterion"].endswith(f"/{corrected}"))
    assert run2[-1]["supersedes"] == first["attestation"] and run2[-1]["reason"]

    # the evaluation operator makes report 2 on the reports page
    theo.goto(f"{url}{WORKSPACE}/reports")
    theo.get_by_label("Run", exact=True).select_option("2")
    theo.get_by_label("Fitness for deployment").select_option("NotFit")
    theo.get_by_label("Limitations (one a line)").fill("two criteria of run 2 attested")
    with theo.expect_navigation():
        theo.get_by_role("button", name="Make the report").click()
    expect(theo.locator("#made-notice")).to_contain_text("Report 2 is made, a draft")
    keep_screenshot(theo, "e2e-08-reports", always=True)

    # 3. the domain expert signs it off and the organizational expert accepts it, each from what waits for them
    for person, waiting, button, notice in (
        (annie, "sign-off of report 2", "Sign off report 2", "Your sign-off is recorded"),
        (dana, "acceptance of report 2", "Accept report 2", "Your acceptance is recorded: the report is final."),
    ):
        person.goto(f"{url}/")
        with person.expect_navigation():
            person.get_by_role("link", name=waiting).click()
        person.get_by_label("Statement").fill(f"{waiting}: the figures rest on run 2's attestations")
        with person.expect_navigation():
            person.get_by_role("button", name=button).click()
        expect(person.locator("#signing-notice")).to_contain_text(notice)
    keep_screenshot(dana, "e2e-09-report-2-accepted", always=True)  # both sign-offs on it
    report = get("/reports/2")
    assert (report["status"], report["author"], report["signOff"]["agent"], report["acceptance"]["agent"]) == (
        "final",
        f"{BASE_URL}agents/theo",
        f"{BASE_URL}agents/annie",
        f"{BASE_URL}agents/dana",
    )

    # 4. report 2's page shows the figures of what was attested on run 2, changed from report 1's, as /sparql does
    after = shown(dana)
    assert after == expected({**ATTESTED, corrected: correction}, envelope) == at_sparql(url, report)
    assert after.covered_weight < before.covered_weight and after.outcomes != before.outcomes
