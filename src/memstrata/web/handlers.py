"""Errors as HTTP answers: JSON `{"error": {"code", "message"}}` under `/api`, an HTML page
elsewhere, with the status `web.errors` gives each typed error."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from memstrata.errors import MemstrataError
from memstrata.web.errors import error_body, translate
from memstrata.web.pages.render import error_page

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from starlette.responses import Response

log = logging.getLogger("memstrata.serve")
HTTP_CODES = {
    400: "invalid_input",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "entry_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
}


def _answer(
    request: Request, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response:
    from fastapi.responses import JSONResponse

    if request.url.path.startswith("/api"):
        return JSONResponse(body, status_code=status, headers=headers)

    return error_page(request, status, body["error"]["code"], body["error"]["message"], headers)


def install_error_handlers(app: FastAPI) -> None:
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    async def library(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, MemstrataError)
        status, body, headers = translate(exc)
        return _answer(request, status, body, headers)

    async def http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
        return _answer(
            request, exc.status_code, error_body(code, str(exc.detail)), dict(exc.headers or {})
        )

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = [
            {"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in exc.errors()[:20]
        ]
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        message = f"{'.'.join(first['loc'])}: {first['msg']}"
        return _answer(request, 422, error_body("invalid_request", message, details=errors))

    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("memstrata serve: %s %s failed", request.method, request.url.path)
        return _answer(
            request,
            500,
            error_body(
                "internal_error", "the server failed on this request (its log has the details)"
            ),
        )

    app.add_exception_handler(MemstrataError, library)
    app.add_exception_handler(HTTPException, http)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(Exception, unexpected)
