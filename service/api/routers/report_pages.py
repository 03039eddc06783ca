"""A report's page for people (``/evaluations/{id}/reports/{n}/page``): headline figures with coverage apart from
performance, server-drawn charts, failures traced to their requirements, the untested part of the envelope, the
drill-down to each case, sign-offs; printable (``static/print.css``). The report's IRI itself negotiates RDF and
JSON (routers/reports.py). Its failure-point map (``…/reports/{n}/failure-map``): the envelope's requirement tree
with each criterion's outcome as the report states it and its weight."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TypedDict

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from ...core.config import Credential
from ...core.graphs import GraphService
from ...core.iris import minted_number
from ...core.rdf import local_name
from ...envelope import iris_for
from ...reports.failure_map import failure_map
from ...reports.kept import kept
from ...reports.page import ReportPage, report_page
from ...reports.records import record_digests
from ..deps import GraphsDep, ReaderDep
from ..guarded import computed
from ..html import render
from ..sessions import page_person
from ..signing import signing

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["reports"])

FITNESS = {"FitToDeploy": "fit to deploy", "FitWithConditions": "fit with conditions", "NotFit": "not fit"}


def percent(value: Decimal | float | None) -> str:
    """A fraction as a percentage with up to two decimals (``52.74%``, ``100%``); ``—`` when undefined."""
    if value is None:
        return "—"
    text = format((Decimal(str(value)) * 100).quantize(Decimal("0.01")).normalize(), "f")
    return f"{text}%"


def exact(value: Decimal | int) -> str:
    """A count or weight as recorded (``38.5``, ``73``)."""
    return format(Decimal(value).normalize(), "f") if isinstance(value, Decimal) else str(value)


class Format(TypedDict):
    """What the report and comparison templates format numbers and outcomes with."""

    percent: Callable[[Decimal | float | None], str]
    exact: Callable[[Decimal | int], str]
    outcome: Callable[[str], str]
    short: Callable[[str], str]


FORMAT = Format(percent=percent, exact=exact, outcome=local_name, short=local_name)


async def report_page_response(
    request: Request,
    graphs: GraphService,
    evaluation_id: str,
    number: int,
    reader: Credential | None,
    *,
    refused: str | None = None,
    error: str | None = None,
    comment: str = "",
    status: int = 200,
) -> HTMLResponse:
    """Report ``number``'s page; also what its IRI could answer a browser with (routers/reports.py). With the
    sign-off forms the signed-in person may use, and a form's refusal (``refused``: which; ``error``: why)."""
    link = request.app.state.publisher.local_href

    def read() -> tuple[ReportPage, Markup]:
        evaluation = iris_for(graphs, evaluation_id).evaluation
        digests = record_digests(graphs, evaluation)  # read once for both: 25 to 60 ms at 100,000 determinations
        page = report_page(graphs, evaluation_id, number, digests)
        # the drill-down is most of the page (0.5 MB, 40 ms of rendering at 100,000 determinations) and the same
        # for every reader: rendered once per record state
        drill = kept(
            graphs,
            evaluation,
            ("page-drill", number),
            lambda: Markup(render("report_drill.html", title="", link=link, page=page, **FORMAT)),
            digests,
        )
        return page, drill

    page, drill = await computed(request, reader, read)
    forms = signing(
        evaluation_id, page.report, page_person(), request.query_params.get("done"), refused, error, comment
    )
    report_path = f"/evaluations/{evaluation_id}/reports/{number}"
    identifiers = {state.criterion: state.identifier for state in page.criteria}
    html = render(
        "report.html",
        title=f"Report {number}: {page.report.basis.scope.target_name}",
        link=link,
        path=report_path,
        scripts=["alternates.js"],
        page=page,
        drill=drill,
        report_path=report_path,
        evaluation_path=f"/evaluations/{evaluation_id}",
        run_path=f"/evaluations/{evaluation_id}/runs/{minted_number(page.report.basis.run)}",
        identifiers=identifiers,
        fitness=FITNESS.get(local_name(page.report.statement.fitness), "—"),
        signing=forms,
        reports_path=f"/evaluations/{evaluation_id}/workspace/reports",
        **FORMAT,
    )
    return HTMLResponse(html, status_code=status, headers={"Vary": "Accept"})


@router.get(
    "/reports/{number}/page",
    response_class=HTMLResponse,
    summary="The report as a page a sponsor reads: coverage apart from performance, charts, failures, gaps, "
    "drill-down; printable",
)
async def get_report_page(
    evaluation_id: str, number: int, request: Request, graphs: GraphsDep, reader: ReaderDep
) -> HTMLResponse:
    return await report_page_response(request, graphs, evaluation_id, number, reader)


@router.get(
    "/reports/{number}/failure-map",
    response_class=HTMLResponse,
    summary="The report's failure-point map: the envelope's requirement tree, each criterion with its weight "
    "and its outcome as the report states it (untested and not applicable marked)",
)
async def get_failure_map(
    evaluation_id: str, number: int, request: Request, graphs: GraphsDep, reader: ReaderDep
) -> HTMLResponse:
    found = await computed(request, reader, lambda: failure_map(graphs, evaluation_id, number))
    html = render(
        "failure_map.html",
        title=f"Failure-point map of report {number}: {found.target_name}",
        link=request.app.state.publisher.local_href,
        page=found,
        report_path=f"/evaluations/{evaluation_id}/reports/{number}",
        evaluation_path=f"/evaluations/{evaluation_id}",
        **FORMAT,
    )
    return HTMLResponse(html)
