"""The errors of the lookup service's requests, their HTTP status, and the JSON of an error
answer (``{"error": {"type": ..., "message": ...}}``, see docs/service.md, "Errors")."""
from __future__ import annotations

import reprlib
from typing import Any

import pydantic_core

from irscale.errors import CorruptStoreError, IrscaleError, TableNotFoundError
from irscale.service.limits import MAX_QUOTED


class RequestError(IrscaleError, ValueError):
    """A request that is valid JSON but not a valid request (HTTP 422), or asks for more
    work than the service does at once (422, naming the limit); ``details`` lists
    validation problems as ``{"loc": ..., "message": ...}``."""

    def __init__(self, message: str, details: list | None = None):
        super().__init__(message)
        self.details = details


class InvalidJSONError(RequestError):
    """The request body is not JSON (HTTP 400)."""


class PayloadTooLargeError(IrscaleError):
    """A request body, or a list of it, larger than the service reads (HTTP 413)."""


_STATUS = ((InvalidJSONError, 400), (TableNotFoundError, 404), (PayloadTooLargeError, 413), (CorruptStoreError, 500))


def status_of(error: IrscaleError) -> int:
    """HTTP status of an error: 400, 404 or 413 for the kinds above, 500 for a damaged
    table (the server's problem, not the request's), else 422."""
    return next((status for kind, status in _STATUS if isinstance(error, kind)), 422)


def error_body(kind: str, message: str, details: list | None = None) -> bytes:
    """The JSON of an error answer (see docs/service.md)."""
    error: dict[str, Any] = {"type": kind, "message": message}
    if details:
        error["details"] = details
    return pydantic_core.to_json({"error": error})


_QUOTE = reprlib.Repr()
_QUOTE.maxstring = _QUOTE.maxother = _QUOTE.maxlong = MAX_QUOTED


def short(value: Any) -> str:
    """The repr of ``value`` cut to about :data:`MAX_QUOTED` characters (lists to their
    first items): what a message quotes of a request is bounded, whatever the client sends."""
    return _QUOTE.repr(value)
