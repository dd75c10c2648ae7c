"""`Edit`: one read-modify-write of a whole source, as `Store.editing` hands it out.

The store takes the source's lock and reads it (`text`, `data`, `exists`); calling
the edit with new text replaces the source through the truth, passing the
version that was read, so even a lock that was lost meanwhile (a PostgreSQL
session that dropped) ends in `StaleWrite` instead of a lost update; then the
index catches up with the source.

    with store.editing(tasks._spec()) as edit:
        doc = load_tasks(edit.data, "tasks.json")
        ...
        edit(doc.dumps())
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from memstrata.errors import StaleWrite
from memstrata.files.truth import MISSING, Content
from memstrata.files.versions import Author, FileHistory, Retention, versioned

if TYPE_CHECKING:
    from memstrata.index.reconcile import SourceSpec
    from memstrata.store import Store


_UNREAD = object()


class Edit:
    """One read-modify-write of a whole source, under its lock (`Store.editing`).

    The source is read on first use of `exists`, `data` or `text`; an edit that only
    writes (a plain `rewrite`) passes the version it finds without reading the bytes.
    """

    def __init__(self, store: Store, spec: SourceSpec, rel: str) -> None:
        self.store, self.spec, self.rel = store, spec, rel
        self._current: object = _UNREAD

    @property
    def current(self) -> Content | None:
        """The source as read under the lock (None: it does not exist)."""
        if self._current is _UNREAD:
            self._current = self.store.truth.read(self.rel)
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
            entry = self.store.truth.stat(self.rel)
            expected = entry.version if entry is not None else MISSING
        else:
            current = self.current
            expected = current.entry.version if current is not None else MISSING
        store = self.store
        target = versioned(self.rel, store.config.memory_path)
        if target is None:
            written = store.truth.rewrite(self.rel, data, expected=expected)
        else:
            config, who = store.config, store.principal
            history = FileHistory(
                store.truth, target, Retention(config.versions_keep, config.versions_max_age_days)
            )
            written = history.replace(
                data,
                expected=expected,
                current=lambda: self.current,
                author=Author(who.agent, who.role),
            )
            if history.due:  # retention, after the acknowledgement (never slows the write)
                store.after_ack(f"versions {self.rel}", lambda: _prune(store, history))
        self._current = Content(data, written)
        store.index_file(self.spec)


def _prune(store: Store, history: FileHistory) -> None:
    with store.truth.lock(history.target.rel), contextlib.suppress(StaleWrite):
        history.prune()
