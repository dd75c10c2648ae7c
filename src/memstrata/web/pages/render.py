"""Rendering pages: one Jinja2 environment with autoescape on, so memory text (untrusted:
an entry may hold `<script>`) always reaches the browser as text; forms get the CSRF
token; every page shows whom the request acts as (the scope the API enforces)."""

from __future__ import annotations

import functools
import json
import time
from typing import TYPE_CHECKING, Any

from memstrata.model import iso
from memstrata.web.context import context_of

if TYPE_CHECKING:
    from jinja2 import Environment
    from starlette.requests import Request
    from starlette.responses import Response


@functools.cache
def environment() -> Environment:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("memstrata.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["ago"] = _ago
    env.filters["pct"] = lambda v: f"{100 * float(v):.0f}%"
    env.filters["tojson_pretty"] = lambda v: json.dumps(
        v, indent=2, ensure_ascii=False, default=str
    )
    return env


def _when(ts: Any) -> str:
    if isinstance(ts, int | float):
        return iso(float(ts))[:19].replace("T", " ")
    return str(ts or "")[:19].replace("T", " ")


def _ago(ts: float) -> str:
    s = max(0.0, time.time() - float(ts))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            return f"{s / size:.0f} {unit} ago"
    return "just now"


def page(
    request: Request,
    template: str,
    status: int = 200,
    headers: dict[str, str] | None = None,
    **values: Any,
) -> Response:
    from fastapi.responses import HTMLResponse

    from memstrata.web.context import IDENTITY_KEY

    ctx = context_of(request)
    who = request.scope.get(IDENTITY_KEY)
    principal = ctx.store_for(who).principal if who is not None else None
    html = (
        environment()
        .get_template(template)
        .render(
            request=request,
            who=who,
            principal=principal,
            open_server=ctx.identities.open,
            csrf=ctx.identities.csrf_token(who),
            **values,
        )
    )
    return HTMLResponse(html, status_code=status, headers=headers)


def error_page(
    request: Request, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    return page(request, "error.html", status, headers, code=code, message=message)
