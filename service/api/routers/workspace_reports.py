"""The sponsor's and organizational expert's pages (issue 24 §6): an evaluation's reports with their state and a
form that makes one (``/evaluations/{id}/workspace/reports``), and the report page's sign-off and acceptance forms
(shown by routers/report_pages.py, posted here).

Every form calls what the REST route calls, with the signed-in person's credential, after validating the REST
route's own request body: :func:`service.reports.records.make_report` (an evaluation operator or domain expert;
``ReportBody``) and :func:`service.reports.signoffs.sign` (the domain expert signs off, the organizational expert
accepts; refused while the report no longer verifies; ``ReportSignOffBody``). A refusal shows the form again with
the domain's reason and status; a missing role is the domain's 403 (docs/workspace.md, "Sponsor and
organizational expert").
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from ...core.graphs import GraphService
from ...core.people import Person
from ...envelope import get_evaluation
from ...reports.model import Report, Verification
from ...reports.records import REPORTERS, get_report, make_report
from ...reports.signoffs import sign
from ...reports.verify import verify
from ...runs.records import list_runs
from ...workspace.overview import report_states
from ..deps import GraphsDep, ReaderDep, signer
from ..form_refusals import Refused, attempt
from ..html import render
from ..models_judgments import ReportBody, ReportSignOffBody
from ..sessions import FormWriter, PagePerson
from ..signing import may
from .report_pages import FITNESS, FORMAT, report_page_response

router = APIRouter(prefix="/evaluations/{evaluation_id}/workspace/reports", tags=["workspace"], include_in_schema=False)

LABELS = {
    "run": "Run",
    "fitness": "Fitness for deployment",
    "limitations": "Limitations",
    "recommendations": "Recommendations",
    "comment": "Statement",
}
"""Each request field by its form control's label, for naming what a refused form got wrong."""


class ReportForm(BaseModel):
    """The "Make a report" form as sent: limitations and recommendations one a line."""

    run: str = ""
    fitness: str = ""
    limitations: str = ""
    recommendations: str = ""

    def body(self) -> dict[str, object]:
        """The REST route's body (blank lines are no statement)."""

        def lines(text: str) -> list[str]:
            return [line.strip() for line in text.splitlines() if line.strip()]

        return {
            "run": self.run.strip(),
            "fitness": self.fitness,
            "limitations": lines(self.limitations),
            "recommendations": lines(self.recommendations),
        }


def _listing(
    request: Request,
    graphs: GraphService,
    evaluation_id: str,
    person: Person | None,
    form: ReportForm,
    checked: int | None,
    made: int | None,
    error: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    title = get_evaluation(graphs, evaluation_id).scope.title  # 404 for no such evaluation
    states = report_states(graphs, evaluation_id)
    verification: Verification | None = None
    if checked is not None:  # on request only: it recomputes every figure (seconds on the worked example)
        verification = verify(graphs, evaluation_id, get_report(graphs, evaluation_id, checked))
    offer = may(person, *REPORTERS)
    html = render(
        "workspace/reports_list.html",
        title=f"Reports: {title}",
        link=request.app.state.publisher.local_href,
        evaluation_id=evaluation_id,
        evaluation_title=title,
        current="reports",
        states=states,
        checked=checked,
        verification=verification,
        made=made,
        offer=offer,
        runs=list_runs(graphs, evaluation_id) if offer else [],
        form=form,
        error=error,
        fitness=FITNESS,
        **FORMAT,
    )
    return HTMLResponse(html, status_code=status)


@router.get("", response_class=HTMLResponse)
async def reports_page(
    evaluation_id: str,
    request: Request,
    graphs: GraphsDep,
    _: ReaderDep,
    person: PagePerson,
    verify: int | None = None,
    made: int | None = None,
) -> HTMLResponse:
    return await run_in_threadpool(_listing, request, graphs, evaluation_id, person, ReportForm(), verify, made)


@router.post("")
async def make(
    evaluation_id: str, request: Request, graphs: GraphsDep, person: FormWriter, form: Annotated[ReportForm, Form()]
) -> Response:
    async def act() -> Report:
        body = ReportBody.model_validate(form.body())
        return await run_in_threadpool(
            make_report,
            graphs,
            evaluation_id,
            body.run,
            body.limitations,
            body.recommendations,
            body.fitness,
            person.credential,
        )

    report = await attempt(act, LABELS)
    if isinstance(report, Refused):
        return await run_in_threadpool(
            _listing, request, graphs, evaluation_id, person, form, None, None, report.message, report.status
        )
    made = report.number
    return RedirectResponse(
        f"/evaluations/{evaluation_id}/workspace/reports?made={made}#report-{made}", status_code=303
    )


async def _sign(
    kind: str, evaluation_id: str, number: int, request: Request, graphs: GraphService, person: Person, comment: str
) -> Response:
    """Sign-off or acceptance through :func:`service.reports.signoffs.sign`, back to the report page."""

    async def act() -> object:
        body = ReportSignOffBody.model_validate({"comment": comment.strip() or None})
        return await run_in_threadpool(
            sign, graphs, evaluation_id, number, kind, body.comment, person.credential, signer(request)
        )

    signed = await attempt(act, LABELS)
    if isinstance(signed, Refused):
        return await report_page_response(
            request,
            graphs,
            evaluation_id,
            number,
            person.credential,
            refused=kind,
            error=signed.message,
            comment=comment,
            status=signed.status,
        )
    back = f"/evaluations/{evaluation_id}/reports/{number}/page"
    return RedirectResponse(f"{back}?done={kind}#sign-offs", status_code=303)


@router.post("/{number}/sign-off")
async def sign_off(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    person: FormWriter,
    comment: Annotated[str, Form()] = "",
) -> Response:
    return await _sign("sign-off", evaluation_id, number, request, graphs, person, comment)


@router.post("/{number}/acceptance")
async def acceptance(
    evaluation_id: str,
    number: int,
    request: Request,
    graphs: GraphsDep,
    person: FormWriter,
    comment: Annotated[str, Form()] = "",
) -> Response:
    return await _sign("acceptance", evaluation_id, number, request, graphs, person, comment)
