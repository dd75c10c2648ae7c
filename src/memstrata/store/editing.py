"""`Edit`: one read-modify-write of a whole source, as `Engine.editing` hands it out.

The engine takes the source's lock and reads it (`text`, `data`, `exists`); calling
the edit with new text replaces the source through the truth, passing the
version that was read, so even a lock that was lost meanwhile (a PostgreSQL
session that dropped) ends in `StaleWrite` instead of a lost update; then the
index catches up with the source (an index source's; a journal's is the
caller's to catch up).

    with engine.editing(tasks._spec()) as edit:
        doc = load_tasks(edit.data, "tasks.json")
        ...
        edit(doc.dumps())
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import TYPE_CHECKING

from memstrata.errors import StaleWrite
from memstrata.files.truth import MISSING, Content
from memstrata.files.versions import Author, FileHistory, versioned

if TYPE_CHECKING:
    from memstrata.index.reconcile import SourceSpec
    from memstrata.store.engine import Engine


_UNREAD = object()
NOBODY = Author(None, None)  # a write no principal asked for (purge, maintenance)


def sha256_text(text: str) -> str:
    """The hash a caller passes back as `expected_sha` (the text it last read)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Edit:
    """One read-modify-write of a whole source, under its lock (`Engine.editing`).

    The source is read on first use of `exists`, `data` or `text`; an edit that only
    writes (a plain `rewrite`) passes the version it finds without reading the bytes.
    """

    def __init__(
        self, engine: Engine, spec: SourceSpec | None, rel: str, author: Author = NOBODY
    ) -> None:
        self.engine, self.spec, self.rel, self.author = engine, spec, rel, author
        self._current: object = _UNREAD

    @property
    def current(self) -> Content | None:
        """The source as read under the lock (None: it does not exist)."""
        if self._current is _UNREAD:
            self._current = self.engine.truth.read(self.rel)
        return self._current  # type: ignore[return-value]

    @current.setter
    def current(self, value: Content | None) -> None:
        self._current = value

    @property
    def exists(self) -> bool:
        return self.current is not None

    @property
    def data(self) -> bytes:
        current = self.current
        return current.data if current is not None else b""

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    def __call__(self, text: str | bytes) -> None:
        """Replace the source with `text` (if it is still the version read) and index it;
        an overwritable memory file keeps the content it replaced (`files.versions`)."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        if self._current is _UNREAD:
            entry = self.engine.truth.stat(self.rel)
            expected = entry.version if entry is not None else MISSING
        else:
            current = self.current
            expected = current.entry.version if current is not None else MISSING
        engine = self.engine
        target = versioned(self.rel, engine.config.memory_path)
        if target is None:
            written = engine.truth.rewrite(self.rel, data, expected=expected)
        else:
            history = engine.history(target)
            written = history.replace(
                data, expected=expected, current=lambda: self.current, author=self.author
            )
            if history.due:  # retention, after the acknowledgement (never slows the write)
                engine.after_ack(f"versions {self.rel}", lambda: _prune(engine, history))
        self._current = Content(data, written)
        if self.spec is not None:
            engine.index_file(self.spec)


def _prune(engine: Engine, history: FileHistory) -> None:
    with engine.lock(history.target.rel), contextlib.suppress(StaleWrite):
        history.prune()
