"""A small OpenID Connect provider for the sign-in tests: discovery, authorization (code flow with PKCE), token
and keys endpoints, served over real HTTP. It stands in for a third-party component (Keycloak, an identity
service), so it is the one fake here: the service's own code runs unchanged against it.

Whoever "signs in" at it is :attr:`Provider.claims`, set by the test; :attr:`Provider.nonce` can make it issue an
ID token with another nonce than it was asked for.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlencode

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..servers import app_server

CLIENT_ID, CLIENT_SECRET = "caie-workspace", "a client secret"


@dataclass
class Provider:
    claims: dict[str, object] = field(default_factory=dict)
    nonce: str | None = None
    """When set, the nonce put in ID tokens instead of the one the client sent."""
    issuer: str = ""
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, parameters={"kid": "test-key"}))
    codes: dict[str, dict[str, str]] = field(default_factory=dict)

    def metadata(self, _: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    def authorize(self, request: Request) -> Response:
        asked = request.query_params
        if asked.get("client_id") != CLIENT_ID or asked.get("code_challenge_method") != "S256":
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {name: asked[name] for name in ("redirect_uri", "nonce", "code_challenge")}
        return RedirectResponse(f"{asked['redirect_uri']}?{urlencode({'code': code, 'state': asked['state']})}", 302)

    async def token(self, request: Request) -> JSONResponse:
        form = await request.form()
        basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        granted = self.codes.pop(str(form.get("code")), None)
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        if (
            request.headers.get("authorization") != f"Basic {basic}"
            or granted is None
            or form.get("redirect_uri") != granted["redirect_uri"]
            or challenge != granted["code_challenge"]
        ):
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "nonce": self.nonce or granted["nonce"],
            **self.claims,
        }
        id_token = jwt.encode({"alg": "RS256", "kid": "test-key"}, claims, self.key)
        return JSONResponse(
            {"access_token": secrets.token_urlsafe(16), "token_type": "Bearer", "expires_in": 300, "id_token": id_token}
        )

    def jwks(self, _: Request) -> JSONResponse:
        return JSONResponse(KeySet([self.key]).as_dict(private=False))


@contextmanager
def oidc_provider() -> Iterator[Provider]:
    """The provider over real HTTP on a free loopback port; its ``issuer`` is its URL."""
    provider = Provider()
    app = Starlette(
        routes=[
            Route("/.well-known/openid-configuration", provider.metadata),
            Route("/authorize", provider.authorize),
            Route("/token", provider.token, methods=["POST"]),
            Route("/jwks", provider.jwks),
        ]
    )
    with app_server(app) as url:
        provider.issuer = url
        yield provider
