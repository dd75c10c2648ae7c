"""`Edit`: one read-modify-write of a whole source, as `Store.editing` hands it out.

The store takes the source's lock and reads it (`text`, `data`, `exists`); calling
the edit with new text replaces the source through the truth, passing the
version that was read, so even a lock that was lost meanwhile (a PostgreSQL
session that dropped) ends in `StaleWrite` instead of a lost update; then the
index catches up with the source.

    with store.editing(tasks.spec()) as edit:
        doc = load_tasks(edit.data, "tasks.json")
        ...
        edit(doc.dumps())
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.files.truth import MISSING, Content

if TYPE_CHECKING:
    from memstrata.index.reconcile import SourceSpec
    from memstrata.store import Store


class Edit:
    """One read-modify-write of a whole source, under its lock (`Store.editing`)."""

    def __init__(self, store: Store, spec: SourceSpec, rel: str, current: Content | None) -> None:
        self.store, self.spec, self.rel, self.current = store, spec, rel, current

    @property
    def exists(self) -> bool:
        return self.current is not None

    @property
    def data(self) -> bytes:
        return self.current.data if self.current is not None else b""

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    def __call__(self, text: str | bytes) -> None:
        """Replace the source with `text` (if it is still the version read) and index it."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        expected = self.current.entry.version if self.current is not None else MISSING
        entry = self.store.truth.rewrite(self.rel, data, expected=expected)
        self.current = Content(data, entry)
        self.store.index_file(self.spec)
