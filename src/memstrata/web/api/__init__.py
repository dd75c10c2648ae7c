"""The JSON API of `memstrata serve`, under `/api`, documented at `/api/openapi.json`.

One router per area; every handler is a plain (threaded) function that calls the
library as the request's principal (`context.store_of`) and returns what it gets,
as JSON. Handlers translate and never decide: scope, bounds and validation happen
in the library, and its typed errors become HTTP statuses in one place
(`web.errors`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import APIRouter


def build_router() -> APIRouter:
    from fastapi import APIRouter

    from memstrata.web.api import admin, agents, ledger, records, search, versions

    router = APIRouter(prefix="/api")
    for module in (search, agents, versions, records, ledger, admin):
        router.include_router(module.router)
    return router
