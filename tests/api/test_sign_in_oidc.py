"""Signing in with an OpenID Connect provider (issue 24 §1): the code flow with PKCE against a provider run in
the test (:mod:`.oidc_provider`), ending in the same session a password sign-in starts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from service.api import create_app
from service.core.store import Store

from ..conftest import BASE_URL, settings_for
from ..servers import AppSlot
from .oidc_provider import CLIENT_ID, CLIENT_SECRET, Provider, oidc_provider
from .workspace import PEOPLE, SAMPLE_PAGE, Visitor, sample_routes, shown_error, visitor

pytestmark = pytest.mark.backends("embedded")
OLGA = {"agent": "olga", "oidc_subject": "subject-olga", "roles": ["domain_expert"], "name": "Olga"}


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with oidc_provider() as running:
        yield running


@pytest.fixture
def roles_claim() -> str | None:
    """``CAIE_OIDC_ROLES_CLAIM``: unset unless a test parametrizes it."""
    return None


@pytest.fixture
def browser(
    store: Store, tokens: dict[str, str], app_slot: tuple[AppSlot, str], provider: Provider, roles_claim: str | None
) -> Iterator[Visitor]:
    """A browser on the service configured with the provider."""
    settings = settings_for(
        tokens,
        people=json.dumps([*PEOPLE, OLGA]),
        oidc_issuer=provider.issuer,
        oidc_client_id=CLIENT_ID,
        oidc_client_secret=CLIENT_SECRET,
        oidc_label="Example ID",
        oidc_roles_claim=roles_claim,
    )
    app = create_app(settings, store)
    sample_routes(app)
    slot, url = app_slot
    provider.claims, provider.nonce = {}, None
    with slot.serving(app), visitor(url) as person:
        yield person


def through_provider(browser: Visitor, next_path: str = "") -> httpx.Response:
    """The sign-in page's link, the provider's sign-in (its redirect back), and the callback on the service."""
    started = browser.get("/sign-in/oidc" + (f"?next={next_path}" if next_path else ""))
    assert started.status_code == 303, started.text
    asked = parse_qs(urlsplit(started.headers["location"]).query)
    assert asked["code_challenge_method"] == ["S256"] and asked["scope"] == ["openid profile email"]
    back = httpx.get(started.headers["location"])  # at the provider, which has no cookie of ours
    assert back.status_code == 302, back.text
    callback = back.headers["location"]
    assert callback.startswith(f"{BASE_URL}sign-in/oidc/callback?")
    return browser.get(callback.removeprefix(BASE_URL.rstrip("/")))


def test_a_subject_named_by_a_people_entry_signs_in_as_that_person(browser: Visitor, provider: Provider) -> None:
    assert 'href="/sign-in/oidc">Sign in with Example ID</a>' in browser.get("/sign-in").text
    provider.claims = {"sub": "subject-olga", "preferred_username": "someone-else"}
    signed = through_provider(browser, SAMPLE_PAGE)
    assert (signed.status_code, signed.headers["location"]) == (303, SAMPLE_PAGE)
    assert browser.sent["__Host-caie-session"]["httponly"] and "__Host-caie-oidc" not in browser.jar
    assert browser.get(SAMPLE_PAGE).text == "olga"
    assert "Signed in as <strong>Olga</strong>" in browser.get("/graphs").text


def test_without_a_roles_claim_an_unknown_subject_is_refused(browser: Visitor, provider: Provider) -> None:
    provider.claims = {"sub": "subject-unknown", "preferred_username": "pat", "caie_roles": ["annotator"]}
    refused = through_provider(browser)
    assert refused.status_code == 403 and "not one of this deployment" in shown_error(refused.text)
    assert browser.get(SAMPLE_PAGE).status_code == 303


@pytest.mark.parametrize("roles_claim", ["caie_roles"])
def test_a_roles_claim_signs_in_its_agent_but_never_as_a_configured_person(
    browser: Visitor, provider: Provider
) -> None:
    provider.claims = {"sub": "subject-pat", "preferred_username": "pat", "name": "Pat", "caie_roles": ["annotator"]}
    assert through_provider(browser).status_code == 303
    assert browser.get(SAMPLE_PAGE).text == "pat" and "(annotator)" in browser.get("/graphs").text
    provider.claims = {"sub": "subject-mallory", "preferred_username": "ada", "caie_roles": ["admin"]}
    assert through_provider(browser).status_code == 403


def test_the_callback_refuses_what_this_browser_did_not_start(browser: Visitor, provider: Provider) -> None:
    provider.claims = {"sub": "subject-olga"}
    started = browser.get("/sign-in/oidc")
    back = httpx.get(started.headers["location"]).headers["location"].removeprefix(BASE_URL.rstrip("/"))
    with visitor(str(browser.http.base_url)) as other:  # another browser, sent the link (login CSRF)
        assert other.get(back).status_code == 403
    forged = back.replace("state=", "state=x")
    assert browser.get(forged).status_code == 403
    assert browser.get(SAMPLE_PAGE).status_code == 303


def test_an_id_token_for_another_sign_in_does_not_verify(browser: Visitor, provider: Provider) -> None:
    provider.claims, provider.nonce = {"sub": "subject-olga"}, "a nonce from another sign-in"
    refused = through_provider(browser)
    assert refused.status_code == 401 and "could not be verified" in shown_error(refused.text)
    assert browser.get(SAMPLE_PAGE).status_code == 303


def test_without_a_provider_there_is_no_oidc_sign_in(
    store: Store, tokens: dict[str, str], app_slot: tuple[AppSlot, str]
) -> None:
    slot, url = app_slot
    with slot.serving(create_app(settings_for(tokens, people=json.dumps(PEOPLE)), store)), visitor(url) as person:
        assert "/sign-in/oidc" not in person.get("/sign-in").text
        assert person.get("/sign-in/oidc").status_code == 404
