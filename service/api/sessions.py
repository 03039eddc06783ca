"""People signed in to the workspace pages: sessions in cookies, CSRF tokens, and the dependencies pages use.

Contract for page routes (docs/workspace-sign-in.md has the same with examples):

- ``PagePerson`` (``Person | None``): the signed-in person of a page request, or ``None``. For pages that show
  more to a person with a role; reads stay public where ``CAIE_PUBLIC_READS`` is on.
- ``SignedIn`` (``Person``): the same for a page only a signed-in person sees: without a session, a ``GET``
  is redirected (303) to ``/sign-in?next=<this path>``.
- ``FormWriter`` (``Person``): every route that changes something from a form declares it. It requires a
  signed-in session (401 otherwise) and that session's CSRF token, in the form field ``csrf_token``
  (:data:`CSRF_FIELD`) or the header ``X-CSRF-Token`` (:data:`CSRF_HEADER`, for htmx); a missing or wrong token
  is 403, as a page for a browser and problem details otherwise. The route then calls the *same* domain
  function as the REST route with ``person.credential`` (a :class:`~service.core.config.Credential`, as a bearer
  token gives), so roles are checked where they always are (``core.auth.require``, ``core.roles``, the lifecycle
  modules) and the action is recorded as the person's agent. Never check roles only in the page.
- Templates: ``{{ csrf_field() }}`` inside every ``<form method="post">`` renders the hidden token input;
  ``{{ csrf_token() }}`` is the bare token (``hx-headers='{"X-CSRF-Token": "{{ csrf_token() }}"}'``);
  ``visit()`` is the request's :class:`Visit` (``visit().session.person`` when signed in). ``base.html`` already
  shows who is signed in, with a sign-out button.

Session cookies authorize nothing else. :class:`~.security.WritesNeedCredentials` lets a write without a bearer
token reach the routes only as a form (``application/x-www-form-urlencoded`` or ``multipart/form-data``) with
a live session (or to ``POST /sign-in``); there, a form route's ``FormWriter``
checks the CSRF token, and every REST route still takes its credential from ``Authorization: Bearer`` alone
(:func:`.deps.credential`, which every REST write declares: ``tests/api/test_sign_in.py`` checks each), so a
cookie a browser attaches on its own never authorizes a JSON write. Reads (:func:`.deps.reader`) take the
signed-in person where no bearer token is sent. Sessions live in the main process's memory (:mod:`.session_store`).
"""

from __future__ import annotations

import hmac
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import quote

from anyio import CapacityLimiter
from fastapi import Depends, FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup, escape
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Receive, Scope, Send

from ..core.config import Settings
from ..core.errors import Forbidden, Unauthenticated
from ..core.people import People, Person
from .app_state import app_state
from .session_store import Session, Sessions, Signer, SignInLimits

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SIGN_IN_PATH = "/sign-in"
SIGN_IN_FORM_S = 2 * 3600
"""How long a sign-in form (its double-submit token) stays good after the page was loaded."""


@dataclass(frozen=True)
class Cookies:
    """Cookie names: ``__Host-`` (Secure, Path=/, no Domain: no other host can set or read them) unless off."""

    secure: bool

    def name(self, base: str) -> str:
        return f"__Host-{base}" if self.secure else base

    @property
    def session(self) -> str:
        return self.name("caie-session")

    @property
    def sign_in(self) -> str:
        return self.name("caie-sign-in")

    @property
    def oidc(self) -> str:
        return self.name("caie-oidc")

    def set(
        self,
        response: Response,
        name: str,
        value: str,
        *,
        max_age: int | None = None,
        same_site: Literal["lax", "strict"] = "lax",
    ) -> None:
        response.set_cookie(
            name, value, max_age=max_age, path="/", secure=self.secure, httponly=True, samesite=same_site
        )

    def clear(self, response: Response, name: str) -> None:
        response.delete_cookie(name, path="/", secure=self.secure, httponly=True, samesite="lax")


@dataclass
class Workspace:
    """Sign-in's state in the main process: the people, their sessions, failed attempts, the token signer."""

    settings: Settings
    people: People
    sessions: Sessions
    limits: SignInLimits
    signer: Signer
    cookies: Cookies
    oidc: Any = None
    """The OpenID Connect client (:mod:`.routers.oidc`) when one is configured."""
    verifying: CapacityLimiter | None = None
    """What bounds the password checks running at once (:mod:`.routers.sign_in`), made on the event loop."""

    @property
    def offered(self) -> bool:
        """Whether anyone can sign in here (a person with a password, or an OIDC provider)."""
        return self.people.with_passwords or self.oidc is not None


@dataclass(frozen=True)
class Visit:
    """This request's session (or none), its path, and whether sign-in is offered: what ``base.html`` shows."""

    session: Session | None
    path: str
    offered: bool


_VISIT: ContextVar[Visit | None] = ContextVar("caie_visit", default=None)


def visit() -> Visit | None:
    """The current request's :class:`Visit`; ``None`` outside a request."""
    return _VISIT.get()


def current_session() -> Session | None:
    found = _VISIT.get()
    return found.session if found else None


def csrf_token() -> str:
    """The signed-in session's CSRF token (empty without a session)."""
    session = current_session()
    return session.csrf if session else ""


def csrf_field() -> Markup:
    """The hidden input carrying the session's CSRF token, for every form that posts."""
    return Markup('<input type="hidden" name="{}" value="{}">').format(CSRF_FIELD, escape(csrf_token()))


class SessionCookies:
    """Finds the request's session from its cookie and makes it the current :class:`Visit` for the request."""

    def __init__(self, app: ASGIApp, workspace: Workspace) -> None:
        self.app = app
        self.workspace = workspace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = None
        cookie = b"; ".join(value for name, value in scope["headers"] if name == b"cookie")
        if cookie:
            session = self.workspace.sessions.get(
                cookie_parser(cookie.decode("latin-1")).get(self.workspace.cookies.session)
            )
        query = scope.get("query_string", b"").decode("latin-1")
        path = scope["path"] + (f"?{query}" if query else "")
        token = _VISIT.set(Visit(session, path, self.workspace.offered))
        try:
            await self.app(scope, receive, send)
        finally:
            _VISIT.reset(token)


class SignInRequired(Exception):
    """A page needs a signed-in person: answered with a redirect to the sign-in page, coming back after."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


async def _to_sign_in(_: Request, error: Exception) -> Response:
    back = error.path if isinstance(error, SignInRequired) else "/"  # checked again where it is followed
    return RedirectResponse(f"{SIGN_IN_PATH}?next={quote(back, safe='/')}", status_code=303)


def workspace(request: Request) -> Workspace:
    return app_state(request, "workspace", Workspace)


def page_person() -> Person | None:
    session = current_session()
    return session.person if session else None


def signed_in(request: Request) -> Person:
    session = current_session()
    if session is None:
        raise SignInRequired(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    return session.person


FORM_TYPES = (b"application/x-www-form-urlencoded", b"multipart/form-data")
"""The bodies a workspace form sends (htmx too): a JSON write always needs a bearer token."""


def is_form(headers: dict[bytes, bytes]) -> bool:
    """Whether a request's body is a form's (what a workspace page posts)."""
    return headers.get(b"content-type", b"").lower().startswith(FORM_TYPES)


SIGN_IN_FIRST = (
    "this action needs a credential: a bearer token ('Authorization: Bearer <token>') or, for the "
    "workspace's forms, a signed-in session (sign in at /sign-in; a session ends after a while unused)"
)


async def _sent_token(request: Request) -> str | None:
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.headers.get("content-type", "").lower().encode().startswith(FORM_TYPES):
        value = (await request.form()).get(CSRF_FIELD)  # Starlette keeps the parsed form for the route's own fields
        sent = value if isinstance(value, str) else None
    return sent


async def form_writer(request: Request) -> Person:
    """The signed-in person, if the request carries their session's CSRF token (see the module)."""
    session = current_session()
    if session is None:
        raise Unauthenticated(SIGN_IN_FIRST)
    sent = await _sent_token(request)
    if sent is None or not hmac.compare_digest(sent.encode("utf-8", "surrogateescape"), session.csrf.encode()):
        raise Forbidden(
            f"the form's CSRF token ({CSRF_FIELD}) is missing or is not this session's: reload the page "
            "and send the form again"
        )
    return session.person


async def sign_in_form(request: Request) -> str:
    """The sign-in form's double-submit check: the form's token equals the cookie's and this service signed it.

    Nothing is stored: the token is signed with the process's key, so no one can mint a pair for a victim."""
    space = workspace(request)
    cookie = request.cookies.get(space.cookies.sign_in)
    sent = await _sent_token(request)
    if (
        not cookie
        or sent is None
        or not hmac.compare_digest(cookie.encode(), sent.encode("utf-8", "surrogateescape"))
        or space.signer.unsign(cookie, SIGN_IN_FORM_S) is None
    ):
        raise Forbidden(
            "the sign-in form has expired or was not sent from this site's sign-in page: "
            "reload the page and sign in again"
        )
    return cookie


def install(app: FastAPI, settings: Settings, oidc: Any = None) -> Workspace:
    """The workspace's sign-in state on ``app.state.workspace`` and its middleware, outermost (after security's).

    Reading the people here makes a bad people file fail the start, naming the entry."""
    space = Workspace(
        settings,
        People.of(settings),
        Sessions(settings),
        SignInLimits(settings),
        Signer(),
        Cookies(settings.session_cookie_secure),
        oidc,
    )
    app.state.workspace = space
    app.add_middleware(SessionCookies, workspace=space)
    app.add_exception_handler(SignInRequired, _to_sign_in)
    return space


WorkspaceDep = Annotated[Workspace, Depends(workspace)]
PagePerson = Annotated[Person | None, Depends(page_person)]
SignedIn = Annotated[Person, Depends(signed_in)]
FormWriter = Annotated[Person, Depends(form_writer)]
SignInForm = Annotated[str, Depends(sign_in_form)]
