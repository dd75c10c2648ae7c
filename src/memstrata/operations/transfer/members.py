"""What an archive holds, read as a stream of members, and which of them are memory.

A member is a name (a store-relative posix path), a declared size and a way to
stream its bytes. Tarballs are read in stream mode (`r|`): one header at a time,
nothing kept but the member being read, so a member count cap bounds memory. The
bodies of extended headers (GNU long names and links, pax headers), which tarfile
reads whole before any member is seen, are capped at MAX_HEADER_BYTES per member and
in all; GNU sparse members are refused before their maps are read. Folder
sources are walked in sorted order; their symlinks are refused (an export never has
one, and following one would import a file from outside the export).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, cast

from memstrata.values import value_type

if TYPE_CHECKING:
    import tarfile

from memstrata.errors import (
    EntryTooLarge,
    MalformedInput,
    MemstrataError,
    NotFound,
    PathOutsideStore,
)
from memstrata.model import check_name, name_problem, shown

MANIFEST = "memstrata-export.json"
DERIVED = frozenset({"index.db", "index.db-wal", "index.db-shm", "index.db-journal"})
DERIVED_FOLDER = "index"  # index/<generation>.db and its CURRENT pointer
SETTINGS_FILES = frozenset({"config.toml", "config.yaml", "config.yml"})
STORE_FILES = frozenset({"ledger.jsonl", "items.json", "purged.jsonl"})
STORE_FOLDERS = frozenset({"agents", "rooms"})
STAGING = ".imports"
MAX_NAME_CHARS = 1024
MAX_HEADER_BYTES = 64 * 1024  # extended header bodies: per member, and global ones in all
MAX_HEADER_CHAIN = 8  # extended headers before one member (GNU tar writes at most two)
_EVENTS = re.compile(r"^events(\.\d+)?\.jsonl$")


@value_type(frozen=True)
class Member:
    name: str  # normalised, store-relative posix path
    size: int  # declared (tar header) or observed (folder) size in bytes
    is_dir: bool
    open: Callable[[], IO[bytes]]
    mtime: float = 0.0  # when the archive says the member was last modified (epoch seconds)


def is_tarball(name: str) -> bool:
    return name.endswith((".tar.gz", ".tgz", ".tar"))


def member_name(raw: str, source: object) -> str:
    """A member's name as a plain relative path, or PathOutsideStore / MalformedInput.

    `./` prefixes and a directory's trailing `/` are dropped; absolute names (also
    `/memories/...`), `..`, empty parts, backslashes, drive letters and names that are
    no valid names (`model.name_problem`: undecodable bytes, control or bidirectional
    formatting characters, not NFC) are refused: a member lands exactly where its name
    says, or nowhere.
    """
    name = raw
    while name.startswith("./"):
        name = name[2:]
    name = name.rstrip("/") if name != "/" else name
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise PathOutsideStore(f"{source}: refusing absolute member name {shown(raw)}")
    if "\\" in name:
        raise MalformedInput(f"{source}: refusing member name {shown(raw)} (backslash)")
    problem = name_problem(name)
    if problem is not None:
        raise MalformedInput(f"{source}: refusing member name {shown(raw)}: it {problem}")
    parts = name.split("/")
    if any(p == ".." for p in parts):
        raise PathOutsideStore(f"{source}: refusing {shown(raw)}: it would land outside the store")
    if (
        not name
        or any(p in ("", ".") for p in parts)
        or len(name) > MAX_NAME_CHARS
        or any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts)
    ):
        raise MalformedInput(f"{source}: refusing malformed member name {shown(raw)}")
    return name


def classify(name: str, source: object) -> str | None:
    """None when `name` is memory to import, else why it is skipped.

    Raises MalformedInput for an agent or room folder whose name the store refuses.
    """
    parts = PurePosixPath(name).parts
    top = parts[0]
    if top == DERIVED_FOLDER:
        return "derived index: rebuilt from the files after the import"
    if len(parts) == 1:
        if top in DERIVED:
            return "derived index: rebuilt from the files after the import"
        if top in SETTINGS_FILES:
            return "settings and roles are never taken from an archive (compare it by hand)"
        if _EVENTS.match(top):
            return "another store's audit trail is not merged into this one"
    if any(p.startswith(".") for p in parts):
        return "hidden file: private to a running store"
    if len(parts) == 1 and top in STORE_FILES:
        return None
    if top in STORE_FOLDERS and len(parts) >= 3:
        try:
            check_name(parts[1], "agent" if top == "agents" else "room")
        except MalformedInput as exc:
            raise MalformedInput(f"{source}: refusing {name!r}: {exc}") from None
        return None
    return "not part of a memstrata store"


def iter_members(source: Path) -> Iterator[Member]:
    """Every member of a folder or tarball, in archive order; each must be read (or
    skipped) before the next is asked for."""
    if not source.exists():
        raise NotFound(f"no export at {source}")
    if source.is_dir():
        yield from _folder(source)
    elif is_tarball(source.name):
        yield from _tar(source)
    else:
        raise MalformedInput(f"{source}: expected a folder or a .tar.gz / .tgz / .tar file")


def _folder(root: Path) -> Iterator[Member]:
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames.sort()
        for d in dirnames:
            if (here / d).is_symlink():
                raise MalformedInput(f"{root}: {(here / d).relative_to(root)} is a symlink")
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in sorted(filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if rel in DERIVED or name.startswith("."):
                continue  # private to a running store, never part of an export
            if path.is_symlink() or not path.is_file():
                raise MalformedInput(f"{root}: {rel!r} is not a plain file")
            st = path.stat()
            yield Member(rel, st.st_size, False, _opener(path), st.st_mtime)


def _opener(path: Path) -> Callable[[], IO[bytes]]:
    return lambda: open(path, "rb")


def _tar(source: Path) -> Iterator[Member]:
    import gzip
    import tarfile
    import zlib

    try:
        # gzip.GzipFile, not tarfile's own "r|gz": it reads multi-member gzip (pigz, bgzip).
        with (
            open(source, "rb") as raw,
            gzip.GzipFile(fileobj=raw) if source.name.endswith("gz") else raw as fh,
            tarfile.open(fileobj=fh, mode="r|", tarinfo=_bounded_tarinfo(source)) as tar,
        ):
            while (info := tar.next()) is not None:
                tar.members.clear()  # type: ignore[attr-defined]  # stream mode keeps every header
                if info.isdir():
                    yield Member(info.name, 0, True, _no_bytes)
                    continue
                if not info.isfile() or info.issparse():
                    raise MalformedInput(f"{source}: {info.name!r} is not a plain file")
                yield Member(
                    info.name, info.size, False, _tar_opener(tar, info, source), float(info.mtime)
                )
    except MemstrataError:
        raise
    except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as exc:
        raise MalformedInput(
            f"{source}: not a readable archive ({exc}); nothing was imported"
        ) from None


def _bounded_tarinfo(source: Path) -> type[tarfile.TarInfo]:
    """A TarInfo whose extended headers are checked by their declared size before
    tarfile reads their bodies (it reads each whole into memory: a 1 MB .tar.gz can
    declare a 1 GiB long name)."""
    import tarfile

    extended = {
        tarfile.GNUTYPE_LONGNAME: "GNU long-name",
        tarfile.GNUTYPE_LONGLINK: "GNU long-link",
        tarfile.XHDTYPE: "pax",
        tarfile.XGLTYPE: "global pax",
        tarfile.SOLARIS_XHDTYPE: "pax",
    }
    chain = {"depth": 0, "bytes": 0, "global": 0}

    def refuse_sparse(*_: object) -> None:
        raise MalformedInput(f"{source}: refusing a GNU sparse member (an export never has one)")

    class Bounded(tarfile.TarInfo):
        def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
            if self.type == tarfile.GNUTYPE_SPARSE:
                refuse_sparse()
            if self.type not in extended:
                return super()._proc_member(tar)  # type: ignore[misc, no-any-return]
            kind = extended[self.type]
            used = chain["global"] if self.type == tarfile.XGLTYPE else chain["bytes"]
            if used + self.size > MAX_HEADER_BYTES:
                raise EntryTooLarge(
                    f"{source}: refusing a {kind} tar header of {self.size} bytes (limit "
                    f"{MAX_HEADER_BYTES} per member); nothing was imported"
                )
            if chain["depth"] >= MAX_HEADER_CHAIN:
                raise MalformedInput(
                    f"{source}: more than {MAX_HEADER_CHAIN} extended tar headers before one member"
                )
            chain["global" if self.type == tarfile.XGLTYPE else "bytes"] += self.size
            chain["depth"] += 1
            try:
                return super()._proc_member(tar)  # type: ignore[misc, no-any-return]
            finally:
                chain["depth"] -= 1
                if chain["depth"] == 0:
                    chain["bytes"] = 0

        _proc_gnusparse_00 = _proc_gnusparse_01 = _proc_gnusparse_10 = refuse_sparse

    return Bounded


def _no_bytes() -> IO[bytes]:
    import io

    return io.BytesIO(b"")


def _tar_opener(tar: object, info: object, source: Path) -> Callable[[], IO[bytes]]:
    def opener() -> IO[bytes]:
        fh = tar.extractfile(info)  # type: ignore[attr-defined]
        assert fh is not None
        return cast(IO[bytes], _Checked(fh, source))

    return opener


class _Checked(io.RawIOBase):
    """A member's bytes; an archive that ends (or breaks) inside them is a typed error,
    as it is between members (`_tar`), not tarfile's ReadError."""

    def __init__(self, inner: IO[bytes], source: Path) -> None:
        super().__init__()
        self._inner, self._source = inner, source

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        import tarfile
        import zlib

        try:
            data = self._inner.read(len(buffer))
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise MalformedInput(
                f"{self._source}: not a readable archive (it breaks off inside a member: "
                f"{exc}); nothing was imported"
            ) from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()
