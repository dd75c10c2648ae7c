"""Knowledge extraction into `items.json` ("Extracted Knowledge").

`extract_items(store, root)` walks a project folder's Markdown and text files
(skipping `.git`, `.memstrata`, dependency folders, binaries and files over
1 MB), asks an extractor for typed items (entity, claim, task, decision, note)
and stores them keyed by the project and the file's path relative to `root`
(the design keeps `<project>/items.json`: one store serves several projects):
re-extracting a file replaces its items, never piles them up, and never touches
another project's items of the same path. The project is `project=` or, by
default, the root folder's name (two different folders of the same name are one
project unless told apart with `project=`). Each item keeps its project, source
file, line number and confidence.

The write rule "extracted knowledge is pipeline-only": this module is the
pipeline. Any agent that may read items (not a skill) may trigger it; the items it
stores come from the files and the extractor, never from the caller's text, and
agents have no other way to write them (`Items.replace_source` is for admins).

The extractor is the rule-based one unless `[llm] extractor` is configured or
one is passed. A provider failure for one file leaves that file's stored items
as they were; it is reported in `ExtractReport.errors` and the walk goes on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput, NotFound, ProviderError
from memstrata.files.paths import safe_join
from memstrata.lifecycle.providers import default_extractor, usage_delta, usage_snapshot
from memstrata.model import check_name, name_problem
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.llm.base import Extractor
    from memstrata.store.view import Store

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".txt", ".rst", ".org", ".adoc"})
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
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
MAX_FILE_BYTES = 1024 * 1024


@value_type
class ExtractReport:
    files_scanned: int = 0
    items_written: int = 0
    extracted: dict[str, int] = field(default_factory=dict)  # relpath -> items stored
    skipped: dict[str, str] = field(default_factory=dict)  # relpath -> why
    errors: dict[str, str] = field(default_factory=dict)  # relpath -> provider error
    usage: dict[str, int] | None = None


def project_id(root: Path) -> str:
    """The default project of a folder: its name, made a plain name ("My Docs" -> "My-Docs").

    Example:
        >>> project_id(Path("/src/billing-api"))
        'billing-api'
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.resolve().name).strip("-.")[:64].strip("-.")
    return name or "project"


def _candidates(root: Path, home: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS and (here / d).resolve() != home and name_problem(d) is None
        )
        out += [
            here / n
            for n in sorted(filenames)
            if Path(n).suffix.lower() in TEXT_SUFFIXES and name_problem(n) is None
        ]
    return out


def _read(path: Path) -> tuple[str | None, str]:
    """(text, '') or (None, why it is skipped)."""
    if path.is_symlink() or not path.is_file():
        return None, "not a regular file"
    if path.stat().st_size > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES} bytes"
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        return None, "binary"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "not UTF-8 text"


def extract_items(
    store: Store,
    root: str | os.PathLike[str],
    paths: Sequence[str] | None = None,
    extractor: Extractor | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    project: str | None = None,
) -> ExtractReport:
    """Extract items from the text files under `root` (or only `paths`, relative to it),
    as items of `project` (default: `project_id(root)`).

    Example:
        >>> report = extract_items(store, "docs")  # doctest: +SKIP
        >>> report.extracted  # {'Architecture.md': 4, ...}

    Raises:
        NotFound: `root` is not a folder. PathOutsideStore: a path leads outside it.
    """
    base = Path(root).resolve()
    if not base.is_dir():
        raise NotFound(f"extraction root {str(root)!r} is not a folder")
    store.gate.check("read", "item", None)  # skills get nothing; see the module docstring
    pid = check_name(project, "project") if project is not None else project_id(base)
    if paths is None:
        files = _candidates(base, store.home)
    else:
        if isinstance(paths, str) or not isinstance(paths, Sequence):
            raise MalformedInput("paths must be a list of paths relative to the root")
        files = [safe_join(base, p) for p in paths]
    chosen = extractor if extractor is not None else default_extractor(store)
    before = usage_snapshot(chosen)
    report = ExtractReport()
    for n, path in enumerate(files, start=1):
        if progress is not None:
            progress(n, len(files))
        rel = path.relative_to(base).as_posix()
        report.files_scanned += 1
        text, why = _read(path)
        if text is None:
            report.skipped[rel] = why
            continue
        try:
            drafts = chosen.extract(rel, text)
        except ProviderError as exc:
            report.errors[rel] = str(exc)
            continue
        stored = store.items._pipeline_replace(
            rel,
            [
                {
                    "type": d.type,
                    "title": d.title,
                    "content": d.content or d.title,
                    "lineNumber": d.line_number,
                    "confidence": d.confidence,
                }
                for d in drafts
            ],
            project=pid,
        )
        report.extracted[rel] = len(stored)
        report.items_written += len(stored)
    report.usage = usage_delta(before, chosen)
    return report
