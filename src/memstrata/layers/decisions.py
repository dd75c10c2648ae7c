"""Decisions, constraints and preferences an agent records: the shared ledger, one rule.

    mem = store.agent("me")
    old = mem.decisions.record("Use WeasyPrint for the PDF export")
    new = mem.decisions.record("Use ReportLab: WeasyPrint needs pango", replaces="WeasyPrint")
    [e.summary for e in mem.decisions.in_force()]   # ['Use ReportLab: WeasyPrint needs pango']
    store.ledger.get(old.id).summary                # history: still readable by its id

A record is a ledger entry whose `kind` is `decision`, `constraint` or `preference`
(DESIGN-recall's vocabulary; the ledger accepts these three whatever `[kinds]` says, and
`constraint` and `preference` have no half-life: a rule in force does not fade). One
that replaces another names it in `supersedes`, and from then on the old one is
presented nowhere as current (search, ledger queries, the session-start context), while
it stays in `ledger.jsonl`, readable by id, for audit.

Why the ledger, and not a second mechanism (agent-private entries in a file of their
own, or LOG entries whose supersede the index would honour): the ledger already is
the record of decisions, with every rule this needs, each in one place:
append-only, never edited; soft delete by `supersedes`, checked under the ledger's lock
with at most one live successor per entry (`AlreadySuperseded` names the head); the
index's `superseded` flag, which every read path already leaves out; and the scope rule
of who may hide what (`policy.scope.Gate.may_supersede`: a project agent supersedes its own
room-less entries or its room's, never another agent's or an admin's). A LOG-based
record would meet what the ledger never does: LOG entries are compacted into archives
and digests, where a decision lives on as a "- Decision:" line that no supersede can
reach. A private file would copy each rule above and split one user's decisions among
the identities that write them (hooks, MCP, CLI). The price is visibility: these records
are project knowledge, as the memory policy files them (core decisions, constraints to respect,
the user's preferences), readable by the store's other agents like any ledger entry;
an agent's private notes belong in its CONTEXT.md, LOG or facts.

A single agent (no room) writes room-less entries authored by itself; an agent in a room
writes its room's. `in_force` lists the live records of the room-less ledger and of the
agent's own room (other rooms' come through the predecessor context).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memstrata.errors import NotFound, NotUnique, UnknownKind, UnknownSupersedes
from memstrata.index import overview
from memstrata.layers.ledger import Ledger
from memstrata.model import RECORD_KINDS, USER_REF, LedgerEntry

if TYPE_CHECKING:
    from memstrata.layers.base import Acting

# Ledger kinds that are rules in force too (the ledger's meaning kept): shown with the
# constraints in the context, and named by `replaces` like the three record kinds.
RULE_KINDS = ("convention", "warning")
_ID = re.compile(r"mem-[0-9a-f]{8}")
# `USER_REF` (model), the `ref` of a record `lifecycle.reversal` wrote from the user's
# change of plan: an agent that records the replacement itself, naming the record the
# user's words replaced, replaces the user's record (the chain stays old -> the user's words -> the agent's).
_WORD = re.compile(r"[^\W_]{3,}")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _alike(a: str, b: str) -> bool:
    """Most (80%) of the shorter text's words are in the other."""
    words, other = _words(a), _words(b)
    small = min(len(words), len(other))
    return bool(small) and len(words & other) >= max(1, round(0.8 * small))


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


class Decisions:
    """The decisions, constraints and preferences in force for one agent (see module doc)."""

    def __init__(self, acting: Acting, agent: str) -> None:
        self.acting = acting
        self.ledger = Ledger(acting)
        self.agent = agent

    def _check(self, action: str) -> None:
        """This handle acts for `agent`: its own principal (or an admin) only, like every
        per-agent layer; the ledger then applies its own rules (who may supersede what)."""
        self.acting.gate.check(action, "decisions", self.agent)

    def record(
        self,
        text: str,
        kind: str = "decision",
        *,
        replaces: str | None = None,
        tags: list[str] | tuple[str, ...] | None = None,
        detail: str | None = None,
        ref: str | None = None,
    ) -> LedgerEntry:
        """Record a decision (or constraint, preference) in one call; `replaces` names the
        earlier record it replaces, by id or by text (`resolve`).

        Raises:
            UnknownKind: `kind` is not a record kind. UnknownSupersedes / NotUnique:
            `replaces` matches no record in force, or several. SupersedeDenied: the
            replaced record is another agent's or room's.
        """
        self._check("write")
        if kind not in RECORD_KINDS:
            raise UnknownKind(f"unknown record kind {kind!r}; use {', '.join(RECORD_KINDS)}")
        target = self.resolve(replaces, kind).id if replaces is not None else None
        if target is not None:  # replaced since by the user's words: replace those instead
            after = {e.supersedes: e for e, _ in self.history((*RECORD_KINDS, *RULE_KINDS))}
            while target in after and (after[target].ref or "").startswith(USER_REF):
                target = after[target].id
        return self.ledger.publish(
            kind, text.strip(), tags=tags, detail=detail, ref=ref, supersedes=target
        )

    def in_force(self, kinds: tuple[str, ...] = RECORD_KINDS) -> list[LedgerEntry]:
        """Live records of `kinds`, room-less or of the agent's room, newest first."""
        return self._records(kinds, include_replaced=False)

    def tally(
        self, kinds: tuple[str, ...] = RECORD_KINDS, limit: int = 6
    ) -> tuple[list[LedgerEntry], dict[str, int]]:
        """The first `limit` records in force (those `in_force` lists), in the order of
        `kinds` and newest first within a kind, and how many of each kind are in force:
        one count and one page from the index, whatever the ledger's size."""
        self._check("read")
        known = set(self.acting.engine.config.kinds) | set(RECORD_KINDS)
        wanted = [k for k in kinds if k in known]
        shown, counts = overview.ledger_tally(
            self.acting.engine.db, self.acting.gate, wanted, self.acting.principal.room, limit
        )
        return [LedgerEntry.from_dict(r) for r in shown], counts

    def history(
        self, kinds: tuple[str, ...] = RECORD_KINDS
    ) -> list[tuple[LedgerEntry, str | None]]:
        """Every record of `kinds` (room-less or of the agent's room), newest first, each
        with the id of the record that replaced it (None: in force)."""
        entries = self._records(kinds, include_replaced=True)
        after = {e.supersedes: e.id for e in entries if e.supersedes}
        return [(e, after.get(e.id)) for e in entries]

    def _records(self, kinds: tuple[str, ...], *, include_replaced: bool) -> list[LedgerEntry]:
        """Every record of `kinds`, room-less or of the agent's room, newest first, from the
        index (`docs_layer_kind`): not the newest ledger entries of every room filtered
        afterwards, which lost a record behind 50 newer entries of other rooms."""
        return self._page(kinds, include_replaced=include_replaced, limit=None)

    def _page(
        self, kinds: tuple[str, ...], *, include_replaced: bool, limit: int | None
    ) -> list[LedgerEntry]:
        self._check("read")
        known = set(self.acting.engine.config.kinds) | set(RECORD_KINDS)
        wanted = [k for k in kinds if k in known]
        found = overview.ledger_records(
            self.acting.engine.db,
            self.acting.gate,
            wanted,
            self.acting.principal.room,
            live=not include_replaced,
            limit=limit,
        )
        return [LedgerEntry.from_dict(r) for r in found]

    def resolve(self, replaces: str, kind: str | None = None) -> LedgerEntry:
        """The record in force that `replaces` names: an entry id, else the one record whose
        summary holds the text (case and spacing aside), else all its words; a match of
        the same `kind` is preferred when the text matches records of several kinds."""
        self._check("read")
        wanted = replaces.strip()
        if _ID.fullmatch(wanted):
            try:
                return self.ledger.get(wanted)
            except NotFound:
                raise UnknownSupersedes(f"replaces: no ledger entry with id {wanted!r}") from None
        live = self.in_force((*RECORD_KINDS, *RULE_KINDS))
        flat, words = _flat(wanted), _words(wanted)
        found = [e for e in live if flat and flat in _flat(e.summary)]
        if not found and words:
            found = [e for e in live if words <= _words(e.summary)]
        if len(found) > 1 and kind is not None:
            same = [e for e in found if e.kind == kind]
            found = same or found
        if not found:
            raise UnknownSupersedes(
                f"replaces: no decision, constraint or preference in force matches {wanted!r} "
                "(pass the id of the record it replaces, e.g. mem-1a2b3c4d)"
            )
        if len(found) > 1:
            shown = "; ".join(f"{e.id} ({e.kind}): {e.summary[:80]}" for e in found[:5])
            raise NotUnique(
                f"replaces: {len(found)} records in force match {wanted!r}: {shown}; "
                "pass the id of the one it replaces"
            )
        return found[0]

    def similar(self, text: str, kind: str) -> LedgerEntry | None:
        """A live record of `kind` saying (nearly) the same as `text`, if any: most of the
        shorter one's words are in the other (a hook must not record a decision twice)."""
        self._check("read")
        return next((e for e in self.in_force((kind,)) if _alike(text, e.summary)), None)

    def known(self, text: str) -> bool:
        """True when a record of any kind, in force or replaced, says (nearly) `text`."""
        self._check("read")
        return any(_alike(text, e.summary) for e, _ in self.history((*RECORD_KINDS, *RULE_KINDS)))
