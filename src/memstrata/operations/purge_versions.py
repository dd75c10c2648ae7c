"""Purge and file versions: what a purge removes leaves the versions too.

The versions of an agent's files (`files.versions`) are copies memstrata made, so
every purge treats them as it treats derived text (`purge_copies`), and more
strictly: not only the derived sections, every version of every file of the
purge's owners that quotes the purged text (`Quotes`) is rewritten with each quote
replaced by `[purged]`, kept under its new sha256 (the old blob goes). Two
exceptions, both the live file's business: a version whose content is what the
file holds now is left to the live file's own rules (a purge scrubs only its
derived sections; text an agent wrote itself is purged by its own id), and a
purged file's whole history goes with it (`drop_history`).

`purge.purge_version` removes one version from a file's history (a secret pasted into
CONTEXT.md, edited out, still in the version before): its content, wherever the
history holds it, leaves for good, with a tombstone like every purge.

Each history is changed under the lock of its file, as writers change it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput
from memstrata.files.versions import (
    FileHistory,
    Record,
    parse_log,
    sha256,
    versioned,
)

if TYPE_CHECKING:
    from memstrata.operations.purge_copies import Quotes
    from memstrata.store.view import Store


def _history(store: Store, rel: str) -> FileHistory | None:
    target = versioned(rel, store.config.memory_path)
    return store.engine.history(target) if target is not None else None


def has_history(store: Store, rel: str) -> bool:
    hist = _history(store, rel)
    return hist is not None and store.engine.stat(hist.target.log) is not None


def holds_version(store: Store, owner: str, name: str, vid: str) -> bool:
    """Does the history of `owner`'s file `name` keep a version whose id starts `vid`?"""
    target = versioned(f"agents/{owner}/{name}", store.config.memory_path)
    if target is None or len(vid) < 4:
        return False
    return any(r.sha256.startswith(vid) for r in store.engine.history(target).records())


def history_texts(store: Store, rel: str) -> set[str]:
    """The texts of every version of the file `rel` (a purged file's: all purged)."""
    hist = _history(store, rel)
    if hist is None:
        return set()
    out = set()
    for sha in {r.sha256 for r in hist.records()}:
        data = hist.blob(sha)
        if data is not None:
            out.add(data.decode("utf-8", "replace"))
    return out


def drop_history(store: Store, rel: str) -> list[str]:
    """Remove every version of the file `rel` (a purged file); what was removed."""
    hist = _history(store, rel)
    if hist is None:
        return []
    with store.engine.lock(rel):
        n = len(hist.records())
        if not hist.remove():
            return []
    return [f"{rel}: all {n} version(s)"]


def scrub_histories(store: Store, owners: set[str], quotes: Quotes) -> list[str]:
    """Replace every quote of the purged text in the versions of the owners' files
    (module docstring); returns "<file>@<id> -> <new id>" for each version changed."""
    if not quotes:
        return []
    out: list[str] = []
    for owner in sorted(owners):
        for log in store.engine.histories(owner):
            found = store.engine.read(log)
            records = parse_log(found.data) if found is not None else []
            if not records:
                continue
            rel = records[-1].path
            hist = _history(store, rel)
            if hist is None or hist.target.log != log:
                continue
            with store.engine.lock(rel):
                live = store.engine.read(rel)
                live_sha = sha256(live.data) if live is not None else None

                def scrub(rec: Record, data: bytes, live_sha: str | None = live_sha) -> bytes:
                    if rec.sha256 == live_sha:
                        return data
                    text = data.decode("utf-8", "surrogateescape")
                    clean = quotes.scrub(text)
                    return data if clean is text else clean.encode("utf-8", "surrogateescape")

                out += [f"{rel}@{r.id} -> {new}" for r, new in hist.rewrite(scrub)]
    return out


def own_lines(data: bytes, hist: FileHistory, live: bytes) -> set[str]:
    """The lines of a purged version that no other version (nor the file now) holds:
    what it alone said, looked for in derived text and the other files' versions (its
    whole text would match most of the versions beside it)."""
    others: set[str] = set(live.decode("utf-8", "replace").splitlines())
    for sha in {r.sha256 for r in hist.records()}:
        blob = hist.blob(sha)
        if blob is not None:
            others.update(blob.decode("utf-8", "replace").splitlines())
    try:
        mine = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise MalformedInput("the purged version is not UTF-8 text") from None
    return {line.strip() for line in mine if line.strip() and line not in others}
