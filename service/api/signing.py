"""What a report's page offers the signed-in person (issue 24 §6): the domain expert's sign-off form while the
report is not signed off, the organizational expert's acceptance form once it is and until it is accepted.

A form is shown only to whom :func:`service.reports.signoffs.sign` would let act (its role, or admin); posting it
still goes through that function, which checks the role, the order and that the report verifies
(routers/workspace_reports.py). Used by the report page (routers/report_pages.py) and the routes its forms post to.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.people import Person
from ..core.roles import ADMIN
from ..reports.model import Report
from ..reports.signoffs import SIGNERS

STATES = {"draft": "made, not signed off", "signed": "signed off, not accepted", "final": "accepted: final"}
"""A report's :attr:`~service.reports.model.Report.status` in words."""
NOTICES = {
    "sign-off": "Your sign-off is recorded: the report is signed off.",
    "acceptance": "Your acceptance is recorded: the report is final.",
}
"""What a page says after a form succeeded (``?done=…``, Post/Redirect/Get)."""


def may(person: Person | None, *roles: str) -> bool:
    """Whether ``person`` holds one of ``roles`` or admin, as :func:`service.core.auth.require` asks."""
    return person is not None and bool(person.roles & {*roles, ADMIN})


@dataclass(frozen=True)
class Signing:
    """The sign-off part of a report's page: which form it shows, where the forms post, and after a post the
    notice or the refusal (with the statement sent, to send again)."""

    action: str
    """The path the forms post to: ``…/workspace/reports/{n}``, then ``/sign-off`` or ``/acceptance``."""
    sign: bool
    accept: bool
    awaits_sign_off: bool
    """An organizational expert reads the report before the domain expert signed it: nothing to accept yet."""
    notice: str | None = None
    refused: str | None = None
    """The form refused (``sign-off`` or ``acceptance``) and why, in :attr:`error`."""
    error: str | None = None
    comment: str = ""

    @property
    def error_apart(self) -> str | None:
        """A refusal of a form the page no longer offers (the report moved on meanwhile): shown on its own."""
        offered = {"sign-off": self.sign, "acceptance": self.accept}
        return self.error if self.refused and not offered.get(self.refused) else None


def signing(
    evaluation_id: str,
    report: Report,
    person: Person | None,
    done: str | None = None,
    refused: str | None = None,
    error: str | None = None,
    comment: str = "",
) -> Signing:
    """The forms ``person`` is offered on ``report``'s page."""
    signer, accepter = may(person, SIGNERS["sign-off"]), may(person, SIGNERS["acceptance"])
    return Signing(
        action=f"/evaluations/{evaluation_id}/workspace/reports/{report.number}",
        sign=signer and report.sign_off is None,
        accept=accepter and report.sign_off is not None and report.acceptance is None,
        awaits_sign_off=accepter and report.sign_off is None,
        notice=NOTICES.get(done or ""),
        refused=refused,
        error=error,
        comment=comment,
    )
