"""The web app of `memstrata serve`: server-rendered pages (Jinja2, autoescaped), plain
forms with CSRF tokens, a little JavaScript only for the live event stream and the API
explorer. Pages call the same library functions as the API, as the same principal."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import APIRouter


def build_pages() -> APIRouter:
    from fastapi import APIRouter

    from memstrata.web.pages import agent_pages, history_pages, shared_pages

    router = APIRouter(include_in_schema=False)
    router.include_router(shared_pages.router)
    router.include_router(agent_pages.router)
    router.include_router(history_pages.router)
    return router
