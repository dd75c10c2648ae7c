"""Scope: the one place that decides who may read or write which memory (seed 004).

| role    | can read                                   | can write                |
|---------|--------------------------------------------|--------------------------|
| admin   | all memory                                 | all memory               |
| project | own agent + admin agents + shared layers + | own agent + shared layers|
|         | its own room's channel and artifacts       | + its own room           |
| skill   | nothing (context is passed to it)          | nothing                  |

Every layer method calls `Gate.check` before touching a file, and every index
query adds `Gate.sql_filter`, so there is no read path that skips scope.
"""

from __future__ import annotations

from memstrata.config import Config
from memstrata.errors import ScopeDenied
from memstrata.model import Principal

SHARED_LAYERS = frozenset({"ledger", "item"})
ROOM_LAYERS = frozenset({"channel", "artifact"})


class Gate:
    def __init__(self, principal: Principal, config: Config) -> None:
        self.principal = principal
        self._admins = frozenset(config.admins)

    def allows(self, action: str, layer: str, owner: str | None, room: str | None = None) -> bool:
        p = self.principal
        if p.role == "admin":
            return True
        if p.role == "skill":
            return False
        if layer in SHARED_LAYERS:
            return True
        if layer in ROOM_LAYERS:
            return room is not None and room == p.room
        if owner is None:
            return False
        if owner == p.agent:
            return True
        return action == "read" and owner in self._admins

    def check(self, action: str, layer: str, owner: str | None, room: str | None = None) -> None:
        if not self.allows(action, layer, owner, room):
            who = self.principal.agent or "anonymous"
            target = f"{layer} of {owner}" if owner else (f"{layer} of room {room}" if room else layer)
            raise ScopeDenied(
                f"{who} ({self.principal.role}) may not {action} {target}"
            )

    def sql_filter(self, alias: str = "d") -> tuple[str, list[object]]:
        """A WHERE fragment restricting index rows to what the principal may read."""
        p = self.principal
        if p.role == "admin":
            return "1", []
        if p.role == "skill":
            return "0", []
        shared = ",".join(f"'{x}'" for x in sorted(SHARED_LAYERS))
        rooms = ",".join(f"'{x}'" for x in sorted(ROOM_LAYERS))
        owners = [p.agent, *sorted(self._admins)]
        marks = ",".join("?" for _ in owners)
        sql = (
            f"({alias}.layer IN ({shared}) OR ({alias}.layer IN ({rooms}) AND {alias}.room = ?)"
            f" OR ({alias}.layer NOT IN ({shared},{rooms}) AND {alias}.owner IN ({marks})))"
        )
        return sql, [p.room, *owners]
