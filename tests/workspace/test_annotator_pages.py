"""The annotator's pages (issue 24 §4) on the worked example, over real HTTP as a signed-in person's browser sends
them: the queue holds only cases in the languages the annotator reads (each case's language read back with SPARQL);
a determination made on a case's page is the person's in the REST record and in SPARQL, with its rationale; everyone
else's verdicts stay out of the page until the person has recorded their own; a person without a determiner role
gets a note and no form, and 403 when posting anyway; a form without its CSRF token gets 403; a form without an
outcome is sent back with the message and what was typed. Then in Chromium: an annotator determines three cases
with the keyboard alone, the progress advancing, and the pages pass axe, labels, console and width checks on a
laptop and a phone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

import httpx
import pytest
from markupsafe import escape
from playwright.sync_api import Page, ViewportSize
from pyoxigraph import Quad

from service.api import create_app
from service.core.namespaces import EARL
from service.core.store import Store
from service.workspace import annotation_queue

from ..api.workspace import Visitor, hidden, quick_hashes, shown_error, visitor
from ..conftest import BASE_URL, EMBEDDED_ONLY, Service, graphs_over, restore, settings_for
from ..pages_browser import LAPTOP, PHONE, assert_accessible, assert_fits_width, assert_labelled, keep_screenshot
from ..servers import AppSlot
from .by_keyboard import determine_cases, sign_in
from .test_annotation import tags

pytestmark = EMBEDDED_ONLY  # the pages call the workspace and judgments domains, whose store transport is tested there
PASSWORDS = {"ada": "ada's long password", "vera": "vera's long password"}
PEOPLE = [
    {
        "agent": "ada",
        "username": "ada",
        "password": PASSWORDS["ada"],
        "roles": ["annotator"],
        "name": "Ada Lovelace",
        "languages": ["en", "fr"],
    },
    {"agent": "vera", "username": "vera", "password": PASSWORDS["vera"], "roles": ["viewer"], "name": "Vera"},
]
QUEUE = "/evaluations/measles/workspace/annotate"
CASE = re.compile(r"/evaluations/measles/workspace/annotate/1/(\d+)")
ADA = f"{BASE_URL}agents/ada"
DETERMINED_BY = """
    PREFIX earl: <http://www.w3.org/ns/earl#>
    SELECT ?criterion ?outcome ?rationale WHERE { GRAPH ?batch {
      ?determination earl:assertedBy <%s> ; earl:test ?criterion ; earl:mode earl:manual ;
                     earl:result [ earl:outcome ?outcome ; earl:info ?rationale ] } }"""


@pytest.fixture
def site(
    store: Store, tokens: dict[str, str], app_slot: tuple[AppSlot, str], worked_example_quads: list[Quad]
) -> Iterator[Service]:
    """The worked example served with :data:`PEOPLE`, who sign in."""
    restore(store, worked_example_quads)
    slot, url = app_slot
    app = create_app(settings_for(tokens, people=json.dumps(quick_hashes(PEOPLE))), store)
    with slot.serving(app), httpx.Client(base_url=url, timeout=300.0) as http:
        yield Service(http, store, tokens, url)


@pytest.fixture
def ada(site: Service) -> Iterator[Visitor]:
    with visitor(site.url) as browser:
        assert browser.sign_in("ada", PASSWORDS["ada"]).status_code == 303
        yield browser


def progress(page: str) -> tuple[int, int]:
    found = re.search(r'<progress id="annotation-progress" max="(\d+)" value="(\d+)">', page)
    assert found and f"{found.group(2)} of {found.group(1)} determined" in page
    return int(found.group(2)), int(found.group(1))


def listed_cases(page: str) -> list[int]:
    return [int(n) for n in re.findall(rf'<td><a href="{CASE.pattern}">Case', page)]


def section(page: str, identifier: str) -> str:
    """The part of a case page about one criterion."""
    start = page.index(f'/workspace/criteria/{identifier}">{identifier}</a>')
    end = page.find('<section class="criterion', start)
    return page[start : end if end > 0 else len(page)]


def escape_(text: str) -> str:
    """``text`` as the pages' templates write it."""
    return str(escape(text))


def determinations(site: Service, agent: str) -> list[dict[str, str]]:
    """The manual determinations by ``agent``, as the published SPARQL endpoint answers."""
    answer = site.http.get(
        "/sparql",
        params={"query": DETERMINED_BY % f"{BASE_URL}agents/{agent}"},
        headers={"Accept": "application/sparql-results+json"},
    )
    return [{k: v["value"] for k, v in row.items()} for row in answer.json()["results"]["bindings"]]


def test_the_queue_offers_only_cases_in_the_languages_the_annotator_reads(site: Service, ada: Visitor) -> None:
    language_of = tags(site)
    page = ada.get(QUEUE)
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    listed = listed_cases(page.text)
    assert listed and {language_of[n] for n in listed} == {"en"}  # ada reads en and fr; the example has no fr
    graphs = graphs_over(site.store)
    queue = annotation_queue(graphs, "measles", None, "ada", frozenset({"en", "fr"}), frozenset(), 20)
    assert listed == [item.probe for item in queue.items]
    assert f"{queue.waiting} cases wait for you" in page.text and progress(page.text) == (0, queue.total)
    assert "Cases in the languages you read: en, fr." in page.text

    anyone = annotation_queue(graphs, "measles", None, "ada", None, frozenset(), 200)
    elsewhere = next(i.probe for i in anyone.items if i.language not in ("en", "fr"))  # waits for a reader of it
    assert elsewhere not in listed and queue.waiting < anyone.waiting
    other = ada.get(f"{QUEUE}/1/{elsewhere}").text
    assert f'in <span class="tag">{language_of[elsewhere]}</span>, which is not among the languages you said' in other
    assert f'lang="{language_of[elsewhere]}"' in other  # the conversation is marked with its language

    first = re.search(r'id="next-case" href="([^"]+)" aria-keyshortcuts="s">Start with case (\d+)', page.text)
    assert first and first.group(1) == f"{QUEUE}/1/{listed[0]}"


def test_a_determination_from_the_page_is_the_persons_in_the_record(site: Service, ada: Visitor) -> None:
    case = f"{QUEUE}/1/{listed_cases(ada.get(QUEUE).text)[0]}"
    page = ada.get(case).text
    assert '<p class="said" lang="en">' in page
    criterion = re.search(
        r'<section class="criterion waiting".*?name="criterion" value="([^"]+)"', page, re.DOTALL
    ).group(1)
    identifier = criterion.rsplit("/", 1)[-1]
    before = progress(page)
    rationale = "The reply sends them to the clinic straight away & never asks <whether> they were vaccinated."
    sent = ada.post(
        case,
        data={
            "csrf_token": hidden(page, "csrf_token"),
            "criterion": criterion,
            "turn": "1",
            "outcome": "failed",
            "rationale": rationale,
        },
    )
    assert sent.status_code == 303 and sent.headers["location"].startswith(f"{case}?recorded={identifier}&case=")
    after = ada.get(sent.headers["location"]).text
    assert re.search(rf"Recorded: your determination of <strong>{identifier}</strong>\s+\(fail\)", after)
    assert progress(after) == (before[0] + 1, before[1])
    assert "determined by you" in section(after, identifier) and escape_(rationale) in section(after, identifier)

    probe = f"{BASE_URL}evaluations/measles/plans/1/probes/{case.rsplit('/', 1)[-1]}"
    listed = site.http.get("/evaluations/measles/determinations", params={"criterion": criterion}).json()
    mine = [d for d in listed["determinations"] if d["judge"] == ADA]
    assert [(d["probe"], d["turn"], d["outcome"], d["mode"], d["rationale"]) for d in mine] == [
        (probe, "1", EARL + "failed", EARL + "manual", rationale)
    ]
    assert determinations(site, "ada") == [{"criterion": criterion, "outcome": EARL + "failed", "rationale": rationale}]


def test_everyone_elses_verdicts_stay_out_of_the_page_until_ones_own_is_recorded(site: Service, ada: Visitor) -> None:
    everything = site.http.get("/evaluations/measles/determinations").json()["determinations"]
    for number in listed_cases(ada.get(QUEUE).text):  # the first of ada's cases someone already determined
        probe = f"{BASE_URL}evaluations/measles/plans/1/probes/{number}"
        theirs = [d for d in everything if d["probe"] == probe]
        if theirs:
            break
    criterion = theirs[0]["criterion"]
    identifier = criterion.rsplit("/", 1)[-1]
    latest: dict[tuple[str, str, str], dict[str, str]] = {}  # each determiner's latest on each reply is shown
    for d in sorted((d for d in theirs if d["criterion"] == criterion), key=lambda d: d["at"]):
        latest[(d["judge"], d.get("version", ""), d["turn"])] = d
    shown = {escape_(d["rationale"]) for d in latest.values()}
    case = f"{QUEUE}/1/{number}"
    page = ada.get(case).text
    assert not any(r in page for r in shown)
    hidden_note = f"Everyone else's verdicts on {identifier} here are hidden until you record yours."
    assert hidden_note in section(page, identifier)

    sent = ada.post(
        case,
        data={
            "csrf_token": hidden(page, "csrf_token"),
            "criterion": criterion,
            "turn": "1",
            "outcome": "cantTell",
            "rationale": "The first reply alone does not settle it.",
        },
    )
    assert sent.status_code == 303
    after = section(ada.get(case).text, identifier)
    assert "Everyone else's verdicts" in after and all(r in after for r in shown)
    others = [c for c in {d["criterion"] for d in theirs} if c != criterion]
    for other in others:  # still blind on the criteria ada has not determined
        assert "hidden until you record yours" in section(ada.get(case).text, other.rsplit("/", 1)[-1])


def test_refusals_without_the_role_without_the_token_and_without_an_outcome(site: Service, ada: Visitor) -> None:
    case = f"{QUEUE}/1/{listed_cases(ada.get(QUEUE).text)[0]}"
    page = ada.get(case).text
    criterion = re.search(r'name="criterion" value="([^"]+)"', page).group(1)
    form = {"criterion": criterion, "turn": "1", "outcome": "passed", "rationale": "It asks first."}

    with visitor(site.url) as vera:
        assert vera.sign_in("vera", PASSWORDS["vera"]).status_code == 303
        queue = vera.get(QUEUE).text
        assert "Determining outcomes is for annotators and domain experts" in queue and "Waiting for you" not in queue
        seen = vera.get(case).text
        assert 'form class="determine"' not in seen and "Record determination" not in seen
        refused = vera.post(case, data={"csrf_token": vera.csrf(), **form})
        assert refused.status_code == 403 and "lacks the role for this action" in shown_error(refused.text)
        assert ada.post(case, data={"csrf_token": vera.csrf(), **form}).status_code == 403  # another session's token

    assert ada.post(case, data=form).status_code == 403
    missing = ada.post(case, data={"csrf_token": hidden(page, "csrf_token"), **form, "outcome": ""})
    assert missing.status_code == 422
    assert shown_error(missing.text) == "Choose an outcome: pass, fail, cannot tell, not applicable."
    assert 'aria-describedby="criterion-1-error"' in missing.text and ">It asks first.</textarea>" in missing.text
    assert determinations(site, "vera") == determinations(site, "ada") == []


def checked(page: Page, name: str) -> None:
    assert_accessible(page)
    assert_labelled(page)
    assert_fits_width(page)
    keep_screenshot(page, name)


def typed(number: int) -> str:
    return f"Skips the question first, so it fails; checked by ada ({number})."


def test_an_annotator_determines_three_cases_with_the_keyboard(
    site: Service, new_page: Callable[[ViewportSize], Page]
) -> None:
    laptop = new_page(LAPTOP)
    sign_in(laptop, site.url, "ada", PASSWORDS["ada"], QUEUE)
    assert laptop.is_visible("#shortcuts")  # the script shows the legend of its shortcuts
    checked(laptop, "annotator-queue")
    with laptop.expect_navigation():
        laptop.keyboard.press("s")
    checked(laptop, "annotator-case")

    # a case's waiting criteria one by one, until three cases are done; each rationale typed holds every
    # shortcut's letter: none acts while typing
    made = determine_cases(laptop, 3, lambda _: "f", typed)
    cases = list(dict.fromkeys(d.case for d in made))
    assert len(cases) == 3
    mine = determinations(site, "ada")
    assert sorted((d["outcome"], d["rationale"]) for d in mine) == sorted(
        (EARL + "failed", typed(n)) for n in range(len(made))
    )
    checked(laptop, "annotator-case-after")

    phone = new_page(PHONE)
    sign_in(phone, site.url, "ada", PASSWORDS["ada"], cases[0].removeprefix(site.url))
    assert phone.locator(".badge.done").count() >= 1  # the case ada determined, seen on a phone
    checked(phone, "annotator-case-phone")
    phone.goto(f"{site.url}{QUEUE}")
    checked(phone, "annotator-queue-phone")
