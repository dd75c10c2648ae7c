"""File versions in export and import: carried, merged, never over live content.

An export carries each agent's `versions/` folders like any source (`files.versions`:
a `log.jsonl` and content-addressed blobs per file). On import:

* a blob must hold the bytes its name (a sha256) says, or the archive is refused;
  one the store has already is left alone (same name, same content);
* a history log is merged with the store's (`merge_logs`: every record of both,
  once, in time order) instead of replacing it, so an import never costs the store
  a version, and the archive's versions only ever add history: the file's content
  is the store's (or, for a file the store lacks, the archive's own file), and
  making an old version current again is an explicit `restore`;
* purged content stays out: a file the store (or the archive) purged keeps no
  version written before the purge, a purged version (`version:` tombstone) is
  dropped, and every version quoting content kept out of the archive's other
  members has the quotes scrubbed (`purge_versions` does the same in the store).

Pure steps on the importer's staged folder (`importer` calls them).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.files.truth import MISSING
from memstrata.files.versions import (
    FOLDER,
    LOG,
    Author,
    Record,
    encode_log,
    merge_logs,
    parse_log,
    surface,
    versioned,
)
from memstrata.operations.transfer.tombstones import purged_at

if TYPE_CHECKING:
    from memstrata.operations.purge_copies import Quotes
    from memstrata.store.engine import Engine
    from memstrata.store.view import Store

_MEMBER = re.compile(rf"^agents/[^/]+/{FOLDER}/[^/]+/([^/]+)$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


def is_history_log(name: str) -> bool:
    m = _MEMBER.match(name)
    return m is not None and m.group(1) == LOG


def is_blob(name: str) -> bool:
    m = _MEMBER.match(name)
    return m is not None and _SHA.match(m.group(1)) is not None


def check_blobs(src: Path, hashes: dict[str, tuple[str, int]]) -> None:
    """Refuse an archive whose version blob holds other bytes than its name says."""
    for name, (sha, _) in hashes.items():
        if is_blob(name) and name.rsplit("/", 1)[1] != sha:
            raise MalformedInput(
                f"{src}: {name} does not hold the content its name says (sha256 {sha[:12]}…); "
                "nothing was imported"
            )


class Staged:
    """The staged members the importer will place: read, replaced, added, dropped."""

    def __init__(
        self,
        root: Path,
        memory: list[str],
        hashes: dict[str, tuple[str, int]],
        write: Callable[[Path, bytes], None],
    ) -> None:
        self.root, self.memory, self.hashes, self._write = root, memory, hashes, write

    def path(self, name: str) -> Path:
        return self.root.joinpath(*name.split("/"))

    def read(self, name: str) -> bytes:
        return self.path(name).read_bytes()

    def put(self, name: str, data: bytes) -> None:
        self._write(self.path(name), data)
        self.hashes[name] = (hashlib.sha256(data).hexdigest(), len(data))
        if name not in self.memory:
            self.memory.append(name)

    def drop(self, name: str) -> None:
        if name in self.memory:
            self.memory.remove(name)
            self.path(name).unlink(missing_ok=True)


def keep_purged_out(
    store: Store,
    staged: Staged,
    tombstones: list[dict[str, Any]],
    needles: dict[str, Quotes],
) -> list[tuple[str, str]]:
    """Apply the tombstones and the content kept out (`needles`: owner -> its quotes)
    to the staged version folders; (member, why) for each change."""
    purged_files: dict[tuple[str, str], float] = {}  # (owner, name below agent) -> when
    purged_versions: dict[tuple[str, str], set[str]] = {}  # (owner, name) -> id prefixes
    for rec in tombstones:
        layer, _, rest = str(rec.get("id", "")).partition(":")
        owner, _, what = rest.partition(":")
        if layer == "file" and what:
            key = (owner, f"memory/{what}")
            purged_files[key] = max(purged_at(rec), purged_files.get(key, -math.inf))
        elif layer == "version" and what.count(":") >= 1:
            name, _, vid = what.rpartition(":")
            purged_versions.setdefault((owner, name), set()).add(vid)
    out: list[tuple[str, str]] = []
    for log in [n for n in staged.memory if is_history_log(n)]:
        records = parse_log(staged.read(log))
        target = versioned(records[-1].path, store.config.memory_path) if records else None
        if target is None or target.log != log:
            continue  # not a history of the file it claims: placed as it is (merged)
        key = (target.agent, target.name)
        quotes = needles.get(target.agent)
        ids = purged_versions.get(key, set())
        since = purged_files.get(key, -math.inf)
        blobs: dict[str, bytes | None] = {}
        kept: list[Record] = []
        for r in records:
            if r.epoch <= since or any(r.sha256.startswith(i) for i in ids):
                why = "purged file" if r.epoch <= since else "purged version"
                out.append((f"{log}@{r.id}", why))
                continue
            if quotes and r.sha256 not in blobs:
                blob = f"{target.folder}/{r.sha256}"
                data = staged.read(blob) if blob in staged.memory else None
                if data is None and r.text is not None:
                    data = r.text.encode("utf-8")  # a hot file's record carries its content
                clean = _scrubbed(data, quotes)
                blobs[r.sha256] = clean
                if clean is not None:
                    sha = hashlib.sha256(clean).hexdigest()
                    if r.text is None:
                        staged.put(f"{target.folder}/{sha}", clean)
                    out.append((f"{log}@{r.id}", "quotes of purged content scrubbed"))
            clean = blobs.get(r.sha256)
            if clean is not None:
                r = Record(
                    **{
                        **r.__dict__,
                        "sha256": hashlib.sha256(clean).hexdigest(),
                        "size": len(clean),
                        "truth": None,
                        "text": clean.decode("utf-8", "replace") if r.text is not None else None,
                    }
                )
            kept.append(r)
        if len(kept) == len(records) and not any(blobs.values()):
            continue
        named = {r.sha256 for r in kept}
        for member in [m for m in staged.memory if m.startswith(f"{target.folder}/")]:
            if is_blob(member) and member.rsplit("/", 1)[1] not in named:
                staged.drop(member)
        if kept:
            staged.put(log, encode_log(kept))
        else:
            staged.drop(log)
    return out


def _scrubbed(data: bytes | None, quotes: Quotes) -> bytes | None:
    """`data` with every quote scrubbed, or None when it quotes nothing (or is absent)."""
    if data is None:
        return None
    text = data.decode("utf-8", "surrogateescape")
    clean = quotes.scrub(text)
    return None if clean is text else clean.encode("utf-8", "surrogateescape")


def adds_to(engine: Engine, rel: str, data: bytes) -> bool:
    """Whether a staged history log holds a record the store's lacks."""
    found = engine.read(rel)
    return found is None or merge_logs(found.data, data) != found.data


def place(engine: Engine, rel: str, data: bytes, force: bool) -> None:
    """Write one imported file (the caller holds `lock(rel)`): a history log is merged
    with the store's; a file is written only where none is (StaleWrite otherwise),
    unless `force`, and one that replaces an overwritable memory file keeps the
    content it replaced as a version, as every replace does."""
    target = versioned(rel)
    if is_history_log(rel):
        found = engine.read(rel)
        if found is None:
            engine.put(rel, data, expected=MISSING)
        elif (merged := merge_logs(found.data, data)) != found.data:
            engine.put(rel, merged, expected=found.entry.version)
        return
    now = engine.stat(rel) if force and target is not None else None
    if target is None or now is None:
        engine.put(rel, data, expected=None if force else MISSING)
        return
    with surface("import"):
        engine.history(target).replace(
            data,
            expected=now.version,
            current=lambda: engine.read(rel),
            author=Author(None, "admin"),
        )
