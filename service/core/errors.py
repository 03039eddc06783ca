"""The service's error hierarchy. The HTTP layer maps each class to one status code, in one place."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error the service reports to its caller; ``detail`` is shown as-is."""

    def __init__(self, message: str, *, detail: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class BadRequest(ServiceError):
    """The input cannot be read: malformed syntax, a missing parameter (400)."""


class Unauthenticated(ServiceError):
    """No valid credential was given (401)."""


class Forbidden(ServiceError):
    """The credential's roles do not allow the action (403)."""


class NotFound(ServiceError):
    """The resource or graph does not exist (404)."""


class NotAcceptable(ServiceError):
    """No representation the client accepts can be produced (406)."""


class Conflict(ServiceError):
    """The action contradicts the current state, e.g. changing an approved envelope (409)."""


class PayloadTooLarge(ServiceError):
    """The request body exceeds the configured limit (413)."""


class UnsupportedMediaType(ServiceError):
    """The body's media type is not one the endpoint reads (415)."""


class Unprocessable(ServiceError):
    """The input parses but is invalid, e.g. a knowledge graph that violates its DSO (422)."""


class StoreUnavailable(ServiceError):
    """The backing triple store did not answer or failed (503)."""


class Misconfigured(ServiceError):
    """The deployment's configuration cannot be used (a people file with a bad entry); found at start."""


class Cancelled(ServiceError):
    """Long work stopped at a checkpoint because its client went away or the service is stopping.

    Python cannot interrupt a thread, so work run in one checks for this between steps and stops there.
    """


class QueryLimitExceeded(ServiceError):
    """A client's query was stopped at a configured limit (time, result size, memory): 500, as the SPARQL 1.1
    Protocol has it for a query the service refuses to complete (§2.1.5). Not 503: the same query fails the
    same way when retried, so there is no Retry-After to give. ``limit`` names the limit, ``value`` its setting."""

    def __init__(self, message: str, *, limit: str, value: float) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value


class QueryWorkerCrashed(ServiceError):
    """The process running a client's query died of something other than a limit (a signal such as SIGSEGV): a
    fault of ours or of the engine, so 500, and never reported as a limit the query did not reach."""


class TooManyRequests(ServiceError):
    """The service already does as much of this at once as it may (429); ``retry_after`` is the seconds to wait
    before trying again."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TooManyQueries(TooManyRequests):
    """The client already runs as many queries at once as it may, or every query worker is busy (429)."""
