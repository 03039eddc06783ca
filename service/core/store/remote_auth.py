"""Credentials for a remote store: HTTP Basic or Digest, whichever the store asks for (bearer tokens are a header)."""

from __future__ import annotations

from collections.abc import Generator

import httpx


class NegotiatedAuth(httpx.Auth):
    """HTTP Basic or Digest, whichever the store's first ``WWW-Authenticate`` challenge asks for, then that one.

    Virtuoso's ``/sparql-auth`` asks for Digest, a reverse proxy in front of GraphDB often for Basic; an
    operator gives a user and a password and need not know which. ``scheme`` fixes one instead.
    """

    requires_request_body = True

    def __init__(self, username: str, password: str, scheme: str | None = None) -> None:
        self._basic = httpx.BasicAuth(username, password)
        self._digest = httpx.DigestAuth(username, password)
        self._scheme = scheme

    def __repr__(self) -> str:
        return f"NegotiatedAuth(scheme={self._scheme!r})"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._scheme == "basic":
            yield from self._basic.auth_flow(request)
            return
        if self._scheme == "digest":
            yield from self._digest.auth_flow(request)
            return
        response = yield request
        if response.status_code != 401:
            return
        challenges = [value.lower() for value in response.headers.get_list("www-authenticate")]
        if any(value.startswith("digest") for value in challenges):
            self._scheme = "digest"
            flow = self._digest.auth_flow(request)
            next(flow)  # the digest flow's unauthenticated request: its answer is the 401 in hand
            try:
                retry = flow.send(response)
            except StopIteration:
                return
            answer = yield retry
            try:
                flow.send(answer)
            except StopIteration:
                pass
        elif any(value.startswith("basic") for value in challenges) or not challenges:
            self._scheme = "basic"
            yield from self._basic.auth_flow(request)
