"""Signing in to the workspace pages (issue 24 §1): sessions in cookies, CSRF on every form, limits on failures,
and bearer tokens unchanged for machines. Real HTTP into the app; the browser tests drive Chromium elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from fastapi import routing

from service.api import create_app, deps
from service.api.sessions import form_writer, sign_in_form
from service.cli import DEMO_ROLES, _demo_people
from service.core.config import Settings
from service.core.errors import Misconfigured
from service.core.store import Store

from ..conftest import BASE_URL, settings_for
from ..servers import AppSlot
from .workspace import PASSWORDS, SAMPLE_FORM, SAMPLE_PAGE, ManualClock, hidden, served, shown_error, visitor

pytestmark = pytest.mark.backends("embedded")  # sign-in reads no store
Slot = tuple[AppSlot, str]
ONTOLOGY = b"@prefix owl: <http://www.w3.org/2002/07/owl#> .\n<https://example.org/ontology> a owl:Ontology .\n"


def test_sign_in_starts_a_session_in_a_secure_http_only_same_site_host_cookie(
    store: Store, tokens: dict[str, str], app_slot: Slot
) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        page = browser.get("/sign-in")
        for field in ("username", "password"):
            assert f'<label for="{field}">' in page.text and f'id="{field}"' in page.text
        form_cookie = browser.sent["__Host-caie-sign-in"]
        assert (form_cookie["secure"], form_cookie["httponly"], form_cookie["samesite"].lower()) == (
            True,
            True,
            "strict",
        )

        signed = browser.sign_in("ada", PASSWORDS["ada"], next_path="/graphs")
        assert (signed.status_code, signed.headers["location"]) == (303, "/graphs")
        cookie = browser.sent["__Host-caie-session"]
        assert cookie["secure"] and cookie["httponly"] and cookie["samesite"].lower() == "lax"
        assert (cookie["path"], cookie["domain"]) == ("/", "")
        assert "__Host-caie-sign-in" not in browser.jar  # the form's token is spent

        home = browser.get("/graphs").text
        assert "Signed in as <strong>Ada Lovelace</strong>" in home and "(annotator)" in home
        assert '<form class="account" method="post" action="/sign-out">' in home and hidden(home, "csrf_token")
        assert browser.get(SAMPLE_PAGE).text == "ada"


def test_a_page_for_people_sends_an_anonymous_visitor_to_sign_in_and_back(
    store: Store, tokens: dict[str, str], app_slot: Slot
) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        assert 'href="/sign-in?next=/graphs%3Fpage%3D1">Sign in</a>' in browser.get("/graphs?page=1").text
        sent = browser.get(SAMPLE_PAGE)
        assert (sent.status_code, sent.headers["location"]) == (303, f"/sign-in?next={SAMPLE_PAGE}")
        back = browser.sign_in("Annie", PASSWORDS["annie"], next_path=SAMPLE_PAGE)  # usernames match in any case
        assert back.headers["location"] == SAMPLE_PAGE and browser.get(SAMPLE_PAGE).text == "annie"


def test_a_wrong_password_is_answered_as_an_unknown_username(
    store: Store, tokens: dict[str, str], app_slot: Slot
) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        wrong = browser.sign_in("ada", "not ada's password")
        unknown = browser.sign_in("nobody", "not anyone's password")
        assert wrong.status_code == unknown.status_code == 401
        assert shown_error(wrong.text) == shown_error(unknown.text) == "The username or password is not right."
        assert "__Host-caie-session" not in browser.jar


def test_failed_sign_ins_are_limited_per_username_whatever_the_password(
    store: Store, tokens: dict[str, str], app_slot: Slot
) -> None:
    with served(store, tokens, app_slot, sign_in_max_failures=3) as url, visitor(url) as browser:
        assert [browser.sign_in("ada", f"wrong {n}").status_code for n in range(3)] == [401, 401, 401]
        limited = browser.sign_in("ada", PASSWORDS["ada"])
        assert limited.status_code == 429 and 0 < int(limited.headers["retry-after"]) <= 15 * 60
        assert "Too many failed sign-ins" in shown_error(limited.text)
        assert browser.sign_in("nobody", "x").status_code == 401  # not this address's limit yet (20)
        assert [browser.sign_in("nobody", "x").status_code for _ in range(3)] == [401, 401, 429]  # unknown names too


def test_a_success_forgives_no_other_address_its_failures(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    with (
        served(store, tokens, app_slot, sign_in_max_failures=3) as url,
        visitor(url, "127.0.0.2") as other,
        visitor(url) as ada,
    ):
        assert other.sign_in("ada", "guess").status_code == 401
        assert ada.sign_in("ada", "a typo").status_code == 401
        assert ada.sign_in("ada", PASSWORDS["ada"]).status_code == 303  # forgives ada's own typo only
        assert [other.sign_in("ada", "guess").status_code for _ in range(3)] == [401, 401, 429]


def test_failed_sign_ins_are_limited_per_address(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    with (
        served(store, tokens, app_slot, sign_in_max_failures_per_address=4) as url,
        visitor(url, "127.0.0.3") as guesser,
        visitor(url) as annie,
    ):
        assert [guesser.sign_in(name, "guess").status_code for name in ("a", "b", "c", "d", "e")] == [401] * 4 + [429]
        assert annie.sign_in("annie", PASSWORDS["annie"]).status_code == 303


def test_the_sign_in_form_takes_a_small_body_only(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        page = browser.get("/sign-in")
        sent = browser.post(
            "/sign-in",
            data={
                "csrf_token": hidden(page.text, "csrf_token", "sign-in"),
                "username": "ada",
                "password": "x" * 70_000,
            },
        )
        assert sent.status_code == 413 and "CAIE_FORM_MAX_BODY_BYTES" in sent.text


def test_forms_without_their_csrf_token_are_refused(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        page = browser.get("/sign-in")
        token = hidden(page.text, "csrf_token")
        browser.jar.pop("__Host-caie-sign-in")
        no_cookie = browser.post(
            "/sign-in", data={"csrf_token": token, "username": "ada", "password": PASSWORDS["ada"]}
        )
        assert no_cookie.status_code == 403 and "sign-in form has expired" in shown_error(no_cookie.text)
        browser.get("/sign-in")
        forged = browser.post("/sign-in", data={"csrf_token": "1~sign-in~forged", "username": "ada", "password": "x"})
        assert forged.status_code == 403

        assert browser.sign_in("admin", PASSWORDS["admin"]).status_code == 303
        for sent in ({}, {"csrf_token": "not the session's"}):
            for path in ("/sign-out", SAMPLE_FORM):
                refused = browser.post(path, data={"field": "value", **sent})
                assert refused.status_code == 403 and "CSRF token" in shown_error(refused.text)
        as_json = browser.post(SAMPLE_FORM, data={"field": "value"}, headers={"Accept": "application/json"})
        assert as_json.headers["content-type"] == "application/problem+json" and as_json.json()["status"] == 403
        assert browser.get(SAMPLE_PAGE).text == "admin"  # still signed in
        assert browser.post(SAMPLE_FORM, data={"csrf_token": browser.csrf()}).status_code == 204
        assert (
            browser.post(
                SAMPLE_FORM,
                headers={
                    "X-CSRF-Token": browser.csrf(),  # as htmx sends it
                    "Content-Type": "application/x-www-form-urlencoded",
                },
            ).status_code
            == 204
        )


def test_a_form_without_the_role_gets_the_domains_403(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        browser.sign_in("ada", PASSWORDS["ada"])
        refused = browser.post(SAMPLE_FORM, data={"csrf_token": browser.csrf()}, headers={"Accept": "application/json"})
        assert refused.status_code == 403
        assert refused.json()["detail"] == (
            "writing a ontologies graph through /graphs needs the role admin; agent 'ada' has annotator"
        )


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/",
        "//evil.example/",
        "/\\evil.example/",
        "javascript:alert(1)",
        "/graphs\r\nSet-Cookie: x=1",
    ],
)
def test_next_leads_only_to_a_path_on_this_site(
    store: Store, tokens: dict[str, str], app_slot: Slot, target: str
) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        assert hidden(browser.get("/sign-in", params={"next": target}).text, "next") == ""
        page = browser.get("/sign-in")
        sent = browser.post(
            "/sign-in",
            data={
                "csrf_token": hidden(page.text, "csrf_token"),
                "next": target,
                "username": "ada",
                "password": PASSWORDS["ada"],
            },
        )
        assert (sent.status_code, sent.headers["location"]) == (303, "/")


def test_a_session_ends_after_its_idle_time(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    clock = ManualClock()
    with served(store, tokens, app_slot, clock, session_idle_s=60.0) as url, visitor(url) as browser:
        browser.sign_in("ada", PASSWORDS["ada"])
        token = browser.csrf()
        clock.advance(59.0)
        assert browser.get(SAMPLE_PAGE).text == "ada"  # seen within its idle time: alive, and seen again now
        clock.advance(60.5)
        assert "Signed in as" not in browser.get("/graphs").text
        assert browser.post(SAMPLE_FORM, data={"csrf_token": token}).status_code == 401


def test_a_session_ends_at_its_age_however_busy(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    clock = ManualClock()
    with (
        served(store, tokens, app_slot, clock, session_max_age_s=90.0, session_idle_s=60.0) as url,
        visitor(url) as browser,
    ):
        browser.sign_in("ada", PASSWORDS["ada"])
        for _ in range(4):  # busy: never idle, seen every 20 s
            clock.advance(20.0)
            assert browser.get(SAMPLE_PAGE).text == "ada"
        clock.advance(11.0)  # 91 s after sign-in
        assert browser.get(SAMPLE_PAGE).status_code == 303


def test_sessions_are_bounded_in_number_the_least_recently_used_ending_first(
    store: Store, tokens: dict[str, str], app_slot: Slot
) -> None:
    with (
        served(store, tokens, app_slot, session_max_count=2) as url,
        visitor(url) as ada,
        visitor(url) as annie,
        visitor(url) as admin,
    ):
        ada.sign_in("ada", PASSWORDS["ada"])
        annie.sign_in("annie", PASSWORDS["annie"])
        assert ada.get(SAMPLE_PAGE).text == "ada"  # annie's is now the least recently used
        admin.sign_in("admin", PASSWORDS["admin"])
        assert (ada.get(SAMPLE_PAGE).text, annie.get(SAMPLE_PAGE).status_code, admin.get(SAMPLE_PAGE).text) == (
            "ada",
            303,
            "admin",
        )


def test_sign_out_ends_the_session_on_the_server(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        browser.sign_in("ada", PASSWORDS["ada"])
        kept, token = browser.jar["__Host-caie-session"], browser.csrf()
        out = browser.post("/sign-out", data={"csrf_token": token})
        assert (out.status_code, out.headers["location"]) == (303, "/")
        assert browser.sent["__Host-caie-session"]["max-age"] == "0"
        browser.jar["__Host-caie-session"] = kept  # a copy of the cookie kept elsewhere
        assert browser.get(SAMPLE_PAGE).status_code == 303
        assert browser.post(SAMPLE_FORM, data={"csrf_token": token}).status_code == 401


def test_a_new_sign_in_replaces_the_session_id(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        browser.sign_in("ada", PASSWORDS["ada"])
        first = browser.jar["__Host-caie-session"]
        browser.sign_in("annie", PASSWORDS["annie"])
        assert browser.jar["__Host-caie-session"] != first
        browser.jar["__Host-caie-session"] = first
        assert browser.get(SAMPLE_PAGE).status_code == 303  # the earlier session ended at the new sign-in


def test_bearer_tokens_still_write_and_a_session_cookie_alone_writes_nothing(
    store: Store, tokens: dict[str, str], app_slot: Slot
) -> None:
    with served(store, tokens, app_slot) as url, visitor(url) as browser:
        browser.sign_in("admin", PASSWORDS["admin"])
        token = browser.csrf()
        turtle, form = {"Content-Type": "text/turtle"}, {"Content-Type": "application/x-www-form-urlencoded"}
        for headers in (turtle, {**turtle, "X-CSRF-Token": token}):  # even with the page's token
            assert (
                browser.request("PUT", "/graphs/ontologies/demo", content=ONTOLOGY, headers=headers).status_code == 401
            )
        refused = browser.post("/evaluations", json={"title": "x"}, headers={"Accept": "application/json"})
        assert refused.status_code == 401 and "Bearer" in refused.json()["detail"]
        assert browser.get("/graphs/ontologies/demo", headers={"Accept": "text/turtle"}).status_code == 404

        created = browser.request(
            "PUT",
            "/graphs/ontologies/demo",
            content=ONTOLOGY,
            headers={**turtle, "Authorization": f"Bearer {tokens['admin']}"},
        )
        assert created.status_code == 201 and created.json()["loadedBy"] == "admin"
        # a form reaches a REST route only to meet its bearer check
        deleted = browser.request(
            "DELETE",
            "/graphs/ontologies/demo",
            content=f"csrf_token={token}",
            headers={**form, "X-CSRF-Token": token, "Accept": "application/json"},
        )
        assert deleted.status_code == 401
        assert browser.get("/graphs/ontologies/demo", headers={"Accept": "text/turtle"}).status_code == 200


def test_every_write_route_takes_a_bearer_token_or_checks_a_forms_csrf_token(tokens: dict[str, str]) -> None:
    """What keeps a session cookie from authorizing a REST write: each write route declares the bearer credential
    (``deps.credential``, which reads ``Authorization`` only) or a form's CSRF check, never neither."""
    app = create_app(settings_for(tokens))

    def calls(dependant: object) -> set[object]:
        found: set[object] = set()
        for sub in dependant.dependencies:  # type: ignore[attr-defined]  # FastAPI's Dependant, typed object here to stay off its private module
            found |= {sub.call} | calls(sub)
        return found

    writes = [
        (context.path, context.original_route)
        for context in routing.iter_route_contexts(app.routes)
        if isinstance(context.original_route, routing.APIRoute)
        and context.original_route.methods - {"GET", "HEAD", "OPTIONS"}
    ]
    assert writes
    unguarded = [
        path
        for path, route in writes
        if not calls(route.dependant) & {deps.credential, form_writer, sign_in_form}
        and route.endpoint.__qualname__ != "allow_only.<locals>.refuse"
    ]  # methods.py's 405 to every write
    assert unguarded == []


def test_a_people_entry_that_cannot_be_used_stops_the_start_naming_it(tmp_path: Path) -> None:
    people = [
        {"agent": "ada", "username": "ada", "password": "p", "roles": ["annotator"]},
        {"agent": "bob", "username": "bob", "roles": ["annotator"]},
    ]
    with pytest.raises(Misconfigured, match=r"entry 1 \(agent 'bob'\).*needs a password"):
        create_app(Settings(base_url=BASE_URL, people=json.dumps(people)))
    for bad, named in (
        (dict(people[0], languages=["english?"]), "languages"),
        ({**people[1], "password_hash": "$2b$12$notargon"}, "not an argon2"),
        (dict(people[0], agent="x y"), "agent"),
    ):
        with pytest.raises(Misconfigured, match=named):
            create_app(Settings(base_url=BASE_URL, people=json.dumps([bad])))
    with pytest.raises(Misconfigured, match="username 'ADA' is given twice"):
        create_app(
            Settings(base_url=BASE_URL, people=json.dumps([people[0], dict(people[0], agent="ada2", username="ADA")]))
        )

    path = tmp_path / "people.json"
    path.write_text(json.dumps(people), encoding="utf-8")
    started = subprocess.run(
        [str(Path(sys.executable).with_name("caie")), "serve", "--port", "1"],
        env={**os.environ, "CAIE_PEOPLE_FILE": str(path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # it must fail, with status 2
    assert started.returncode == 2
    assert "caie: people: entry 1 (agent 'bob'): " in started.stderr and "Traceback" not in started.stderr


def test_a_production_entry_signs_in_with_its_argon2_hash(store: Store, tokens: dict[str, str], app_slot: Slot) -> None:
    slot, url = app_slot
    entry = {
        "agent": "theo",
        "username": "theo",
        "password_hash": PasswordHasher().hash("theo's passphrase"),
        "roles": ["evaluation_operator"],
    }
    with slot.serving(create_app(settings_for(tokens, people=json.dumps([entry])), store)), visitor(url) as browser:
        assert browser.sign_in("theo", "theo's passphrase").status_code == 303
        assert "(evaluation operator)" in browser.get("/graphs").text


def test_make_run_writes_one_demo_person_per_role_once_and_the_service_signs_them_in(
    tmp_path: Path, store: Store, tokens: dict[str, str], app_slot: Slot
) -> None:
    path = _demo_people(tmp_path)
    assert path == tmp_path / "people.json" and path.stat().st_mode & 0o777 == 0o600
    people = json.loads(path.read_text(encoding="utf-8"))
    assert {p["agent"]: p["roles"] for p in people} == DEMO_ROLES
    assert {role for p in people for role in p["roles"]} == {
        "admin",
        "domain_expert",
        "evaluation_operator",
        "organizational_expert",
        "annotator",
    }
    assert next(p for p in people if "annotator" in p["roles"])["languages"] == ["en", "fr"]
    assert _demo_people(tmp_path).read_text(encoding="utf-8") == path.read_text(encoding="utf-8")  # kept
    slot, url = app_slot
    with slot.serving(create_app(settings_for(tokens, people_file=path), store)), visitor(url) as browser:
        ada = next(p for p in people if p["agent"] == "ada")
        assert browser.sign_in(ada["username"], ada["password"]).status_code == 303
