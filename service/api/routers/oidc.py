"""Signing in with an OpenID Connect provider instead of a password: ``/sign-in/oidc`` and its callback.

The authorization code flow with PKCE, by Authlib's client. What the callback must check (``state``, the
``nonce`` and the PKCE verifier) travels in a signed, HttpOnly cookie that lasts :data:`PENDING_S`: nothing is
stored server-side before a person is known. The ID token is verified by Authlib against the provider's keys,
issuer and this client's id; its claims name the person (:func:`service.core.people.person_of_claims`), and
the session is the one a password sign-in starts (:func:`.sign_in.start_session`). docs/workspace-sign-in.md.
"""

from __future__ import annotations

import base64
import json
import logging
import warnings
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ...core.config import Settings, read_secret
from ...core.errors import Misconfigured, NotFound
from ...core.outbound import tls_context
from ...core.people import person_of_claims
from .. import html
from ..sessions import Workspace, WorkspaceDep
from .sign_in import NO_STORE, form_token, sign_in_page, start_session

if TYPE_CHECKING:
    from authlib.integrations.starlette_client import StarletteOAuth2App

router = APIRouter(tags=["workspace"], include_in_schema=False)

PENDING_S = 600
"""How long a person may take at the provider between leaving the sign-in page and coming back."""
CALLBACK = "sign-in/oidc/callback"
_LOG = logging.getLogger(__name__)


def client(settings: Settings) -> StarletteOAuth2App | None:
    """The provider's client when ``CAIE_OIDC_ISSUER`` is set; :class:`Misconfigured` when it is set but unusable."""
    if not settings.oidc_issuer:
        return None
    try:
        secret = read_secret(settings.oidc_client_secret, settings.oidc_client_secret_file, "oidc_client_secret")
    except ValueError as error:
        raise Misconfigured(str(error)) from None
    if not settings.oidc_client_id or not secret:
        raise Misconfigured("CAIE_OIDC_ISSUER needs CAIE_OIDC_CLIENT_ID and CAIE_OIDC_CLIENT_SECRET (or _FILE)")
    if "openid" not in settings.oidc_scope.split():
        raise Misconfigured(f"CAIE_OIDC_SCOPE must include openid; it is {settings.oidc_scope!r}")
    metadata = settings.oidc_issuer.rstrip("/") + "/.well-known/openid-configuration"
    with warnings.catch_warnings():  # Authlib 1.9 asks for the httpx2 fork; httpx is what the service uses
        import authlib.deprecate  # noqa: F401  # its import puts an "always" filter first; this one goes before it

        warnings.filterwarnings("ignore", "The httpx module is deprecated", DeprecationWarning)
        from authlib.integrations.starlette_client import OAuth
    return OAuth().register(
        "oidc",
        client_id=settings.oidc_client_id,
        client_secret=secret,
        server_metadata_url=metadata,
        # the process's one TLS context, not one per sign-in (core/outbound.py)
        client_kwargs={"scope": settings.oidc_scope, "code_challenge_method": "S256", "verify": tls_context()},
    )


def _provider(space: Workspace) -> StarletteOAuth2App:
    if space.oidc is None:
        raise NotFound("this deployment has no OpenID Connect provider (CAIE_OIDC_ISSUER)")
    return space.oidc


def _refused(space: Workspace, request: Request, status: int, message: str) -> HTMLResponse:
    response = sign_in_page(space, form_token(space, request), next_path="", status=status, error=message)
    space.cookies.clear(response, space.cookies.oidc)
    return response


@router.get("/sign-in/oidc")
async def start(request: Request, space: WorkspaceDep, next: str = "") -> Response:
    provider = _provider(space)
    redirect_uri = space.settings.base_url + CALLBACK
    try:
        started = await provider.create_authorization_url(redirect_uri)
        issuer = (await provider.load_server_metadata()).get("issuer")
    except Exception:  # noqa: BLE001  # the provider's failure (network, metadata), whichever HTTP client Authlib uses
        _LOG.warning("the OpenID Connect provider's metadata could not be read", exc_info=True)
        return _refused(space, request, 503, "The sign-in provider did not answer. Try again later.")
    if issuer != space.settings.oidc_issuer:  # OpenID Connect Discovery §4.3
        return _refused(space, request, 503, "The sign-in provider's metadata names another issuer.")
    pending = {
        "state": started["state"],
        "nonce": started["nonce"],
        "verifier": started["code_verifier"],
        "next": html.local_href(next) or "",
    }
    payload = base64.urlsafe_b64encode(json.dumps(pending).encode()).decode()
    response = RedirectResponse(started["url"], status_code=303, headers=NO_STORE)
    space.cookies.set(response, space.cookies.oidc, space.signer.sign(payload), max_age=PENDING_S)
    return response


@router.get("/sign-in/oidc/callback")
async def callback(request: Request, space: WorkspaceDep, state: str = "", code: str = "", error: str = "") -> Response:
    provider = _provider(space)
    signed = space.signer.unsign(request.cookies.get(space.cookies.oidc), PENDING_S)
    pending = json.loads(base64.urlsafe_b64decode(signed)) if signed else None
    if pending is None or not state or state != pending["state"]:
        return _refused(
            space,
            request,
            403,
            f"This sign-in did not start here, or took longer than {PENDING_S // 60} minutes. Start again.",
        )
    if error or not code:
        return _refused(
            space, request, 401, "The sign-in provider did not sign you in" + (f" ({error[:100]})." if error else ".")
        )
    try:
        token = await provider.fetch_access_token(
            redirect_uri=space.settings.base_url + CALLBACK, code=code, code_verifier=pending["verifier"]
        )
        claims = await provider.parse_id_token(token, nonce=pending["nonce"])
    except Exception:  # noqa: BLE001  # a failed exchange or a token that does not verify: no session, whatever failed
        _LOG.warning("an OpenID Connect sign-in failed at the token exchange or its verification", exc_info=True)
        return _refused(space, request, 401, "The sign-in provider's answer could not be verified. Start again.")
    person = person_of_claims(
        space.people, claims or {}, space.settings.oidc_roles_claim, space.settings.oidc_agent_claim
    )
    if person is None:
        return _refused(
            space,
            request,
            403,
            "You signed in with the provider, but you are not one of this "
            "deployment's people. Ask its administrator to add you.",
        )
    response = start_session(space, request, person, pending["next"])
    space.cookies.clear(response, space.cookies.oidc)
    return response
