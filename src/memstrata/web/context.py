"""What every request handler of `memstrata serve` shares: the store, who is asking.

One `Store` is opened when the server starts (opening syncs the index); each
request acts through `store.acting_as(agent, room)` for its identity, a cheap view
sharing the index connection, locks and events (cached per identity).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import ScopeDenied
from memstrata.files.versions import set_surface
from memstrata.values import field, value_type
from memstrata.web.identity import Identities, Identity

if TYPE_CHECKING:
    from starlette.requests import Request

    from memstrata.store.view import Store

IDENTITY_KEY = "memstrata.identity"


@value_type
class ServeContext:
    store: Store
    identities: Identities
    tools: list[str] | None = None
    verify_root: Path = field(default_factory=Path.cwd)  # where `verify` checks code claims
    _views: dict[tuple[str | None, str | None], Store] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def store_for(self, who: Identity) -> Store:
        key = (who.agent, who.room)
        with self._guard:
            view = self._views.get(key)
            if view is None:
                view = self.store.acting_as(who.agent, who.room)
                self._views[key] = view
            return view


def context_of(request: Request) -> ServeContext:
    ctx: Any = request.app.state.memstrata
    assert isinstance(ctx, ServeContext)
    return ctx


def identity_of(request: Request) -> Identity:
    who = request.scope.get(IDENTITY_KEY)
    if not isinstance(who, Identity):
        raise ScopeDenied("not signed in: send 'Authorization: Bearer <token>' or log in")
    return who


def store_of(request: Request) -> Store:
    """The store acting as this request's principal (its writes' versions say "api" or
    "web": `files.versions.surface`)."""
    set_surface("api" if request.url.path.startswith("/api/") else "web")
    return context_of(request).store_for(identity_of(request))
