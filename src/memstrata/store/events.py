"""Memory events: delivered to in-process subscribers and to `events.jsonl`.

| event          | payload                           |
|----------------|-----------------------------------|
| memory:read    | {type, path, size}                |
| memory:write   | {type, path, delta}               |
| memory:flush   | {sessionId}                       |
| memory:compact | {sessionId, before, after}        |
| memory:search  | {query, results}                  |

The audit file is an append-only trail: one `O_APPEND` write per event, made under
the file's cross-process lock, and no fsync: it records what happened, while the
memory files themselves carry the durability promise. Readers skip a line torn by a
crash, as for every JSONL file.

Privacy: subscribers in the process get every payload as emitted, but the file
records a search's query as `hmac-sha256:<hex>` unless `[events] record_queries =
true`. The HMAC key is this host's, 32 random bytes made on first use in
`.events-key` beside the trail (mode 0600; hidden, so never exported): with
events.jsonl alone, a guessed query cannot be confirmed (a plain hash could be,
by hashing the guess); the same query still gives the same digest, so repeated
searches stay visible. Where the key cannot be written (a read-only store), the
query is recorded as `[withheld]`.

Rotation: past `[events] max_bytes`, `events.jsonl` becomes `events.1.jsonl`
(older ones shift to `.2`, ... and past `[events] keep` are deleted). Every write
checks, under the lock, that its descriptor is still the file at `events.jsonl`
and reopens it if not, so neither rotation nor a purge's rewrite (same lock) ever
loses another process's records.
Writing the trail is best effort: an event follows an operation that already
happened (often an acknowledged write), so a full or read-only disk never fails
that operation; refused event lines are counted in `EventBus.dropped`.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memstrata.errors import LockTimeout
from memstrata.files.atomic import atomic_write_bytes
from memstrata.files.jsonl import encode, read_records
from memstrata.files.locks import LockTable
from memstrata.values import value_type

EVENT_NAMES = ("memory:read", "memory:write", "memory:flush", "memory:compact", "memory:search")


@value_type(frozen=True)
class Event:
    """One memory event (`EVENT_NAMES`) with its payload, acting agent and time."""

    name: str
    payload: dict[str, Any]
    agent: str | None
    ts: float


Subscriber = Callable[[Event], None]


DEFAULT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_KEEP = 3


def rotated(path: Path, n: int) -> Path:
    """`events.jsonl` -> `events.<n>.jsonl` (n = 1 is the newest rotated file)."""
    return path.with_name(f"{path.stem}.{n}{path.suffix}")


def audit_files(path: Path) -> list[Path]:
    """The current audit file and every rotated one on disk, newest first."""
    numbered: list[tuple[int, Path]] = []
    for p in path.parent.glob(f"{path.stem}.*{path.suffix}"):
        middle = p.name[len(path.stem) + 1 : -len(path.suffix)]
        if middle.isdigit():
            numbered.append((int(middle), p))
    return ([path] if path.exists() else []) + [p for _, p in sorted(numbered)]


KEY_FILE = ".events-key"
KEY_BYTES = 32


def query_digest(text: str, key: bytes) -> str:
    """`hmac-sha256:<hex>` of a search query under this host's audit key."""
    return "hmac-sha256:" + hmac.digest(key, text.encode("utf-8"), "sha256").hex()


def audit_key(audit_path: Path) -> bytes | None:
    """The host's audit HMAC key beside `audit_path`, made on first use (None if it cannot
    be: a read-only or full disk). Written to a temporary file and linked into place, so
    no process ever reads a partial key, and the first of two racing makers wins."""
    path = audit_path.with_name(KEY_FILE)
    try:
        key = path.read_bytes()
        return key if len(key) == KEY_BYTES else None  # damaged: never guess, never overwrite
    except FileNotFoundError:
        pass
    except OSError:
        return None
    tmp = path.with_name(f"{KEY_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, os.urandom(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
        key = path.read_bytes()
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return key if len(key) == KEY_BYTES else None


class EventBus:
    def __init__(
        self,
        audit_path: Path | None,
        locks: LockTable,
        agent: str | None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int = DEFAULT_KEEP,
        record_queries: bool = False,
    ) -> None:
        self._audit = audit_path
        self._locks = locks
        self._agent = agent
        self._max_bytes = max_bytes
        self._keep = keep
        self._record_queries = record_queries
        self._subs: list[Subscriber] = []
        self._guard = threading.Lock()
        self._fd: int | None = None
        self._ino = -1  # the inode `_fd` is open on
        self.dropped = 0  # audit lines the disk refused (full, read-only)
        self._key: bytes | None = None

    def _query_key(self) -> bytes | None:
        if self._key is None and self._audit is not None:
            self._key = audit_key(self._audit)
        return self._key

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Call `fn(event)` for every event; returns a function that unsubscribes."""
        with self._guard:
            self._subs.append(fn)

        def unsubscribe() -> None:
            with self._guard, contextlib.suppress(ValueError):
                self._subs.remove(fn)

        return unsubscribe

    @contextlib.contextmanager
    def capture(self) -> Iterator[list[Event]]:
        """Collect the events emitted inside the block (used by tests and "ignore memory")."""
        seen: list[Event] = []
        unsubscribe = self.subscribe(seen.append)
        try:
            yield seen
        finally:
            unsubscribe()

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        self.emit_as(self._agent, name, payload)

    def emit_as(self, agent: str | None, name: str, payload: dict[str, Any]) -> None:
        """Emit an event on behalf of `agent` (a principal sharing this bus, `as_agent`)."""
        event = Event(name, payload, agent, time.time())
        if self._audit is not None:
            kept = payload
            query = payload.get("query")
            if name == "memory:search" and not self._record_queries and isinstance(query, str):
                key = self._query_key()
                kept = {**payload, "query": query_digest(query, key) if key else "[withheld]"}
            record = {"ts": event.ts, "event": name, "agent": agent, "payload": kept}
            self._write(encode(record))
        for fn in list(self._subs):
            fn(event)

    def as_agent(self, agent: str | None) -> EventBus:
        """This bus (same audit file, descriptor and subscribers) recording `agent` as
        the actor: what `Store.acting_as` gives each principal."""
        return AgentEvents(self, agent)

    def _write(self, line: bytes) -> None:
        assert self._audit is not None
        try:
            with self._guard, self._locks.hold(str(self._audit)):
                fd, size = self._current()
                written = os.write(fd, line)
                # Every writer of the file holds the lock: it grew by what we wrote.
                size = os.fstat(fd).st_size if size is None else size + written
                if size > self._max_bytes:
                    self._rotate()
        except (OSError, LockTimeout):
            self.dropped += 1

    def _current(self) -> tuple[int, int | None]:
        """The descriptor of the file now at the audit path (reopened after a rotation
        or a purge's rewrite by any process), and its size when known. Called under the
        lock. One `stat` of the path: the open descriptor's inode is kept from its open
        (a descriptor never changes file), where each write used to `fstat` it."""
        assert self._audit is not None
        if self._fd is not None:
            try:
                st = os.stat(self._audit)
            except FileNotFoundError:
                st = None
            if st is not None and st.st_ino == self._ino:
                return self._fd, st.st_size
            os.close(self._fd)
            self._fd = None
        self._audit.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._audit, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._fd, self._ino = fd, os.fstat(fd).st_ino
        return fd, None

    def _rotate(self) -> None:
        assert self._audit is not None
        if self._keep == 0:
            os.unlink(self._audit)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(rotated(self._audit, self._keep))
            for n in range(self._keep - 1, 0, -1):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(rotated(self._audit, n), rotated(self._audit, n + 1))
            os.replace(self._audit, rotated(self._audit, 1))
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        with self._guard:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None


def scrub_audit(
    path: Path,
    locks: LockTable,
    needles: set[str],
    *,
    about: Callable[[dict[str, Any]], bool] | None = None,
) -> int:
    """Drop every audit record (current and rotated files) that quotes a needle; a search
    record `about(record)` picks whose query is in clear (`[events] record_queries`) keeps
    only its HMAC (`query_digest`), or is dropped where this host's key cannot be had.

    Rewrites under the lock every writer takes; writers reopen the file after it.
    Returns how many records were dropped or hashed.
    """
    if not needles and about is None:
        return 0
    raw = [n.encode("utf-8") for n in needles]
    key = audit_key(path) if about is not None else None

    def quotes(value: Any) -> bool:
        if isinstance(value, str):
            return any(n in value for n in needles)
        if isinstance(value, dict):
            return any(quotes(v) for v in value.values())
        if isinstance(value, list):
            return any(quotes(v) for v in value)
        return False

    def clear_query(rec: Any) -> bool:
        payload = rec.get("payload") if isinstance(rec, dict) else None
        query = payload.get("query") if isinstance(payload, dict) else None
        return (
            rec.get("event") == "memory:search"
            and isinstance(query, str)
            and not query.startswith("hmac-sha256:")
            and query != "[withheld]"
        )

    def kept(line: bytes) -> bytes | None:
        """The line as it stays (None: dropped)."""
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return None if any(n in line for n in raw) else line
        if quotes(rec):
            return None
        if about is not None and clear_query(rec) and about(rec):
            if key is None:
                return None
            digest = query_digest(rec["payload"]["query"], key)
            return encode({**rec, "payload": {**rec["payload"], "query": digest}})
        return line

    changed = 0
    with locks.hold(str(path)):
        for p in audit_files(path):
            lines = p.read_bytes().splitlines(keepends=True)
            out = [kept(ln) for ln in lines]
            n = sum(1 for a, b in zip(lines, out, strict=True) if a != b)
            if n:
                changed += n
                atomic_write_bytes(p, b"".join(b for b in out if b is not None))
    return changed


class AgentEvents(EventBus):
    """One principal's face of a shared `EventBus`: emits through it as `agent`."""

    def __init__(self, bus: EventBus, agent: str | None) -> None:  # shares, opens nothing
        self._bus = bus
        self._agent = agent

    def emit_as(self, agent: str | None, name: str, payload: dict[str, Any]) -> None:
        self._bus.emit_as(agent, name, payload)

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        return self._bus.subscribe(fn)

    def as_agent(self, agent: str | None) -> EventBus:
        return self._bus.as_agent(agent)

    def close(self) -> None:
        """The shared bus stays open: its owner closes it."""


def recent_events(
    path: Path,
    *,
    limit: int = 50,
    before: int | None = None,
    agents: frozenset[str | None] | None = None,
    names: tuple[str, ...] = (),
) -> tuple[list[dict[str, Any]], int | None]:
    """The newest audit records before byte `before` (default: the end), newest first.

    Reads the file backwards in blocks and stops once `limit` records passed the
    filters (`agents`: only these actors; `names`: only these events), so the cost
    follows the page, not the file. Returns the records, each with its `offset`, and
    the cursor of the next (older) page, None at the start of the file.
    """
    import json

    out: list[dict[str, Any]] = []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return [], None
    try:
        end = os.fstat(fd).st_size if before is None else min(before, os.fstat(fd).st_size)
        pos, tail = end, b""
        while pos > 0 and len(out) < limit:
            step = min(64 * 1024, pos)
            pos -= step
            block = os.pread(fd, step, pos) + tail
            lines = block.split(b"\n")
            tail = lines[0] if pos > 0 else b""  # maybe a partial line: joined with the next block
            starts, at = [], pos
            for raw in lines:
                starts.append(at)
                at += len(raw) + 1
            for i in range(len(lines) - 1, 0 if pos > 0 else -1, -1):
                raw, offset = lines[i], starts[i]
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue  # a line torn by a crash
                if not isinstance(rec, dict) or (
                    agents is not None and rec.get("agent") not in agents
                ):
                    continue
                if names and rec.get("event") not in names:
                    continue
                out.append({**rec, "offset": offset})
                if len(out) == limit:
                    return out, offset or None
    finally:
        os.close(fd)
    return out, None


def tail_events(
    path: Path, offset: int, ino: int | None, max_bytes: int = 1024 * 1024
) -> tuple[list[dict[str, Any]], int, int | None]:
    """Records appended to `path` since `offset` (of the file with inode `ino`), for a live
    stream. A rotated or rewritten file (another inode, or shorter) is read from its start.
    Returns the complete records (each with its `offset`), the new offset and inode."""
    import json

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return [], 0, None
    try:
        st = os.fstat(fd)
        if ino is not None and (st.st_ino != ino or st.st_size < offset):
            offset = 0
        data = os.pread(fd, min(max_bytes, max(st.st_size - offset, 0)), offset)
    finally:
        os.close(fd)
    out = []
    end = data.rfind(b"\n") + 1  # complete lines only; a line being written waits
    at = offset
    for raw in data[:end].split(b"\n")[:-1]:
        with contextlib.suppress(ValueError):
            rec = json.loads(raw)
            if isinstance(rec, dict):
                out.append({**rec, "offset": at})
        at += len(raw) + 1
    return out, offset + end, st.st_ino


def read_audit(path: Path) -> list[dict[str, Any]]:
    return [r for _, r in read_records(path).records]
