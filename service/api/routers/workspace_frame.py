"""What the domain expert's workspace pages share (:mod:`.workspace_expert`, :mod:`.workspace_expert_criteria`): a
page rendered for the person reading it (:class:`Frame`), a form read with the REST route's body and acted on
(:func:`act`), a refused form shown again at its place (:class:`Refusal`), and the words the pages use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from ...core.config import Credential
from ...core.errors import ServiceError, Unauthenticated
from ...core.graphs import GraphService
from ...core.people import Person
from ...core.rdf import local_name
from ...core.roles import ADMIN
from ...envelope import get_evaluation
from ...plan.openings import normal_tag
from ..form_refusals import field_errors
from ..guarded import computed
from ..html import render
from ..problems import status_of

PageNumber = Annotated[int, Query(ge=1, le=1_000_000)]
WORDS = {
    "passed": "pass",
    "failed": "fail",
    "cantTell": "cannot tell",
    "inapplicable": "not applicable",
    "untested": "untested",
}


def may(person: Person | None, *roles: str) -> bool:
    """Whether the domain would let ``person`` act as one of ``roles`` (an admin may act as any)."""
    return person is not None and bool(person.roles & {*roles, ADMIN})


def word(outcome: str | None) -> str:
    """An outcome (an EARL IRI or its name) as the pages say it."""
    name = (outcome or "").rsplit("#", 1)[-1]
    return WORDS.get(name, name or "—")


def when(at: str | datetime) -> str:
    """A recorded time, to the minute, in UTC."""
    moment = at if isinstance(at, datetime) else datetime.fromisoformat(at)
    return (moment.astimezone(UTC) if moment.tzinfo else moment).strftime("%Y-%m-%d %H:%M UTC")


def lang(language: str) -> str:
    """A language (a lexvo IRI, an ISO 639 code or a BCP 47 tag) as the BCP 47 tag a ``lang`` attribute takes."""
    return normal_tag(local_name(language))


@dataclass(frozen=True)
class Refusal:
    """What a form sent and why it was refused: shown at the form it came from, its fields kept."""

    form: str
    message: str
    values: Mapping[str, str] = field(default_factory=dict)


Build = Callable[[Refusal | None, int], Awaitable[HTMLResponse]]
"""A page: as it is (``None``, 200), or with a refused form's message under the refusal's status."""


@dataclass(frozen=True)
class Frame:
    """One evaluation's workspace page being answered: who reads it, and who is signed in (``None``: no one)."""

    request: Request
    graphs: GraphService
    evaluation_id: str
    reader: Credential | None
    person: Person | None

    @property
    def path(self) -> str:
        return f"/evaluations/{self.evaluation_id}/workspace"

    async def render(
        self,
        current: str,
        template: str,
        title: str,
        read: Callable[[], Mapping[str, object]],
        refusal: Refusal | None = None,
        status: int = 200,
        done: str | None = None,
    ) -> HTMLResponse:
        """The page: ``read()`` (run as one of the reader's queries) gives the template's context."""

        def work() -> dict[str, object]:
            return {"evaluation_title": get_evaluation(self.graphs, self.evaluation_id).scope.title, **read()}

        context = await computed(self.request, self.reader, work)
        html = render(
            template,
            title=f"{title}: {context['evaluation_title']}",
            link=self.request.app.state.publisher.local_href,
            path=None,
            scripts=(),
            evaluation_id=self.evaluation_id,
            workspace=self.path,
            current=current,
            may=lambda *roles: may(self.person, *roles),
            refusal=refusal,
            done=done,
            word=word,
            when=when,
            tail=local_name,
            lang=lang,
            **context,
        )
        return HTMLResponse(html, status_code=status)


def writer_frame(request: Request, graphs: GraphService, evaluation_id: str, person: Person) -> Frame:
    """The frame a form's route re-renders its page in: read as the person who sent it."""
    return Frame(request, graphs, evaluation_id, person.credential, person)


async def act(
    request: Request,
    form: str,
    body: type[BaseModel],
    labels: Mapping[str, str],
    action: Callable[[Any], object],
    build: Build,
    back: str,
    given: Mapping[str, str] | None = None,
    anchor: str | None = None,
    told: Callable[[Any], Build | None] | None = None,
) -> Response:
    """Read the form's fields named in ``labels`` (field to the label the page gives it), with ``given`` (what the
    path names), as ``body``, the REST route's request body (an empty field counts as not sent); then run
    ``action(body)`` in a worker thread: 303 to ``back`` confirming ``form`` (at ``anchor``, else the form's own), or
    the page built again with the refusal (422 for the fields, else the domain's status; 401 and 5xx are answered as
    everywhere). ``told(result)``, given the action's result, is the page to answer with instead of the redirect
    (200) when the result has something the person must read that the page could not find again (``None``: the
    redirect): the warnings a REST route answers with."""
    sent = await request.form()
    values = {name: value for name in labels if isinstance(value := sent.get(name), str)}
    try:
        parsed = body.model_validate(
            {**(given or {}), **{name: value for name, value in values.items() if value.strip()}}
        )
        result = await run_in_threadpool(action, parsed)
    except ValidationError as error:
        return await build(Refusal(form, field_errors(error, labels), values), 422)
    except ServiceError as error:
        status = status_of(error)
        if isinstance(error, Unauthenticated) or status >= 500:
            raise
        return await build(Refusal(form, error.message, values), status)
    page = told(result) if told is not None else None
    if page is not None:
        return await page(None, 200)
    separator = "&" if "?" in back else "?"
    return RedirectResponse(f"{back}{separator}{urlencode({'done': form})}#{anchor or form}", status_code=303)
