"""Verify before use: memory is a hint, not a source of truth for code.

`verify_citations` reads what an agent remembers (facts and their citations,
NOW/NOTES, CONTEXT and other memory files), finds claims about code, and checks
each against a codebase root:

    path/to/file.py      the file must exist (else: missing, or moved if a file of
                         that name exists elsewhere)
    file.py:123          line 123 must exist; if the same sentence names a symbol,
                         that line must still contain it
    symbol() / Cls.meth  the name must still occur in the code (defined or used)

`flag_stale(hits, findings)` marks recalled hits that carry such a claim: their
`explain["stale"]` lists what failed, so an agent sees the warning beside the
memory. `recall_verified` is search + verify + flag in one call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.errors import NotFound
from memstrata.search.query import SearchQuery
from memstrata.values import replace, value_type

if TYPE_CHECKING:
    from memstrata.search.query import Hit
    from memstrata.store.view import Store

CODE_SUFFIXES = (
    "py",
    "pyi",
    "js",
    "jsx",
    "ts",
    "tsx",
    "mjs",
    "go",
    "rs",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "rb",
    "php",
    "cs",
    "swift",
    "sh",
    "sql",
    "toml",
    "yaml",
    "yml",
    "json",
    "md",
    "cfg",
    "ini",
    "html",
    "css",
)
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".memstrata",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "dist",
        "build",
        ".tox",
    }
)
MAX_FILE_BYTES = 1024 * 1024
_EXT = "|".join(CODE_SUFFIXES)
_PATH = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXT}))(?::(\d+))?(?![\w/-])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)")
_METHOD = re.compile(rf"(?<![\w./])([A-Z]\w*)\.(?!(?:{_EXT})\b)([a-z_]\w*)\b(?![/(])")


@value_type(frozen=True)
class Finding:
    """One memory claim that no longer holds against the code."""

    source: str  # "fact:<key>" or the memory file's path relative to the store
    ref: str  # the claim as written: "src/a.py", "a.py:12", "parse()", "Store.open"
    problem: str  # missing | moved | beyond_eof | symbol_not_on_line | symbol_not_found
    detail: str
    uid: str | None = None  # index uid for facts
    path: str | None = None  # absolute path of the memory file, for files
    stale: bool = True


class CodeBase:
    """Lazy view of the files under a root: relative paths, lines and identifiers."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @cached_property
    def files(self) -> dict[str, Path]:
        out: dict[str, Path] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in filenames:
                p = Path(dirpath) / name
                out[p.relative_to(self.root).as_posix()] = p
        return out

    def text(self, rel: str) -> str:
        p = self.files[rel]
        if p.stat().st_size > MAX_FILE_BYTES:
            return ""
        return p.read_text(encoding="utf-8", errors="replace")

    @cached_property
    def identifiers(self) -> frozenset[str]:
        names: set[str] = set()
        for rel in self.files:
            if rel.rsplit(".", 1)[-1] in CODE_SUFFIXES:
                names.update(re.findall(r"[A-Za-z_]\w*", self.text(rel)))
        return frozenset(names)

    def find(self, ref: str) -> tuple[str | None, list[str]]:
        """(exact relative path if it exists, other files with the same name)."""
        clean = ref.lstrip("./")
        if clean in self.files:
            return clean, []
        base = clean.rsplit("/", 1)[-1]
        same = sorted(r for r in self.files if r.rsplit("/", 1)[-1] == base)
        if "/" not in clean and len(same) == 1:
            return same[0], []
        # a path cited from a sub-folder of the root ("layers/log.py" for src/x/layers/log.py)
        tails = [r for r in same if r.endswith("/" + clean)]
        return (tails[0], []) if len(tails) == 1 else (None, same)


def claims(text: str) -> list[tuple[str, str, int | None, list[str]]]:
    """(sentence, path or '', line, symbols) for each sentence citing code."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n", text):
        symbols = [m.group(0) for m in _CALL.finditer(sentence)]
        symbols += [f"{m.group(1)}.{m.group(2)}" for m in _METHOD.finditer(sentence)]
        paths = [
            (m.group(1), int(m.group(2)) if m.group(2) else None) for m in _PATH.finditer(sentence)
        ]
        for path, line in paths:
            out.append((sentence, path, line, symbols))
        if symbols and not paths:
            out.append((sentence, "", None, symbols))
    return out


def _check(
    code: CodeBase, text: str, source: str, uid: str | None, path: str | None
) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def add(ref: str, problem: str, detail: str) -> None:
        if (ref, problem) not in seen:
            seen.add((ref, problem))
            out.append(Finding(source, ref, problem, detail, uid, path))

    for _sentence, cited, line, symbols in claims(text):
        if cited:
            ref = f"{cited}:{line}" if line else cited
            rel, elsewhere = code.find(cited)
            if rel is None:
                if elsewhere:
                    add(
                        ref,
                        "moved",
                        f"{cited} not found; files of that name: {', '.join(elsewhere[:5])}",
                    )
                else:
                    add(ref, "missing", f"{cited} no longer exists under {code.root}")
                continue
            if line is not None:
                lines = code.text(rel).splitlines()
                if line > len(lines) or line < 1:
                    add(
                        ref,
                        "beyond_eof",
                        f"{rel} has {len(lines)} lines, the memory cites line {line}",
                    )
                    continue
                for sym in symbols:
                    last = sym.removesuffix("()").rsplit(".", 1)[-1]
                    if not re.search(rf"\b{re.escape(last)}\b", lines[line - 1]):
                        add(
                            ref,
                            "symbol_not_on_line",
                            f"line {line} of {rel} no longer mentions {sym}: {lines[line - 1].strip()[:120]!r}",
                        )
        for sym in symbols:
            missing = [p for p in sym.removesuffix("()").split(".") if p not in code.identifiers]
            if missing:
                add(
                    sym, "symbol_not_found", f"{'.'.join(missing)} occurs nowhere under {code.root}"
                )
    return out


def verify_citations(store: Store, agent: str, root: str | os.PathLike[str]) -> list[Finding]:
    """Check every code claim in `agent`'s facts and memory files against `root`."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise NotFound(f"codebase root {str(root)!r} is not a folder")
    code = CodeBase(base)
    mem = store.agent(agent)
    out: list[Finding] = []
    for fact in mem.facts.list():
        text = "\n".join([fact.value, *fact.citations])
        out += _check(code, text, f"fact:{fact.key}", f"fact:{agent}:{fact.key}", None)
    for info in mem.files.list():  # (through the truth: [] when there are no memory files)
        if info.is_dir or info.path == "LOG.md":
            continue
        p = mem.files.root / info.path
        out += _check(code, mem.files.read(info.path), store.rel(p), None, str(p))
    return out


def flag_stale(hits: Iterable[Hit], findings: Iterable[Finding]) -> list[Hit]:
    """Hits with `explain["stale"]` set when they carry a claim that failed verification."""
    by_uid: dict[str, list[Finding]] = {}
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.uid:
            by_uid.setdefault(f.uid, []).append(f)
        if f.path:
            by_path.setdefault(f.path, []).append(f)
    out = []
    for h in hits:
        bad = by_uid.get(h.uid, []) + [
            f for f in by_path.get(h.source, []) if f.ref.split(":")[0].removesuffix("()") in h.text
        ]
        if bad:
            warn = [f"{f.ref}: {f.problem} ({f.detail})" for f in bad]
            h = replace(h, explain={**h.explain, "stale": warn})
        out.append(h)
    return out


def recall_verified(
    store: Store, agent: str, query: str, root: str | os.PathLike[str], k: int = 10
) -> list[Hit]:
    """Search `agent`'s memory and flag hits whose code claims no longer hold."""

    hits = store.search(SearchQuery(text=query, agent=agent, k=k))
    return flag_stale(hits, verify_citations(store, agent, root))
