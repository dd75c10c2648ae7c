"""A principal over a shared store: what `Store.acting_as` returns (see there)."""

from __future__ import annotations

from typing import Any

from memstrata.model import Principal, check_name
from memstrata.policy.scope import Gate, resolve_role
from memstrata.store.engine import Store


class ActingStore(Store):
    """A principal over a shared store (`Store.acting_as`).

    Only the principal, its gate and its face of the event bus belong to this
    object; every other attribute is read from and written to the store it came
    from, so state such as the index connection, the stale flag and background
    jobs is one for all principals. Nothing is opened, synced or closed here.
    """

    _OWN = frozenset({"_root", "principal", "gate", "events"})
    _root: Store

    def __init__(
        self, root: Store, agent: str | None, room: str | None, role: str | None
    ) -> None:  # no super().__init__(): nothing to open
        root = root._root if isinstance(root, ActingStore) else root
        if agent is not None:
            check_name(agent, "agent")
        if room is not None:
            check_name(room, "room")
        principal = Principal(agent=agent, role=resolve_role(root.config, agent, role), room=room)
        root.db  # noqa: B018 - opened by the root, so its freshness hooks are the root's
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "principal", principal)
        object.__setattr__(self, "gate", Gate(principal, root.config))
        object.__setattr__(self, "events", root.events.as_agent(agent))

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_root"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._root, name, value)

    def acting_as(
        self, agent: str | None, room: str | None = None, *, role: str | None = None
    ) -> Store:
        return ActingStore(self._root, agent, room, role)

    def close(self) -> None:
        """The store this came from owns the resources and closes them."""
