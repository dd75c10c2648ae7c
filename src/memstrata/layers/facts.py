"""Key/value facts: `user_facts` and the typed durable facts.

`facts.jsonl` is an append-only journal of `set` and `forget` operations; the
current value of a key is its last `set` not followed by a `forget`. The index
keeps one row per live key, so `get` is a keyed lookup. Categories are the
user facts' (general, preference, personal, config) and the durable taxonomy (user,
feedback, project, reference).

The two are different layers sharing one journal, kept apart by category:

* user facts (general, preference, personal, config) are upserts:
  `set` on a live key replaces its value;
* repo-persistent facts (user, feedback, project, reference) are
  create-only ("only create is supported, no inline edits"): `set` refuses a key
  that is live with `AlreadyExists`, on every path (library, CLI, MCP, HTTP), and
  a user-fact upsert cannot overwrite a repo fact either. To change one, `forget` it
  and create it again (the journal keeps both), or supersede it by a new key.
  Every one is cited, 1-2 sentences and no save exclusion (git history, ephemeral
  task state, derivable code state), on every path too (`Refused` with the reason,
  `layers.durable.durable_fact_problem`); promotion adds the rest of Checklist C.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import AlreadyExists, MalformedInput, NotFound, Refused
from memstrata.files.jsonl import BadLine, decode, encode
from memstrata.index import queries
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer, check_count, check_text
from memstrata.layers.durable import durable_fact_problem
from memstrata.model import (
    DURABLE_CATEGORIES,
    FACT_CATEGORIES,
    Fact,
    check_plain,
    check_utf8,
    iso,
    now_ts,
    parse_ts,
)
from memstrata.policy.secrets import apply_policy, fact_findings

if TYPE_CHECKING:
    pass

MAX_KEY_CHARS = limits.FACT_KEY_CHARS
MAX_VALUE_BYTES = limits.FACT_VALUE_BYTES


def parse_facts(data: bytes, base: int, path: str, owner: str) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed)
    last: dict[str, tuple[int, dict[str, Any]]] = {}
    for off, rec in dec.records:
        key = rec.get("key")
        if not isinstance(key, str) or rec.get("op") not in ("set", "forget"):
            out.bad.append(BadLine(path, off, "not a fact record", json.dumps(rec)[:200]))
            continue
        last[key] = (off, rec)
    for key, (off, rec) in last.items():
        uid = f"fact:{owner}:{key}"
        if rec["op"] == "forget":
            out.deletes.append(uid)
            continue
        try:
            ts = parse_ts(rec.get("updated_at"))
        except MalformedInput as exc:  # still a fact: kept visible, the line reported
            out.bad.append(
                BadLine(path, off, f"fact {key!r}: updated_at: {exc}", json.dumps(rec)[:200])
            )
            ts = 0.0
        fact = to_fact(rec)
        out.docs.append(
            Doc(
                uid=uid,
                layer="fact",
                ts=ts,
                title=key,
                body=fact.value,
                source=path,
                owner=owner,
                kind=fact.category,
                offset=off,
                meta=rec,
            )
        )
    return out


def to_fact(rec: dict[str, Any]) -> Fact:
    """A fact from its journal record, whatever types a hand edit left in it: numbers and
    other JSON values are shown as text, epoch timestamps as ISO 8601."""
    cites = rec.get("citations")
    return Fact(
        key=str(rec["key"]),
        value=_as_text(rec.get("value")),
        category=_as_text(rec.get("category")) or "general",
        created_at=_as_time(rec.get("created_at")),
        updated_at=_as_time(rec.get("updated_at")),
        citations=tuple(_as_text(c) for c in cites) if isinstance(cites, list) else (),
    )


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _as_time(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        with contextlib.suppress(OverflowError, ValueError, OSError):
            return iso(float(value))
    return _as_text(value)


class Facts(Layer):
    layer = "fact"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.path = acting.engine.layout.facts(owner)

    def _spec(self) -> SourceSpec:
        path, owner = str(self.path), self.owner or ""
        return SourceSpec(self.path, "append", lambda d, b: parse_facts(d, b, path, owner))

    def _row(self, key: str) -> dict[str, Any] | None:
        check_utf8(key, "fact key")  # (no fact has such a key: a clear refusal, not a crash)
        self.engine.fresh(self._spec())
        row = queries.row_of(self.engine.db, f"fact:{self.owner}:{key}")
        return row.record() if row is not None else None

    def set(
        self,
        key: str,
        value: str,
        category: str = "general",
        *,
        citations: list[str] | tuple[str, ...] | None = None,
    ) -> Fact:
        """Save or update a fact (`save_fact`); durable once returned.

        Raises:
            AlreadyExists: `key` is live and either it or the new value is a
                repo-persistent fact (create-only).
            Refused: a repo-persistent fact without a citation, longer than 1-2
                sentences, or a save exclusion.
        """
        self._check("write")
        check_plain(key, "fact key", MAX_KEY_CHARS)  # one line, no control characters
        check_text(value, "value", MAX_VALUE_BYTES)
        if category not in FACT_CATEGORIES:
            raise MalformedInput(
                f"unknown fact category {category!r}; use one of {', '.join(FACT_CATEGORIES)}"
            )
        key = self._screen(key, "fact key")
        value = apply_policy(self.engine, value, fact_findings(key, value), f"fact {key!r}")
        cites = tuple(check_count(citations or [], "citations", limits.FACT_CITATIONS))
        for c in cites:
            check_text(c, "citation", limits.CITATION_CHARS)
        if category in DURABLE_CATEGORIES:
            problem = durable_fact_problem(value, cites)
            if problem is not None:
                raise Refused(problem)
        spec = self._spec()
        # The create-only check and the append happen under the journal's lock, so two
        # writers can never both create the same repo fact.
        with self.engine.locks.hold(str(self.path)):
            now = iso(now_ts())
            old = self._row(key)
            if old is not None and (
                category in DURABLE_CATEGORIES or old.get("category") in DURABLE_CATEGORIES
            ):
                raise AlreadyExists(
                    f"fact {key!r} exists and is a repo-persistent "
                    f"({old.get('category') if old.get('category') in DURABLE_CATEGORIES else category})"
                    " fact: those are create-only; forget it first or save under a new key"
                )
            rec = {
                "op": "set",
                "key": key,
                "value": value,
                "category": category,
                "citations": list(cites),
                "created_at": (old or {}).get("created_at") or now,
                "updated_at": now,
            }
            data = encode(rec)
            self.engine.append(spec, data)
        self._write_event(self.path, len(data))
        return to_fact(rec)

    def get(self, key: str) -> Fact:
        """The fact stored under `key` (`get_fact`); NotFound if none."""
        self._check("read")
        rec = self._row(key)
        if rec is None:
            raise NotFound(f"no fact {key!r}")
        fact = to_fact(rec)
        self._read_event(self.path, len(fact.value))
        return fact

    def forget(self, key: str) -> None:
        """Hide a fact (soft: a `forget` record is appended, every earlier value stays in
        facts.jsonl for history). `memstrata.operations.purge.purge_fact` removes it everywhere."""
        self._check("write")
        if self._row(key) is None:
            raise NotFound(f"no fact {key!r}")
        data = encode({"op": "forget", "key": key, "ts": iso(now_ts())})
        self.engine.append(self._spec(), data)
        self._write_event(self.path, -len(data))

    def problems(self) -> list[str]:
        """Lines of facts.jsonl that could not be read (skipped, the rest still reads)."""
        self._check("read")
        self.engine.fresh(self._spec())
        return self._index_problems(self.path)

    def list(self, category: str | None = None) -> list[Fact]:
        self._check("read")
        self.engine.fresh(self._spec())
        rows = queries.of_source(self.engine.db, str(self.path), layer="fact", kind=category)
        self._read_event(self.path, sum(len(r.meta or "") for r in rows))
        return [to_fact(r.record()) for r in rows]
