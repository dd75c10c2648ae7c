"""Scope: the one place that decides who may read or write which memory.

| role    | can read                                   | can write                |
|---------|--------------------------------------------|--------------------------|
| admin   | all memory                                 | all memory               |
| project | own agent + admin agents + shared layers + | own agent + shared layers|
|         | its own room's channel + every room's      | + its own room           |
|         | artifacts ("all agents via filesystem")    |                          |
| skill   | nothing (context is passed to it)          | nothing                  |

Every layer method calls `Gate.check` before touching a file, and every index
query adds `Gate.sql_filter`, so there is no read path that skips scope.

Roles come from the store's configuration (`[roles]`), never from the caller: a
caller may ask for a *lower* role (`--role skill`), never a higher one. The
anonymous principal (no agent name) is the person at the terminal who owns the
files, and is admin.

The shared ledger adds two rules of its own (a room must not be able
to erase another room's decision):

* **Who may supersede.** Admins may supersede any entry. A project agent may
  supersede an entry of its own room, or a room-less entry it wrote itself, and
  never an entry written by an admin (or by no one: an unattributed entry is
  treated as an admin's). Skills write nothing.
* **Who is the author.** `author_role` is the acting agent's identity, `room_id`
  its room and `ts` the time of publishing; only an admin may set them otherwise.

Ledger entries that look like they hold a secret (`docs.secret`, see `policy.secrets`)
are hidden from every room but their own (admins see them for audit), unless
`[secrets] share_in_ledger = true`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput, ScopeDenied, SupersedeDenied
from memstrata.model import ROLES, Principal, Role

if TYPE_CHECKING:
    from memstrata.config import Config
    from memstrata.model import LedgerEntry

SHARED_LAYERS = frozenset({"ledger", "item", "source"})
ROOM_LAYERS = frozenset({"channel", "artifact"})
# Room layers every agent may read; only the room's own agents write them.
ROOM_READABLE = frozenset({"artifact"})
# Shared layers only admins write: extracted knowledge is pipeline-only (a write
# rule of its own: `lifecycle.extraction` writes it as the pipeline), indexed sources are the
# project's own files.
ADMIN_WRITTEN = frozenset({"item", "source"})
_RANK = {"skill": 0, "project": 1, "admin": 2}


def resolve_role(config: Config, agent: str | None, requested: str | None) -> Role:
    """The role a principal acts with: the configured one, or a lower one it asks for.

    Example:
        >>> from memstrata.config import Config
        >>> resolve_role(Config(admins=("wilco",)), "finn", "skill")
        'skill'
    """
    configured = config.role_of(agent)
    if requested is None:
        return configured  # type: ignore[return-value]
    if requested not in ROLES:
        raise MalformedInput(f"unknown role {requested!r}; roles are {', '.join(ROLES)}")
    if _RANK[requested] > _RANK[configured]:
        who = agent or "anonymous"
        raise ScopeDenied(
            f"{who} is {configured} in this store's config and cannot act as {requested}: "
            "roles come from [roles] in config.toml, a caller may only lower its own"
        )
    return requested  # type: ignore[return-value]


class Gate:
    def __init__(self, principal: Principal, config: Config) -> None:
        self.principal = principal
        self._admins = frozenset(config.admins)
        self._share_secrets = config.secrets_share_in_ledger

    def allows(self, action: str, layer: str, owner: str | None, room: str | None = None) -> bool:
        p = self.principal
        if p.role == "admin":
            return True
        if p.role == "skill":
            return False
        if layer in SHARED_LAYERS:
            return action == "read" or layer not in ADMIN_WRITTEN
        if layer in ROOM_LAYERS:
            return (action == "read" and layer in ROOM_READABLE) or (
                room is not None and room == p.room
            )
        if owner is None:
            return False
        if owner == p.agent:
            return True
        return action == "read" and owner in self._admins

    def hides_secret(self, room: str | None) -> bool:
        """True when a ledger entry of `room` that looks like a secret is hidden from us."""
        p = self.principal
        return p.role != "admin" and not self._share_secrets and room != p.room

    def check(self, action: str, layer: str, owner: str | None, room: str | None = None) -> None:
        if not self.allows(action, layer, owner, room):
            who = self.principal.agent or "anonymous"
            target = (
                f"{layer} of {owner}" if owner else (f"{layer} of room {room}" if room else layer)
            )
            raise ScopeDenied(f"{who} ({self.principal.role}) may not {action} {target}")

    # -- the ledger's own rules ------------------------------------------------
    def may_supersede(self, target: LedgerEntry) -> bool:
        p = self.principal
        if p.role == "admin":
            return True
        if p.role != "project":
            return False
        author = target.author_role
        if author is None or author in self._admins:
            return False
        if target.room_id is not None:
            return target.room_id == p.room
        return p.agent is not None and author == p.agent

    def check_supersede(self, target: LedgerEntry) -> None:
        """Raise `SupersedeDenied` unless the principal may hide `target` (see module doc)."""
        self.check("write", "ledger", None)
        if self.may_supersede(target):
            return
        who = self.principal.agent or "anonymous"
        if target.author_role is None or target.author_role in self._admins:
            why = "it was written by an admin"
        elif target.room_id is not None:
            why = f"it belongs to room {target.room_id}"
        else:
            why = f"it is a room-less entry written by {target.author_role}"
        raise SupersedeDenied(
            f"{who} ({self.principal.role}, room {self.principal.room or '-'}) may not supersede "
            f"{target.id}: {why}; only that room's agents and admins may"
        )

    def author(self, requested: str | None) -> str | None:
        """The `author_role` to record: the acting agent, unless an admin names another."""
        p = self.principal
        if requested is None or requested == p.agent:
            return p.agent
        if p.role == "admin":
            return requested
        raise ScopeDenied(
            f"{p.agent or 'anonymous'} ({p.role}) may not publish as {requested!r}: "
            "author_role is the acting agent's identity (only an admin may set it)"
        )

    def ledger_room(self, requested: str | None) -> str | None:
        """The `room_id` to record: the principal's room, unless an admin names another
        (a room must not publish in another room's name)."""
        p = self.principal
        if requested is None or requested == p.room:
            return p.room
        if p.role == "admin":
            return requested
        raise ScopeDenied(
            f"{p.agent or 'anonymous'} ({p.role}, room {p.room or '-'}) may not publish as room "
            f"{requested!r}: room_id is the acting agent's room (only an admin may set it)"
        )

    def check_backdate(self) -> None:
        """Only an admin may choose a ledger entry's `ts` (an import, a migration): a future
        time would lift an entry above the time decay everyone else's entries get."""
        if self.principal.role != "admin":
            raise ScopeDenied(
                f"{self.principal.agent or 'anonymous'} ({self.principal.role}) may "
                "not set ts: a ledger entry is stamped when it is published"
            )

    def event_actors(self) -> frozenset[str | None] | None:
        """Whose memory events (`events.jsonl`) the principal may see: None for
        everyone's (admin), else only its own (a project agent), or none (a skill)."""
        p = self.principal
        if p.role == "admin":
            return None
        return frozenset({p.agent}) if p.role == "project" else frozenset()

    def sql_filter(self, alias: str = "d") -> tuple[str, list[object]]:
        """A WHERE fragment restricting index rows to what the principal may read."""
        p = self.principal
        if p.role == "admin":
            return "1", []
        if p.role == "skill":
            return "0", []
        shared = ",".join(f"'{x}'" for x in sorted(SHARED_LAYERS | ROOM_READABLE))
        rooms = ",".join(f"'{x}'" for x in sorted(ROOM_LAYERS))
        owners = [p.agent, *sorted(self._admins)]
        marks = ",".join("?" for _ in owners)
        sql = (
            f"({alias}.layer IN ({shared}) OR ({alias}.layer IN ({rooms}) AND {alias}.room = ?)"
            f" OR ({alias}.layer NOT IN ({shared},{rooms}) AND {alias}.owner IN ({marks})))"
        )
        params: list[object] = [p.room, *owners]
        if not self._share_secrets:
            sql = (
                f"({sql} AND NOT ({alias}.layer = 'ledger' AND {alias}.secret IS NOT NULL"
                f" AND {alias}.room IS NOT ?))"
            )
            params.append(p.room)
        return sql, params
