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


class Cancelled(ServiceError):
    """Long work stopped at a checkpoint because its client went away or the service is stopping.

    Python cannot interrupt a thread, so work run in one checks for this between steps and stops there.
    """
