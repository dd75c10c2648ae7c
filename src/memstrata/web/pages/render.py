"""Rendering pages: one Jinja2 environment with autoescape on, so memory text (untrusted:
an entry may hold `<script>`) always reaches the browser as text; forms get the CSRF
token; every page shows whom the request acts as (the scope the API enforces).

Secrets: every value a template prints passes `policy.secrets.mask` (the environment's
`finalize`), so a page shows `[withheld: <kind>]` as an agent would see it, and says so
with a link to `/reveal`; after a confirmed reveal (a signed cookie, `web.identity`)
pages show values as stored, with a banner, for a few minutes. A form saved from a
withheld view keeps the secrets it hid (`policy.secrets.restore_withheld`). After a save
that stored something that looks like a secret (`web.notices`), the page says so."""

from __future__ import annotations

import functools
import json
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from memstrata.errors import MalformedInput
from memstrata.model import iso, parse_ts
from memstrata.policy.secrets import KINDS, holds_secrets, mask
from memstrata.values import field, value_type
from memstrata.web.context import IDENTITY_KEY, context_of
from memstrata.web.identity import REVEAL_COOKIE
from memstrata.web.notices import QUERY_KEY
from memstrata.web.pages.links import anchor, history_href, href

if TYPE_CHECKING:
    from jinja2 import Environment
    from starlette.requests import Request
    from starlette.responses import Response


WITHHELD_SLOT = "<!--memstrata:withheld-->"  # base.html: where the withheld notice goes


@value_type
class _Showing:
    """How the page being rendered shows secrets, and how many values it withheld."""

    reveal: bool = False
    withheld: int = 0
    clean: set[str] = field(default_factory=set)  # values printed already, seen to hold none


_showing: ContextVar[_Showing | None] = ContextVar("memstrata_page_showing", default=None)
SHORTEST_SECRET = 8  # `a://:p@h`, a URL password, is the shortest span `secretscan` withholds


def _finalize(value: Any) -> Any:
    """Every printed value: secrets withheld unless this page is revealed. A page prints
    many values twice (a badge, an agent, a link), and many short ones (a time, an id):
    those are looked at once, or not at all."""
    if not isinstance(value, str) or len(value) < SHORTEST_SECRET:
        return value
    showing = _showing.get()
    if showing is not None and (showing.reveal or value in showing.clean):
        return value
    masked = mask(value)
    if masked == value:
        if showing is not None:
            showing.clean.add(value)
        return value
    if showing is not None:
        showing.withheld += 1
    from markupsafe import Markup

    return Markup(masked) if isinstance(value, Markup) else masked


@functools.cache
def environment() -> Environment:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("memstrata.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.globals["holds_secrets"] = holds_secrets
    env.globals["anchor"] = anchor
    env.globals["href"] = href
    env.globals["history_href"] = history_href
    env.filters["when"] = _when
    env.filters["clock"] = lambda ts: _when(ts)[11:19]
    env.filters["day"] = lambda ts: _when(ts)[:10]
    env.filters["bytes"] = _bytes
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


def _bytes(n: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _ago(ts: float | str) -> str:
    if isinstance(ts, str):
        try:
            ts = parse_ts(ts)
        except MalformedInput:
            return str(ts)
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

    ctx = context_of(request)
    who = request.scope.get(IDENTITY_KEY)
    principal = ctx.store_for(who).principal if who is not None else None
    until = ctx.identities.revealing_until(who, request.cookies.get(REVEAL_COOKIE))
    stored = [k for k in request.query_params.get(QUERY_KEY, "").split(",") if k in KINDS]
    showing = _Showing(reveal=until is not None)
    token = _showing.set(showing)
    try:
        html = (
            environment()
            .get_template(template)
            .render(
                request=request,
                who=who,
                principal=principal,
                open_server=ctx.identities.open,
                csrf=ctx.identities.csrf_token(who),
                revealing_until=until,
                here=_here(request),
                stored_secret=stored,
                **values,
            )
        )
        if showing.withheld:
            notice = environment().get_template("_withheld.html").render(here=_here(request))
            html = html.replace(WITHHELD_SLOT, notice, 1)
    finally:
        _showing.reset(token)
    return HTMLResponse(html, status_code=status, headers=headers)


def _here(request: Request) -> str:
    """This page's path and query, as a `next=` value (without the save notice)."""
    query = "&".join(
        f"{quote(k)}={quote(v)}" for k, v in request.query_params.multi_items() if k != QUERY_KEY
    )
    return request.url.path + (f"?{query}" if query else "")


def error_page(
    request: Request, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    return page(request, "error.html", status, headers, code=code, message=message)
