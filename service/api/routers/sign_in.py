"""Signing in and out of the workspace pages: ``GET``/``POST /sign-in``, ``POST /sign-out`` (docs/workspace-sign-in.md).

A person signs in with their username and password from the people list (:mod:`service.core.people`); the
answer to a wrong password is the answer to an unknown username. Failures are counted per username and per
client address (:class:`..session_store.SignInLimits`); at the limit the form answers 429 with ``Retry-After``
before any password is checked. Success starts a new session (any earlier one of the browser's is ended) and
goes back to ``next`` when that is a path on this site.
"""

from __future__ import annotations

from typing import Annotated

from anyio import CapacityLimiter, to_thread
from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ...core.people import Person
from .. import html
from ..body_limits import Body, body
from ..sessions import SIGN_IN_FORM_S, FormWriter, SignInForm, Workspace, WorkspaceDep, visit

router = APIRouter(tags=["workspace"], include_in_schema=False)

VERIFYING_AT_ONCE = 2
"""Password checks running at once: argon2 takes 64 MiB and tens of milliseconds of a core for each."""
WRONG = "The username or password is not right."
NO_STORE = {"Cache-Control": "no-store"}


def sign_in_page(
    space: Workspace,
    token: str,
    *,
    next_path: str,
    status: int = 200,
    error: str | None = None,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """The sign-in form (with its double-submit cookie), an error above it if any."""
    here = visit()
    page = html.render(
        "sign_in.html",
        title="Sign in",
        token=token,
        next_path=next_path,
        error=error,
        passwords=space.people.with_passwords,
        oidc_label=space.settings.oidc_label if space.oidc is not None else None,
        person=here.session.person if here and here.session else None,
    )
    response = HTMLResponse(page, status_code=status, headers={**NO_STORE, **(headers or {})})
    space.cookies.set(response, space.cookies.sign_in, token, max_age=SIGN_IN_FORM_S, same_site="strict")
    return response


def form_token(space: Workspace, request: Request) -> str:
    """The browser's sign-in token while it is good (several tabs share it), else a new one."""
    held = request.cookies.get(space.cookies.sign_in)
    if held is not None and space.signer.unsign(held, SIGN_IN_FORM_S / 2) is not None:
        return held
    return space.signer.sign("sign-in")


def start_session(space: Workspace, request: Request, person: Person, next_path: str | None) -> Response:
    """A new session for ``person`` (the browser's earlier one ended: the id changes at sign-in), then ``next``."""
    space.sessions.end(request.cookies.get(space.cookies.session))
    session_id, _ = space.sessions.create(person)
    response = RedirectResponse(html.local_href(next_path) or "/", status_code=303, headers=NO_STORE)
    space.cookies.set(response, space.cookies.session, session_id)
    space.cookies.clear(response, space.cookies.sign_in)
    return response


def _verifying(space: Workspace) -> CapacityLimiter:
    if space.verifying is None:  # made on the event loop, on first use
        space.verifying = CapacityLimiter(VERIFYING_AT_ONCE)
    return space.verifying


@router.get("/sign-in", response_class=HTMLResponse)
async def show_sign_in(request: Request, space: WorkspaceDep, next: str = "") -> HTMLResponse:
    return sign_in_page(space, form_token(space, request), next_path=html.local_href(next) or "")


@router.post("/sign-in", response_class=HTMLResponse)
@body(Body.FORM)
async def sign_in(
    request: Request,
    space: WorkspaceDep,
    token: SignInForm,
    username: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "",
) -> Response:
    next_path = html.local_href(next) or ""
    if not username or not password:
        return sign_in_page(space, token, next_path=next_path, status=422, error="Enter your username and password.")
    address = request.client.host if request.client else "unknown"
    wait = space.limits.retry_after(username, address)
    if wait is not None:
        minutes = -(-wait // 60)
        return sign_in_page(
            space,
            token,
            next_path=next_path,
            status=429,
            headers={"Retry-After": str(wait)},
            error=f"Too many failed sign-ins for this username or from this address. "
            f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
        )
    person = await to_thread.run_sync(space.people.verify, username, password, limiter=_verifying(space))
    if person is None:
        space.limits.failed(username, address)
        return sign_in_page(
            space,
            token,
            next_path=next_path,
            status=401,
            error=WRONG,
            headers={"WWW-Authenticate": 'Bearer realm="ob-caie"'},
        )
    space.limits.succeeded(username, address)
    return start_session(space, request, person, next_path)


@router.post("/sign-out")
async def sign_out(request: Request, space: WorkspaceDep, _: FormWriter) -> Response:
    space.sessions.end(request.cookies.get(space.cookies.session))
    response = RedirectResponse("/", status_code=303, headers=NO_STORE)
    space.cookies.clear(response, space.cookies.session)
    return response
