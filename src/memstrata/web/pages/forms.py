"""What the page handlers share: the CSRF check on every state-changing form, redirects."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.web.context import IDENTITY_KEY, context_of

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response


def require_csrf(request: Request, token: str) -> None:
    from fastapi import HTTPException

    if not context_of(request).identities.check_csrf(request.scope.get(IDENTITY_KEY), token):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page")


def back(url: str) -> Response:
    from fastapi.responses import RedirectResponse

    return RedirectResponse(url, status_code=303)
